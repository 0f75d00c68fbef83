package arena.contenders.vertxstream;

import java.util.List;

import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.HttpException;

/**
 * GET /stream, the same in both Vert.x contenders: the query checked first (400 with the JSON
 * error, no upgrade), then the WebSocket, handed with its rate and size to the contender's own
 * stream, which is where the two differ.
 */
public final class StreamUpgrade {

    public static final int MAX_RATE = 1_000_000;
    public static final int MIN_SIZE = 16;
    public static final int MAX_SIZE = Frames.MAX_SIZE;
    public static final int DEFAULT_SIZE = 250;

    /** Takes an upgraded /stream WebSocket; called on its context. */
    public interface Opener {
        void open(ServerWebSocket ws, int rate, int size);
    }

    private StreamUpgrade() {
    }

    public static void handle(RoutingContext ctx, Opener opener) {
        int rate;
        int size;
        try {
            rate = param(ctx.queryParam("rate"), "rate", 0, 0, MAX_RATE);
            size = param(ctx.queryParam("size"), "size", DEFAULT_SIZE, MIN_SIZE, MAX_SIZE);
        } catch (HttpException e) {
            ctx.fail(e);
            return;
        }
        if (!"websocket".equalsIgnoreCase(ctx.request().getHeader(HttpHeaders.UPGRADE))) {
            ctx.fail(new HttpException(400, "/stream is a WebSocket: upgrade the request"));
            return;
        }
        ctx.request().toWebSocket()
                .onSuccess(ws -> opener.open(ws, rate, size))
                .onFailure(e -> {
                    if (!ctx.response().ended()) {
                        ctx.fail(new HttpException(400, "WebSocket handshake failed: " + e.getMessage()));
                    }
                });
    }

    /** An integer in min..max, the default when absent; anything else (an empty value too) is a 400. */
    static int param(List<String> values, String name, int dflt, int min, int max) {
        if (values.isEmpty()) {
            return dflt;
        }
        String raw = values.get(0);
        try {
            int value = Integer.parseInt(raw);
            if (value >= min && value <= max) {
                return value;
            }
        } catch (NumberFormatException ignored) {
            // falls through to the 400
        }
        throw new HttpException(400, name + " must be an integer in " + min + ".." + max + ", got '" + raw + "'");
    }
}
