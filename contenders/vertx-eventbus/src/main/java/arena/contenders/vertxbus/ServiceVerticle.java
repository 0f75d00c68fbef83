package arena.contenders.vertxbus;

import io.vertx.core.AbstractVerticle;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.ext.web.handler.HttpException;

import arena.contenders.vertxcommon.Downstream;
import arena.contenders.vertxdb.Database;

/**
 * Does the work behind /instant, /delayed, /sleep, /data/{id} and /db: consumers on the local
 * EventBus that wait with {@code vertx.setTimer}, call the downstream with the non-blocking
 * WebClient, query PostgreSQL with the reactive client's shared pool, build the reply and send it
 * back. It also runs /stream's generators ({@link StreamService}). Deployed once per event loop; the EventBus spreads the
 * requests over the instances round-robin.
 */
public class ServiceVerticle extends AbstractVerticle {

    /** Vert.x's default HTTP/1 pool per client, kept for each instance of the shared client. */
    static final int POOL_PER_INSTANCE = new WebClientOptions().getMaxPoolSize();

    private Downstream downstream;
    private WebClient client;
    private Database database;

    @Override
    public void start() {
        downstream = Downstream.parse(config().getString("downstream"));
        // The EventBus hands successive requests to different instances, so the instances share
        // one client (Vert.x's shared client, by name): its keep-alive connections are reused
        // whichever instance gets the request. Its pool is as large as the instances' pools
        // would be together (the vertx sibling has one default-sized client per instance).
        client = WebClient.create(vertx, new WebClientOptions()
                .setShared(true)
                .setName("arena-downstream")
                .setMaxPoolSize(POOL_PER_INSTANCE * config().getInteger("instances"))
                .setKeepAlive(true)
                .setConnectTimeout(Downstream.TIMEOUT_MS));

        // A lease on the one shared pool (DB_POOL connections for the whole server), as in vertx:
        // every instance queries the same pool whichever gets the request. No connection yet.
        database = Database.create(vertx, config().getJsonObject("db"));

        // On the local (non-clustered) bus a consumer is registered as soon as it is created.
        EventBus bus = vertx.eventBus();
        bus.<Void>consumer(Addresses.INSTANT, msg -> msg.reply("INSTANT"));
        bus.<JsonObject>consumer(Addresses.DELAYED, msg -> replyAfter(msg, "DELAYED"));
        bus.<JsonObject>consumer(Addresses.SLEEP, msg -> replyAfter(msg, "SLEPT"));
        bus.<JsonObject>consumer(Addresses.DATA, this::data);
        bus.<JsonObject>consumer(Addresses.DB, this::db);
        bus.<JsonObject>consumer(Addresses.DB_SLOW, this::dbSlow);
        // Study 003's /stream generators, on this instance's event loop.
        StreamService streams = new StreamService(vertx);
        bus.<JsonObject>consumer(Addresses.STREAM_OPEN, streams::open);
        bus.<Void>consumer(Addresses.STREAM_STATS, streams::stats);
    }

    /** A timer on this verticle's event loop; the HTTP verticle has already checked ms. */
    private void replyAfter(Message<JsonObject> msg, String body) {
        long ms = msg.body().getLong("ms");
        if (ms == 0) {
            msg.reply(body); // setTimer refuses delays under 1 ms
            return;
        }
        vertx.setTimer(ms, id -> msg.reply(body));
    }

    /** /data/{id} (study 002): the shared fetch and decode, encoded back as the reply. */
    private void data(Message<JsonObject> msg) {
        downstream.fetch(client, msg.body().getInteger("id"))
                .onSuccess(data -> msg.reply(Json.encodeToBuffer(data))) // Vert.x's Json codec (Jackson)
                .onFailure(e -> fail(msg, e)); // 404 or 502
    }

    /** /db/{id}: the shared pooled query, its row encoded as /data/{id} encodes its record. */
    private void db(Message<JsonObject> msg) {
        database.find(msg.body().getInteger("id"))
                .onSuccess(data -> msg.reply(Json.encodeToBuffer(data))) // Vert.x's Json codec (Jackson)
                .onFailure(e -> fail(msg, e)); // 404 or 502
    }

    /** /db/slow: pg_sleep on one pooled connection; the HTTP verticle has already checked ms. */
    private void dbSlow(Message<JsonObject> msg) {
        database.sleep(msg.body().getLong("ms"))
                .onSuccess(v -> msg.reply("SLEPT"))
                .onFailure(e -> fail(msg, e)); // 502
    }

    /** A failed request: an HttpException's status is the failure code, anything else a 500. */
    private static void fail(Message<?> msg, Throwable e) {
        if (e instanceof HttpException http) {
            msg.fail(http.getStatusCode(), http.getPayload());
        } else {
            msg.fail(500, String.valueOf(e));
        }
    }
}
