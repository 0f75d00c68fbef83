package arena.contender;

import java.net.http.HttpClient;
import java.time.Duration;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.RestClient;

/** The one blocking HTTP client that every /data/{id} request shares. */
@Configuration(proxyBeanMethods = false)
class Downstream {

    static final Duration TIMEOUT = Duration.ofSeconds(2);

    @Bean
    RestClient downstreamClient(RestClient.Builder builder,
            @Value("${DOWNSTREAM_URL:http://127.0.0.1:${server.port}}") String baseUrl) {
        // A single JDK HttpClient keeps a pool of keep-alive connections. Pinned to HTTP/1.1 so
        // that each new connection skips the h2c upgrade attempt (the downstreams speak HTTP/1.1).
        HttpClient http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(TIMEOUT)
                .build();
        JdkClientHttpRequestFactory factory = new JdkClientHttpRequestFactory(http);
        factory.setReadTimeout(TIMEOUT);
        // Boot's builder brings its message converters, so JSON uses Boot's ObjectMapper.
        return builder.requestFactory(factory).baseUrl(baseUrl).build();
    }
}
