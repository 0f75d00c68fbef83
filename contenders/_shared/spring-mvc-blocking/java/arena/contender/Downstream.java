package arena.contender;

import java.net.http.HttpClient;
import java.time.Duration;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.RestClient;

/** The one blocking HTTP client /data/{id} calls through. */
@Configuration(proxyBeanMethods = false)
class Downstream {

    static final Duration TIMEOUT = Duration.ofSeconds(2);

    @Bean
    RestClient downstreamClient(RestClient.Builder builder,
            @Value("${DOWNSTREAM_URL:http://${server.address}:${server.port}}") String baseUrl) {
        // One shared JDK client: it pools keep-alive connections. HTTP/1.1 because the default
        // (HTTP/2) offers an h2c upgrade with every request to a server that speaks HTTP/1.1 only
        // (baselines/spring-mvc-data runs on that default).
        HttpClient http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(TIMEOUT)
                .build();
        JdkClientHttpRequestFactory factory = new JdkClientHttpRequestFactory(http);
        factory.setReadTimeout(TIMEOUT);
        // Boot's builder carries its message converters, so JSON goes through Boot's ObjectMapper.
        return builder.requestFactory(factory).baseUrl(baseUrl).build();
    }
}
