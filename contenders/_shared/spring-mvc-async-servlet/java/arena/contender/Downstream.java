package arena.contender;

import java.net.http.HttpClient;
import java.time.Duration;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The one non-blocking HTTP client /data/{id} calls through. */
@Configuration(proxyBeanMethods = false)
class Downstream {

    static final Duration TIMEOUT = Duration.ofSeconds(2);

    @Bean
    HttpClient downstreamClient() {
        // One shared JDK client: it pools keep-alive connections. HTTP/1.1 so it does not try an
        // h2c upgrade on every new connection to a server that only speaks HTTP/1.1.
        return HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(TIMEOUT)
                .build();
    }
}
