package arena.contenders.webfluxfn;

import org.springframework.core.codec.CodecException;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.ResponseStatusException;

import io.netty.channel.ConnectTimeoutException;
import io.netty.handler.timeout.ReadTimeoutException;
import reactor.core.publisher.Mono;

/**
 * The handler function for /data/{id} (study 002): fetch the downstream JSON with the shared,
 * non-blocking WebClient, decode it into {@link Data}, and answer with the record encoded again.
 */
@Component
public class DataHandler {

    private final WebClient downstream;

    public DataHandler(WebClient downstream) {
        this.downstream = downstream;
    }

    public Mono<ServerResponse> data(ServerRequest request) {
        String raw = request.pathVariable("id");
        int id;
        try {
            id = Integer.parseInt(raw);
        } catch (NumberFormatException e) {
            return Mono.error(new ResponseStatusException(HttpStatus.BAD_REQUEST,
                    "id must be an integer, got '" + raw + "'"));
        }
        return downstream.get()
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
                .switchIfEmpty(Mono.error(() -> new ResponseStatusException(HttpStatus.BAD_GATEWAY,
                        "downstream sent no body")))
                // Refused connection, timeout, undecodable body: all mean the downstream failed.
                .onErrorMap(e -> !(e instanceof ResponseStatusException),
                        e -> new ResponseStatusException(HttpStatus.BAD_GATEWAY,
                                "downstream failed: " + describe(e), e))
                .flatMap(data -> ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).bodyValue(data));
    }

    /** A short reason for the 502 body, without a stack of wrapper exceptions. */
    private static String describe(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof ReadTimeoutException) {
                return "no answer within " + DownstreamClientConfig.TIMEOUT.toSeconds() + " s";
            }
            if (t instanceof ConnectTimeoutException) {
                return "no connection within " + DownstreamClientConfig.TIMEOUT.toSeconds() + " s";
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
