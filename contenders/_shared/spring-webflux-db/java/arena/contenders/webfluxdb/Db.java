package arena.contenders.webfluxdb;

import java.util.Arrays;

import org.springframework.http.HttpStatus;
import org.springframework.lang.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.web.server.ResponseStatusException;

import arena.contenders.webfluxcommon.Data;

import io.r2dbc.spi.R2dbcException;
import io.r2dbc.spi.Readable;
import reactor.core.publisher.Mono;

/**
 * What /db runs, the same for both WebFlux contenders: each contender's endpoint (an annotated
 * controller, a handler function) only binds {id} or ?ms and answers with what this gives.
 *
 * <p>Nothing here blocks: {@link DatabaseClient} takes a connection from the pool (or waits in its
 * queue, up to 30 s), sends the statement on the connection's event loop and emits the row when
 * the database answers, on that loop; the request's thread is free meanwhile. Failures are a
 * {@link ResponseStatusException}: 404 when there is no row, 502 when the database fails, is
 * down, or gives no connection within 30 s.
 */
public class Db {

    /** A parameterised query: r2dbc-postgresql prepares it once per connection and reuses it. */
    static final String ROW = "SELECT id, value, active, props FROM data WHERE id = $1";

    /** pg_sleep takes seconds as a double precision. */
    static final String SLEEP = "SELECT pg_sleep($1)";

    @Nullable
    private final DatabaseClient client;

    Db(@Nullable DatabaseClient client) {
        this.client = client;
    }

    /** Row {@code id} as study 002's record, a 404 when there is none, a 502 when the database fails. */
    public Mono<Data> row(int id) {
        if (client == null) {
            return notConfigured();
        }
        return client.sql(ROW)
                .bind(0, id)
                .map(Db::data)
                .one()
                .switchIfEmpty(Mono.error(() -> new ResponseStatusException(HttpStatus.NOT_FOUND,
                        "no row with id " + id)))
                .onErrorMap(e -> !(e instanceof ResponseStatusException), Db::failed);
    }

    /** {@code SELECT pg_sleep(ms / 1000.0)}, holding one pooled connection for that long. */
    public Mono<Void> sleep(long ms) {
        if (client == null) {
            return notConfigured();
        }
        return client.sql(SLEEP)
                .bind(0, ms / 1000.0)
                .then()
                .onErrorMap(Db::failed);
    }

    /** The row decoded into the record /data/{id} uses; props, a text[], arrives as a String[]. */
    private static Data data(Readable row) {
        String[] props = row.get("props", String[].class);
        return new Data(row.get("id", Integer.class), row.get("value", String.class),
                row.get("active", Boolean.class), props == null ? null : Arrays.asList(props));
    }

    private static <T> Mono<T> notConfigured() {
        return Mono.error(() -> new ResponseStatusException(HttpStatus.BAD_GATEWAY, "no database: DB_URL is not set"));
    }

    private static ResponseStatusException failed(Throwable e) {
        return new ResponseStatusException(HttpStatus.BAD_GATEWAY, "database failed: " + describe(e), e);
    }

    /**
     * A short reason for the 502 body: the driver's or the pool's own message (e.g. "Cannot
     * connect to localhost/127.0.0.1:5432", "Connection acquisition timed out after 30000ms"),
     * without Spring's wrapper ("Failed to obtain R2DBC Connection") or Reactor's timeout text.
     */
    private static String describe(Throwable e) {
        String last = null;
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String message = t.getMessage();
            if (t instanceof R2dbcException && message != null && !message.isBlank()) {
                return message;
            }
            if (message != null && !message.isBlank()) {
                last = message;
            }
        }
        return last != null ? last : e.getClass().getSimpleName();
    }
}
