package arena.contenders.vertx;

import io.vertx.core.AbstractVerticle;
import io.vertx.core.Promise;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;

import arena.contenders.vertxcommon.Downstream;
import arena.contenders.vertxcommon.Http;
import arena.contenders.vertxdb.Database;

/**
 * The whole server, deployed once per event loop. Every handler runs on this verticle's event
 * loop and never blocks it: waits are {@code vertx.setTimer}, the downstream call is the
 * non-blocking {@link WebClient}, /db the reactive PostgreSQL client's pool (the shared
 * {@link Database}, one pool for all instances). The plumbing (probes, static resources, JSON errors, the
 * checks) is the shared {@link Http}, the very code of vertx-eventbus.
 */
public class HttpVerticle extends AbstractVerticle {

    private Downstream downstream;
    private WebClient client;
    private Database database;

    @Override
    public void start(Promise<Void> started) {
        downstream = Downstream.parse(config().getString("downstream"));
        // One client per verticle, so its pooled keep-alive connections live on this event loop.
        client = WebClient.create(vertx, new WebClientOptions()
                .setKeepAlive(true)
                .setConnectTimeout(Downstream.TIMEOUT_MS));
        // A lease on the one shared pool (DB_POOL connections for the whole server); no connection yet.
        database = Database.create(vertx, config().getJsonObject("db"));

        Router router = Router.router(vertx);
        router.get("/instant").handler(ctx -> text(ctx.response(), "INSTANT"));
        router.get("/delayed").handler(ctx -> waitThenAnswer(ctx, 10_000, "DELAYED"));
        router.get("/sleep").handler(ctx -> waitThenAnswer(ctx, 100, "SLEPT"));
        router.get("/data/:id").handler(this::data);
        // /db (arena's own study): /db/slow before /db/:id, which would take "slow" for an id.
        router.get("/db/slow").handler(this::dbSlow);
        router.get("/db/:id").handler(this::db);
        // Study 000's chat: the WebSocket handshake on the same server, through the Router.
        router.get("/chat").handler(new LocalMapChat(vertx)::upgrade);
        // Study 003's stream: a generator per WebSocket, on that socket's event loop.
        Stream stream = new Stream(vertx, config().getBoolean("backpressure"));
        router.get("/stream").handler(stream::upgrade);
        router.get("/stream/stats").handler(stream::stats);
        Http.plumbing(router, "vertx");

        Http.listen(vertx, router, config().getString("host"), config().getInteger("port")).onComplete(started);
    }

    private static void text(HttpServerResponse response, String body) {
        if (!response.closed()) {
            response.putHeader(HttpHeaders.CONTENT_TYPE, "text/plain").end(body);
        }
    }

    /** /delayed and /sleep: a timer on this event loop, cancelled if the client goes away. */
    private void waitThenAnswer(RoutingContext ctx, long dflt, String body) {
        long ms = Http.millis(ctx.queryParam("ms"), dflt);
        HttpServerResponse response = ctx.response();
        if (ms == 0) {
            text(response, body); // setTimer refuses delays under 1 ms
            return;
        }
        long timer = vertx.setTimer(ms, id -> text(response, body));
        response.closeHandler(v -> vertx.cancelTimer(timer));
    }

    /** /data/{id} (study 002): the shared fetch and decode, encoded back here. */
    private void data(RoutingContext ctx) {
        downstream.fetch(client, Http.id(ctx))
                .onSuccess(data -> {
                    if (!ctx.response().closed()) {
                        ctx.json(data); // Vert.x's Json codec (Jackson), as application/json
                    }
                })
                .onFailure(ctx::fail); // an HttpException: 404 or 502
    }

    /** /db/{id}: the shared pooled query, its row encoded here as /data/{id} encodes its record. */
    private void db(RoutingContext ctx) {
        database.find(Http.id(ctx))
                .onSuccess(data -> {
                    if (!ctx.response().closed()) {
                        ctx.json(data); // Vert.x's Json codec (Jackson), as application/json
                    }
                })
                .onFailure(ctx::fail); // an HttpException: 404 or 502
    }

    /** /db/slow?ms=N (ms required): pg_sleep on one pooled connection, then SLEPT. */
    private void dbSlow(RoutingContext ctx) {
        database.sleep(Http.requiredMillis(ctx.queryParam("ms")))
                .onSuccess(v -> text(ctx.response(), "SLEPT"))
                .onFailure(ctx::fail); // an HttpException: 502
    }
}
