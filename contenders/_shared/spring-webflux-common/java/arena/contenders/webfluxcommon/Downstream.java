package arena.contenders.webfluxcommon;

import java.time.Duration;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.core.codec.CodecException;
import org.springframework.http.HttpStatus;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.server.ResponseStatusException;

import io.netty.channel.ChannelOption;
import io.netty.channel.ConnectTimeoutException;
import io.netty.handler.timeout.ReadTimeoutException;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

/**
 * Study 002's fetch for /data/{id}: the downstream JSON through the one shared, non-blocking
 * WebClient, decoded into {@link Data}. Each contender's endpoint (an annotated controller, a
 * handler function) only binds {id} and answers with the record, so the two differ in nothing
 * else.
 */
@Component
public class Downstream {

    static final Duration TIMEOUT = Duration.ofSeconds(2);

    private final WebClient client;

    /**
     * Built from Boot's WebClient.Builder so it keeps Boot's Jackson codecs. Reactor Netty's
     * HttpClient pools keep-alive connections by default, on the same event loops as the server;
     * the contract's 2-s limit is set as the connect timeout and the response timeout.
     */
    public Downstream(WebClient.Builder builder, @Value("${arena.downstream-url}") String downstreamUrl) {
        HttpClient http = HttpClient.create()
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) TIMEOUT.toMillis())
                .responseTimeout(TIMEOUT);
        this.client = builder
                .baseUrl(downstreamUrl.replaceAll("/+$", ""))
                .clientConnector(new ReactorClientHttpConnector(http))
                .build();
    }

    /**
     * data{id}.json as a {@link Data}, or a ResponseStatusException: 404 when the downstream has
     * none, 502 for anything else that goes wrong (another non-2xx, a refused connection, a
     * timeout, a body that does not decode or is empty).
     */
    public Mono<Data> data(int id) {
        return client.get()
                .uri("/resources/data{id}.json", id)
                .retrieve()
                // The contract passes a downstream 404 through; any other non-2xx (3xx included,
                // which retrieve() would otherwise try to decode) is a failed downstream.
                .onStatus(status -> status.value() == 404, response -> response.releaseBody()
                        .then(Mono.error(new ResponseStatusException(HttpStatus.NOT_FOUND,
                                "downstream has no data" + id + ".json"))))
                .onStatus(status -> !status.is2xxSuccessful(), response -> response.releaseBody()
                        .then(Mono.error(new ResponseStatusException(HttpStatus.BAD_GATEWAY,
                                "downstream answered " + response.statusCode().value()))))
                .bodyToMono(Data.class)
                // No record to encode: an empty 200 is a failed downstream too, not an empty answer.
                .switchIfEmpty(Mono.error(() -> new ResponseStatusException(HttpStatus.BAD_GATEWAY,
                        "downstream sent no body")))
                // Refused connection, timeout, undecodable body: all mean the downstream failed.
                .onErrorMap(e -> !(e instanceof ResponseStatusException),
                        e -> new ResponseStatusException(HttpStatus.BAD_GATEWAY,
                                "downstream failed: " + describe(e), e));
    }

    /** A short reason for the 502 body, without a stack of wrapper exceptions. */
    private static String describe(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof ReadTimeoutException) {
                return "no answer within " + TIMEOUT.toSeconds() + " s";
            }
            if (t instanceof ConnectTimeoutException) {
                return "no connection within " + TIMEOUT.toSeconds() + " s";
            }
            if (t instanceof CodecException) {
                return "body is not a Data record";
            }
            if (t.getCause() == null) {
                String message = t.getMessage();
                return message == null || message.isBlank() ? t.getClass().getSimpleName() : message;
            }
        }
        return e.getClass().getSimpleName();
    }
}
