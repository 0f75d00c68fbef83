package arena.contenders.webfluxfn;

import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.ResponseStatusException;

import arena.contenders.webfluxcommon.Millis;
import arena.contenders.webfluxdb.Db;

import reactor.core.publisher.Mono;

/**
 * The handler functions for /db/{id} and /db/slow (arena's database study): {id} and ?ms parsed
 * here, the shared {@link Db} runs the query on the R2DBC pool without blocking, and the answer
 * encodes the record as /data/{id}'s does.
 */
@Component
public class DbHandler {

    private final Db db;

    public DbHandler(Db db) {
        this.db = db;
    }

    public Mono<ServerResponse> row(ServerRequest request) {
        int id;
        try {
            id = DataHandler.id(request);
        } catch (ResponseStatusException e) {
            return Mono.error(e);
        }
        return db.row(id)
                .flatMap(data -> ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).bodyValue(data));
    }

    public Mono<ServerResponse> slow(ServerRequest request) {
        long ms;
        try {
            ms = Millis.required(request.queryParam("ms").orElse(null));
        } catch (ResponseStatusException e) {
            return Mono.error(e);
        }
        return db.sleep(ms).then(ServerResponse.ok().contentType(MediaType.TEXT_PLAIN).bodyValue("SLEPT"));
    }
}
