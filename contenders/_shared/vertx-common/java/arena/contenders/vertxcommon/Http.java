package arena.contenders.vertxcommon;

import java.util.List;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.HttpException;
import io.vertx.ext.web.handler.StaticHandler;

import arena.contenders.vertxchat.Chat;

/**
 * The HTTP plumbing both Vert.x contenders' HttpVerticle uses the same way: the probes, the
 * static resources, the JSON errors, the checks of {@code ms} and {@code {id}}, and the server.
 * What each route does with a checked request (answer here, or ask over the EventBus) is the
 * contender's own. A check throws an {@link HttpException}(400) from the route's handler, which
 * the Router turns into {@code ctx.fail} with that status, so {@link JsonErrors} answers it.
 */
public final class Http {

    public static final long MAX_MS = 60_000;

    private static final Buffer UP = new JsonObject().put("status", "UP").toBuffer();

    private Http() {
    }

    /** The probes, the static resources and the JSON errors, around the contender's own routes. */
    public static void plumbing(Router router, String server) {
        router.get("/actuator/health/liveness").handler(Http::up);
        router.get("/actuator/health/readiness").handler(Http::up);
        // data1.json and data2.json from the class path (webroot/resources/), as study 002 did.
        router.get("/resources/*").handler(StaticHandler.create("webroot/resources"));
        JsonErrors.install(router, server);
    }

    private static void up(RoutingContext ctx) {
        ctx.response().putHeader(HttpHeaders.CONTENT_TYPE, "application/json").end(UP);
    }

    /** The server on host:port (127.0.0.1 unless BIND_ADDRESS), with the chat's WebSocket limits. */
    public static Future<Void> listen(Vertx vertx, Router router, String host, int port) {
        return vertx.createHttpServer(new HttpServerOptions()
                        .setHost(host)
                        .setPort(port)
                        // The chat's limit: a message (one frame or its fragments) over 64 KiB is closed
                        // with 1009. The frame limit is higher, see Chat.MAX_FRAME.
                        .setMaxWebSocketFrameSize(Chat.MAX_FRAME)
                        .setMaxWebSocketMessageSize(Chat.MAX_MESSAGE))
                .requestHandler(router)
                .listen()
                .mapEmpty();
    }

    /** {@code ?ms=}: anything but an integer in 0..60000 (an empty {@code ?ms=} included) is a 400. */
    public static long millis(List<String> values, long dflt) {
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

    /** {@code ?ms=} where it is required (/db/slow): missing is a 400 too. */
    public static long requiredMillis(List<String> values) {
        if (values.isEmpty()) {
            throw new HttpException(400, "ms is required: an integer in 0.." + MAX_MS);
        }
        return millis(values, 0);
    }

    /** {@code {id}} of /data/{id} and /db/{id}: anything but a (32-bit) integer is a 400. */
    public static int id(RoutingContext ctx) {
        String raw = ctx.pathParam("id");
        try {
            return Integer.parseInt(raw);
        } catch (NumberFormatException e) {
            throw new HttpException(400, "id must be an integer, got '" + raw + "'");
        }
    }
}
