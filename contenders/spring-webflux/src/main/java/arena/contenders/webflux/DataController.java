package arena.contenders.webflux;

import org.springframework.core.codec.CodecException;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.server.ResponseStatusException;

import io.netty.channel.ConnectTimeoutException;
import io.netty.handler.timeout.ReadTimeoutException;
import reactor.core.publisher.Mono;

/**
 * /data/{id} (study 002's annotated controller): fetch the downstream JSON with the shared,
 * non-blocking WebClient, decode it into {@link Data}, and let Spring encode the record.
 */
@RestController
public class DataController {

    private final WebClient downstream;

    public DataController(WebClient downstream) {
        this.downstream = downstream;
    }

    // A non-integer {id} fails binding with a ServerWebInputException, which JsonErrorHandler
    // turns into a 400.
    @GetMapping(path = "/data/{id}", produces = MediaType.APPLICATION_JSON_VALUE)
    public Mono<Data> data(@PathVariable("id") int id) {
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
                // Refused connection, timeout, undecodable body: all mean the downstream failed.
                .onErrorMap(e -> !(e instanceof ResponseStatusException),
                        e -> new ResponseStatusException(HttpStatus.BAD_GATEWAY,
                                "downstream failed: " + describe(e), e));
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
