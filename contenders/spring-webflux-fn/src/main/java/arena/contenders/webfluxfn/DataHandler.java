package arena.contenders.webfluxfn;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.ResponseStatusException;

import arena.contenders.webfluxcommon.Downstream;

import reactor.core.publisher.Mono;

/**
 * The handler function for /data/{id} (study 002): {id} parsed here (no binding does it), the
 * shared {@link Downstream} fetches and decodes the record, and the answer encodes it again.
 */
@Component
public class DataHandler {

    private final Downstream downstream;

    public DataHandler(Downstream downstream) {
        this.downstream = downstream;
    }

    public Mono<ServerResponse> data(ServerRequest request) {
        int id;
        try {
            id = id(request);
        } catch (ResponseStatusException e) {
            return Mono.error(e);
        }
        return downstream.data(id)
                .flatMap(data -> ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).bodyValue(data));
    }

    /**
     * The {id} path variable as an int (of /data/{id} and /db/{id}), or a 400 when it is not an
     * integer or lies beyond 32 bits.
     */
    static int id(ServerRequest request) {
        String raw = request.pathVariable("id");
        try {
            return Integer.parseInt(raw);
        } catch (NumberFormatException e) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "id must be an integer, got '" + raw + "'");
        }
    }
}
