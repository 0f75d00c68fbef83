package arena.contenders.webflux;

import java.time.Duration;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;

import io.netty.channel.ChannelOption;
import reactor.netty.http.client.HttpClient;

/** The one WebClient that /data/{id} shares for every request. */
@Configuration(proxyBeanMethods = false)
public class DownstreamClientConfig {

    static final Duration TIMEOUT = Duration.ofSeconds(2);

    /**
     * Built from Boot's WebClient.Builder so it keeps Boot's Jackson codecs. Reactor Netty's
     * HttpClient pools keep-alive connections by default, on the same event loops as the server;
     * the contract's 2-s limit is set as the connect timeout and the response timeout.
     */
    @Bean
    WebClient downstreamClient(WebClient.Builder builder,
                               @Value("${arena.downstream-url}") String downstreamUrl) {
        HttpClient http = HttpClient.create()
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) TIMEOUT.toMillis())
                .responseTimeout(TIMEOUT);
        return builder
                .baseUrl(downstreamUrl.replaceAll("/+$", ""))
                .clientConnector(new ReactorClientHttpConnector(http))
                .build();
    }
}
