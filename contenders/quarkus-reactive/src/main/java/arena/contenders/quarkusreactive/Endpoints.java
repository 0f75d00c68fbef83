package arena.contenders.quarkusreactive;

import java.util.Arrays;

import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import org.eclipse.microprofile.rest.client.inject.RestClient;

import arena.contenders.quarkuscommon.Data;
import arena.contenders.quarkuscommon.Database;
import arena.contenders.quarkuscommon.Downstream;
import arena.contenders.quarkuscommon.Json;
import arena.contenders.quarkuscommon.Params;
import arena.contenders.quarkuscommon.StreamStats;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;

/**
 * The contract's HTTP paths. Every method returns a Uni, which Quarkus REST runs on the Vert.x
 * event loop that read the request: nothing here blocks. /delayed and /sleep wait on a Vert.x
 * timer on that loop, /data/{id} on the non-blocking REST client, /db on the reactive pool.
 */
@Path("/")
@Produces(MediaType.TEXT_PLAIN)
public class Endpoints {

    @Inject
    Vertx vertx;

    @Inject
    @RestClient
    DownstreamClient downstream;

    @Inject
    Pool pool;

    @Inject
    StreamStats stats;

    @GET
    @Path("actuator/health/liveness")
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<String> liveness() {
        return Uni.createFrom().item(Json.UP);
    }

    @GET
    @Path("actuator/health/readiness")
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<String> readiness() {
        return Uni.createFrom().item(Json.UP);
    }

    @GET
    @Path("instant")
    public Uni<String> instant() {
        return Uni.createFrom().item("INSTANT");
    }

    @GET
    @Path("delayed")
    public Uni<String> delayed(HttpServerRequest request) {
        return after(Params.millis(Params.ms(request), 10_000), "DELAYED");
    }

    @GET
    @Path("sleep")
    public Uni<String> sleep(HttpServerRequest request) {
        return after(Params.millis(Params.ms(request), 100), "SLEPT");
    }

    @GET
    @Path("data/{id}")
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<Data> data(@PathParam("id") String id) {
        return downstream.data(Params.id(id)).onFailure().transform(Downstream::failure);
    }

    @GET
    @Path("db/{id}")
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<Data> db(@PathParam("id") String raw) {
        int id = Params.id(raw);
        Database.requireUrl();
        return pool.preparedQuery(Database.ROW_PG).execute(Tuple.of(id))
                .onItem().transform(rows -> row(rows, id))
                .onFailure().transform(Database::failure);
    }

    @GET
    @Path("db/slow")
    public Uni<String> dbSlow(HttpServerRequest request) {
        long ms = Params.requiredMillis(Params.ms(request));
        Database.requireUrl();
        return pool.preparedQuery(Database.SLEEP_PG).execute(Tuple.of(Database.seconds(ms)))
                .onItem().transform(rows -> "SLEPT")
                .onFailure().transform(Database::failure);
    }

    @GET
    @Path("stream/stats")
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<String> streamStats() {
        return Uni.createFrom().item(stats.json());
    }

    private static Data row(RowSet<Row> rows, int id) {
        if (rows.size() == 0) {
            throw Database.noRow(id);
        }
        Row r = rows.iterator().next();
        return new Data(r.getInteger(0), r.getString(1), r.getBoolean(2), Arrays.asList(r.getArrayOfStrings(3)));
    }

    /**
     * {@code body} after {@code ms} on a Vert.x timer of the request's event loop, cancelled if
     * the request goes away first; 0 answers at once (Vert.x refuses timers under 1 ms).
     */
    private Uni<String> after(long ms, String body) {
        if (ms == 0) {
            return Uni.createFrom().item(body);
        }
        return Uni.createFrom().emitter(em -> {
            long timer = vertx.setTimer(ms, t -> em.complete(body));
            em.onTermination(() -> vertx.cancelTimer(timer));
        });
    }
}
