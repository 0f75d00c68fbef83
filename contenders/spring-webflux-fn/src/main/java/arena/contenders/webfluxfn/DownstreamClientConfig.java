package arena.contenders.webfluxfn;

import java.time.Duration;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;

import io.netty.channel.ChannelOption;
import reactor.netty.http.client.HttpClient;

/** The one WebClient that every /data/{id} request shares. */
@Configuration(proxyBeanMethods = false)
public class DownstreamClientConfig {

    static final Duration TIMEOUT = Duration.ofSeconds(2);

    /**
     * Built from Boot's WebClient.Builder, so it has Boot's Jackson codecs. Reactor Netty's
     * HttpClient keeps a pool of keep-alive connections by default and runs on the server's own
     * event loops; the contract's 2-s limit is both the connect and the response timeout.
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
