package arena.contenders.vertxbus;

import io.vertx.core.AbstractVerticle;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.HttpException;

import arena.contenders.vertxcommon.Http;
import arena.contenders.vertxdb.Database;

/**
 * The HTTP side, deployed once per event loop. It only reads the request, sends it over the
 * EventBus to the {@link ServiceVerticle}s and writes their reply; it waits for and calls nothing
 * itself. The probes and the static resources are answered here, as HTTP plumbing (the shared
 * {@link Http}, the very code of vertx).
 */
public class HttpVerticle extends AbstractVerticle {

    /**
     * The send timeout of /db requests beyond any ms: a request may wait the pool's 30 s for a
     * connection before its query runs, so the bus's own 30 s would answer 503 before the pool's
     * 502; this leaves the pool's timeout the one that answers.
     */
    static final long DB_TIMEOUT_MS = Database.ACQUIRE_TIMEOUT_S * 1_000L + DeliveryOptions.DEFAULT_TIMEOUT;

    private EventBus bus;

    @Override
    public void start(Promise<Void> started) {
        bus = vertx.eventBus();

        Router router = Router.router(vertx);
        router.get("/instant").handler(ctx -> ask(ctx, Addresses.INSTANT, null, new DeliveryOptions(), "text/plain"));
        router.get("/delayed").handler(ctx -> askToWait(ctx, Addresses.DELAYED, 10_000));
        router.get("/sleep").handler(ctx -> askToWait(ctx, Addresses.SLEEP, 100));
        router.get("/data/:id").handler(this::data);
        // /db (arena's own study): /db/slow before /db/:id, which would take "slow" for an id.
        router.get("/db/slow").handler(this::dbSlow);
        router.get("/db/:id").handler(this::db);
        // Study 000's chat: the WebSocket handshake on the same server, through the Router.
        router.get("/chat").handler(new EventBusChat(vertx)::upgrade);
        // Study 003's stream: the WebSocket here, its generator on a service verticle (StreamService).
        Stream stream = new Stream(vertx, config().getBoolean("backpressure"));
        router.get("/stream").handler(stream::upgrade);
        router.get("/stream/stats").handler(ctx -> ask(ctx, Addresses.STREAM_STATS, null, new DeliveryOptions(), "application/json"));
        Http.plumbing(router, "vertx-eventbus");

        Http.listen(vertx, router, config().getString("host"), config().getInteger("port")).onComplete(started);
    }

    /** /delayed and /sleep: the service verticle holds the timer, this side only the request. */
    private void askToWait(RoutingContext ctx, String address, long dflt) {
        long ms = Http.millis(ctx.queryParam("ms"), dflt);
        // The bus's default reply timeout (30 s) is shorter than the longest wait (60 s).
        DeliveryOptions options = new DeliveryOptions().setSendTimeout(ms + DeliveryOptions.DEFAULT_TIMEOUT);
        ask(ctx, address, new JsonObject().put("ms", ms), options, "text/plain");
    }

    /** /data/{id}: the service fetches, decodes and encodes; the reply is the JSON body. */
    private void data(RoutingContext ctx) {
        ask(ctx, Addresses.DATA, new JsonObject().put("id", Http.id(ctx)), new DeliveryOptions(), "application/json");
    }

    /** /db/{id}: the service queries the shared pool and encodes the row; the reply is the JSON body. */
    private void db(RoutingContext ctx) {
        ask(ctx, Addresses.DB, new JsonObject().put("id", Http.id(ctx)),
                new DeliveryOptions().setSendTimeout(DB_TIMEOUT_MS), "application/json");
    }

    /** /db/slow?ms=N (ms required): the service holds a pooled connection in pg_sleep, then replies SLEPT. */
    private void dbSlow(RoutingContext ctx) {
        long ms = Http.requiredMillis(ctx.queryParam("ms"));
        ask(ctx, Addresses.DB_SLOW, new JsonObject().put("ms", ms),
                new DeliveryOptions().setSendTimeout(ms + DB_TIMEOUT_MS), "text/plain");
    }

    /**
     * Sends one request over the EventBus and writes the reply as the response body. A service's
     * failure code is the HTTP status; a bus failure (no consumer, no reply in time) is a 503.
     */
    private <T> void ask(RoutingContext ctx, String address, Object body, DeliveryOptions options, String contentType) {
        bus.<T>request(address, body, options)
                .onSuccess(reply -> write(ctx.response(), reply, contentType))
                .onFailure(e -> ctx.fail(e instanceof ReplyException reply && reply.failureType() == ReplyFailure.RECIPIENT_FAILURE
                        ? new HttpException(reply.failureCode(), reply.getMessage())
                        : new HttpException(503, "event bus: " + e.getMessage())));
    }

    private static <T> void write(HttpServerResponse response, Message<T> reply, String contentType) {
        if (response.closed()) {
            return; // the client went away while the service worked
        }
        response.putHeader(HttpHeaders.CONTENT_TYPE, contentType);
        if (reply.body() instanceof Buffer buffer) {
            response.end(buffer);
        } else {
            response.end(String.valueOf(reply.body()));
        }
    }
}
