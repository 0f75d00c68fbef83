package arena.contenders.vertx;

import java.util.List;
import java.util.concurrent.TimeoutException;

import io.vertx.core.AbstractVerticle;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.ext.web.handler.HttpException;
import io.vertx.ext.web.handler.StaticHandler;

/**
 * The whole server, deployed once per event loop. Every handler runs on this verticle's event
 * loop and never blocks it: waits are {@code vertx.setTimer}, the downstream call is the
 * non-blocking {@link WebClient}.
 */
public class HttpVerticle extends AbstractVerticle {

    static final long MAX_MS = 60_000;
    /** The contract's limit for the downstream: connect and answer within 2 s. */
    static final int DOWNSTREAM_TIMEOUT_MS = 2_000;

    private static final Buffer UP = new JsonObject().put("status", "UP").toBuffer();

    private Downstream downstream;
    private WebClient client;

    @Override
    public void start(Promise<Void> started) {
        downstream = Downstream.parse(config().getString("downstream"));
        // One client per verticle, so its pooled keep-alive connections live on this event loop.
        client = WebClient.create(vertx, new WebClientOptions()
                .setKeepAlive(true)
                .setConnectTimeout(DOWNSTREAM_TIMEOUT_MS));

        Router router = Router.router(vertx);
        router.get("/actuator/health/liveness").handler(this::up);
        router.get("/actuator/health/readiness").handler(this::up);
        router.get("/instant").handler(ctx -> text(ctx.response(), "INSTANT"));
        router.get("/delayed").handler(ctx -> waitThenAnswer(ctx, 10_000, "DELAYED"));
        router.get("/sleep").handler(ctx -> waitThenAnswer(ctx, 100, "SLEPT"));
        router.get("/data/:id").handler(this::data);
        // Study 000's chat: the WebSocket handshake on the same server, through the Router.
        Chat chat = new Chat(vertx);
        router.get("/chat").handler(ctx -> upgrade(ctx, chat));
        // Study 003's stream: a generator per WebSocket, on that socket's event loop.
        Stream stream = new Stream(vertx, config().getBoolean("backpressure"));
        router.get("/stream").handler(stream::upgrade);
        router.get("/stream/stats").handler(stream::stats);
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
                .onSuccess(ws -> chat.connect(ws, vertx.getOrCreateContext()))
                .onFailure(e -> {
                    if (!ctx.response().ended()) {
                        ctx.fail(new HttpException(400, "WebSocket handshake failed: " + describe(e)));
                    }
                });
    }

    private void up(RoutingContext ctx) {
        ctx.response().putHeader(HttpHeaders.CONTENT_TYPE, "application/json").end(UP);
    }

    private static void text(HttpServerResponse response, String body) {
        if (!response.closed()) {
            response.putHeader(HttpHeaders.CONTENT_TYPE, "text/plain").end(body);
        }
    }

    /** /delayed and /sleep: a timer on this event loop, cancelled if the client goes away. */
    private void waitThenAnswer(RoutingContext ctx, long dflt, String body) {
        long ms;
        try {
            ms = millis(ctx.queryParam("ms"), dflt);
        } catch (HttpException e) {
            ctx.fail(e);
            return;
        }
        HttpServerResponse response = ctx.response();
        if (ms == 0) {
            text(response, body); // setTimer refuses delays under 1 ms
            return;
        }
        long timer = vertx.setTimer(ms, id -> text(response, body));
        response.closeHandler(v -> vertx.cancelTimer(timer));
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

    /** /data/{id} (study 002): fetch, decode into {@link Data}, encode it back. */
    private void data(RoutingContext ctx) {
        String raw = ctx.pathParam("id");
        int id;
        try {
            id = Integer.parseInt(raw);
        } catch (NumberFormatException e) {
            ctx.fail(new HttpException(400, "id must be an integer, got '" + raw + "'"));
            return;
        }
        client.get(downstream.port(), downstream.host(), downstream.dataUri(id))
                .ssl(downstream.ssl())
                .timeout(DOWNSTREAM_TIMEOUT_MS)
                .send()
                .onSuccess(answer -> answer(ctx, id, answer))
                .onFailure(e -> ctx.fail(new HttpException(502, "downstream failed: " + describe(e))));
    }

    private static void answer(RoutingContext ctx, int id, HttpResponse<Buffer> answer) {
        int status = answer.statusCode();
        if (status == 404) {
            ctx.fail(new HttpException(404, "downstream has no data" + id + ".json"));
            return;
        }
        if (status < 200 || status > 299) {
            ctx.fail(new HttpException(502, "downstream answered " + status));
            return;
        }
        Data data;
        try {
            data = answer.bodyAsJson(Data.class); // Vert.x's Json codec: Jackson databind
        } catch (DecodeException | IllegalArgumentException e) {
            ctx.fail(new HttpException(502, "downstream body is not a Data record"));
            return;
        }
        if (data == null) {
            ctx.fail(new HttpException(502, "downstream sent no body"));
            return;
        }
        if (!ctx.response().closed()) {
            ctx.json(data); // encoded with the same codec, as application/json
        }
    }

    private static String describe(Throwable e) {
        if (e instanceof TimeoutException) {
            return "no answer within " + DOWNSTREAM_TIMEOUT_MS / 1000 + " s";
        }
        String message = e.getMessage();
        return message == null || message.isBlank() ? e.getClass().getSimpleName() : message;
    }
}
