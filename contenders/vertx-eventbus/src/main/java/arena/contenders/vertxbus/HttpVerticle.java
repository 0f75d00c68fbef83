package arena.contenders.vertxbus;

import java.util.List;

import io.vertx.core.AbstractVerticle;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.HttpException;
import io.vertx.ext.web.handler.StaticHandler;

/**
 * The HTTP side, deployed once per event loop. It only reads the request, sends it over the
 * EventBus to the {@link ServiceVerticle}s and writes their reply; it waits for and calls nothing
 * itself. The probes and the static resources are answered here, as HTTP plumbing.
 */
public class HttpVerticle extends AbstractVerticle {

    static final long MAX_MS = 60_000;

    private static final Buffer UP = new JsonObject().put("status", "UP").toBuffer();

    private EventBus bus;

    @Override
    public void start(Promise<Void> started) {
        bus = vertx.eventBus();

        Router router = Router.router(vertx);
        router.get("/actuator/health/liveness").handler(this::up);
        router.get("/actuator/health/readiness").handler(this::up);
        router.get("/instant").handler(ctx -> ask(ctx, Addresses.INSTANT, null, new DeliveryOptions(), "text/plain"));
        router.get("/delayed").handler(ctx -> askToWait(ctx, Addresses.DELAYED, 10_000));
        router.get("/sleep").handler(ctx -> askToWait(ctx, Addresses.SLEEP, 100));
        router.get("/data/:id").handler(this::data);
        // Study 000's chat: the WebSocket handshake on the same server, through the Router.
        Chat chat = new Chat(vertx);
        router.get("/chat").handler(ctx -> upgrade(ctx, chat));
        // Study 003's stream: the WebSocket here, its generator on a service verticle (StreamService).
        Stream stream = new Stream(vertx, config().getBoolean("backpressure"));
        router.get("/stream").handler(stream::upgrade);
        router.get("/stream/stats").handler(ctx -> ask(ctx, Addresses.STREAM_STATS, null, new DeliveryOptions(), "application/json"));
        // data1.json and data2.json from the class path (webroot/resources/), as study 002 did.
        router.get("/resources/*").handler(StaticHandler.create("webroot/resources"));
        JsonErrors.install(router);

        vertx.createHttpServer(new HttpServerOptions()
                        .setHost("127.0.0.1")
                        .setPort(config().getInteger("port"))
                        // The chat's limit: a message (one frame or its fragments) over 64 KiB is closed
                        // with 1009. The frame limit is higher, see Chat.MAX_FRAME.
                        .setMaxWebSocketFrameSize(Chat.MAX_FRAME)
                        .setMaxWebSocketMessageSize(Chat.MAX_MESSAGE))
                .requestHandler(router)
                .listen()
                .<Void>mapEmpty()
                .onComplete(started);
    }

    /** /chat: upgrades to a WebSocket (a plain GET is a 400) and hands it to the chat. */
    private void upgrade(RoutingContext ctx, Chat chat) {
        if (!"websocket".equalsIgnoreCase(ctx.request().getHeader(HttpHeaders.UPGRADE))) {
            ctx.fail(new HttpException(400, "/chat is a WebSocket: upgrade the request"));
            return;
        }
        ctx.request().toWebSocket()
                .onSuccess(chat::connect)
                .onFailure(e -> {
                    if (!ctx.response().ended()) {
                        ctx.fail(new HttpException(400, "WebSocket handshake failed: " + e.getMessage()));
                    }
                });
    }

    private void up(RoutingContext ctx) {
        ctx.response().putHeader(HttpHeaders.CONTENT_TYPE, "application/json").end(UP);
    }

    /** /delayed and /sleep: the service verticle holds the timer, this side only the request. */
    private void askToWait(RoutingContext ctx, String address, long dflt) {
        long ms;
        try {
            ms = millis(ctx.queryParam("ms"), dflt);
        } catch (HttpException e) {
            ctx.fail(e);
            return;
        }
        // The bus's default reply timeout (30 s) is shorter than the longest wait (60 s).
        DeliveryOptions options = new DeliveryOptions().setSendTimeout(ms + DeliveryOptions.DEFAULT_TIMEOUT);
        ask(ctx, address, new JsonObject().put("ms", ms), options, "text/plain");
    }

    /** Anything but an integer in 0..60000 (an empty {@code ?ms=} included) is a 400. */
    static long millis(List<String> values, long dflt) {
        if (values.isEmpty()) {
            return dflt;
        }
        String raw = values.get(0);
        try {
            long ms = Long.parseLong(raw);
            if (ms >= 0 && ms <= MAX_MS) {
                return ms;
            }
        } catch (NumberFormatException ignored) {
            // falls through to the 400
        }
        throw new HttpException(400, "ms must be an integer in 0.." + MAX_MS + ", got '" + raw + "'");
    }

    /** /data/{id}: the service fetches, decodes and encodes; the reply is the JSON body. */
    private void data(RoutingContext ctx) {
        String raw = ctx.pathParam("id");
        int id;
        try {
            id = Integer.parseInt(raw);
        } catch (NumberFormatException e) {
            ctx.fail(new HttpException(400, "id must be an integer, got '" + raw + "'"));
            return;
        }
        ask(ctx, Addresses.DATA, new JsonObject().put("id", id), new DeliveryOptions(), "application/json");
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
