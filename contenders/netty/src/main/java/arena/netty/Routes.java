package arena.netty;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.core.JsonProcessingException;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.concurrent.Future;

/**
 * The contract's routes, all answered on the channel's event loop: constant answers at once,
 * the waits as timers on the loop (ctx.executor().schedule), /data/{id} through the
 * non-blocking {@link Downstream} client. /db is the exception: its blocking JDBC queries run on
 * the {@link Database}'s own executor, and only their answers come back to the loop. Stateless,
 * so one instance serves every channel.
 */
@Sharable
final class Routes extends SimpleChannelInboundHandler<FullHttpRequest> {

    private enum Endpoint { LIVENESS, READINESS, INSTANT, DELAYED, SLEEP, DATA1_JSON, DATA2_JSON, DATA, STREAM_STATS, DB, DB_SLOW }

    private static final String DATA_PREFIX = "/data/";
    private static final String DB_PREFIX = "/db/";
    private static final byte[] UP = "{\"status\":\"UP\"}".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DATA1 = Responses.classpath("/resources/data1.json");
    private static final byte[] DATA2 = Responses.classpath("/resources/data2.json");

    private final Downstream downstream;
    private final StreamStats streamStats;
    private final Database database;

    Routes(Downstream downstream, StreamStats streamStats, Database database) {
        this.downstream = downstream;
        this.streamStats = streamStats;
        this.database = database;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
        if (!request.decoderResult().isSuccess()) {
            FullHttpResponse response = Responses.error(HttpResponseStatus.BAD_REQUEST, "malformed request");
            HttpUtil.setKeepAlive(response, false);
            ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        try {
            route(ctx, request);
        } catch (RuntimeException e) {
            e.printStackTrace();
            send(ctx, Responses.error(HttpResponseStatus.INTERNAL_SERVER_ERROR, "internal error: " + e));
        }
    }

    private void route(ChannelHandlerContext ctx, FullHttpRequest request) {
        QueryStringDecoder uri = new QueryStringDecoder(request.uri());
        String path = uri.path();
        Endpoint endpoint = endpoint(path);
        if (endpoint == null) {
            send(ctx, Responses.error(HttpResponseStatus.NOT_FOUND, "no such path: " + path));
            return;
        }
        if (!HttpMethod.GET.equals(request.method())) {
            FullHttpResponse response = Responses.error(HttpResponseStatus.METHOD_NOT_ALLOWED,
                    request.method() + " is not allowed on " + path);
            response.headers().set(HttpHeaderNames.ALLOW, HttpMethod.GET.name());
            send(ctx, response);
            return;
        }
        switch (endpoint) {
            case LIVENESS, READINESS -> send(ctx, Responses.json(HttpResponseStatus.OK, UP));
            case INSTANT -> send(ctx, Responses.text("INSTANT"));
            case DELAYED -> later(ctx, uri, 10_000, "DELAYED");
            case SLEEP -> later(ctx, uri, 100, "SLEPT");
            case DATA1_JSON -> send(ctx, Responses.json(HttpResponseStatus.OK, DATA1));
            case DATA2_JSON -> send(ctx, Responses.json(HttpResponseStatus.OK, DATA2));
            case DATA -> data(ctx, path.substring(DATA_PREFIX.length()));
            case STREAM_STATS -> send(ctx, Responses.json(HttpResponseStatus.OK, streamStats.json()));
            case DB -> db(ctx, path.substring(DB_PREFIX.length()));
            case DB_SLOW -> dbSlow(ctx, uri);
        }
    }

    private static Endpoint endpoint(String path) {
        return switch (path) {
            case "/actuator/health/liveness" -> Endpoint.LIVENESS;
            case "/actuator/health/readiness" -> Endpoint.READINESS;
            case "/instant" -> Endpoint.INSTANT;
            case "/delayed" -> Endpoint.DELAYED;
            case "/sleep" -> Endpoint.SLEEP;
            case "/resources/data1.json" -> Endpoint.DATA1_JSON;
            case "/resources/data2.json" -> Endpoint.DATA2_JSON;
            case "/stream/stats" -> Endpoint.STREAM_STATS;
            case "/db/slow" -> Endpoint.DB_SLOW;
            default -> oneSegmentUnder(path, DATA_PREFIX) ? Endpoint.DATA
                    : oneSegmentUnder(path, DB_PREFIX) ? Endpoint.DB : null;
        };
    }

    /** prefix + one non-empty path segment. */
    private static boolean oneSegmentUnder(String path, String prefix) {
        return path.startsWith(prefix) && path.length() > prefix.length() && path.indexOf('/', prefix.length()) < 0;
    }

    /** /delayed and /sleep: a timer on this channel's event loop, which stays free meanwhile. */
    private static void later(ChannelHandlerContext ctx, QueryStringDecoder uri, int dflt, String body) {
        List<String> values = uri.parameters().get("ms");
        String ms = values == null ? null : values.get(0);
        int millis = dflt;
        if (ms != null) {
            millis = parseMillis(ms);
            if (millis < 0) {
                send(ctx, Responses.error(HttpResponseStatus.BAD_REQUEST,
                        "ms must be an integer in 0..60000, got '" + ms + "'"));
                return;
            }
        }
        ctx.executor().schedule(() -> send(ctx, Responses.text(body)), millis, TimeUnit.MILLISECONDS);
    }

    /** The value of ms when it is an integer in 0..60000, else -1. */
    private static int parseMillis(String ms) {
        try {
            int value = Integer.parseInt(ms);
            return value >= 0 && value <= 60_000 ? value : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** /data/{id}: fetch, decode into Data, encode it back; the answer arrives on this loop. */
    private void data(ChannelHandlerContext ctx, String rawId) {
        int id;
        try {
            id = Integer.parseInt(rawId);
        } catch (NumberFormatException e) {
            send(ctx, Responses.error(HttpResponseStatus.BAD_REQUEST, "id must be an integer, got '" + rawId + "'"));
            return;
        }
        downstream.get(ctx.channel().eventLoop(), "/resources/data" + id + ".json").addListener(
                (Future<Downstream.Answer> f) -> send(ctx, dataResponse(id, f)));
    }

    /** /db/{id}: checked here on the loop, queried on the database executor (see {@link Database}). */
    private void db(ChannelHandlerContext ctx, String rawId) {
        int id;
        try {
            id = Integer.parseInt(rawId);
        } catch (NumberFormatException e) { // not an integer, or outside 32 bits
            send(ctx, Responses.error(HttpResponseStatus.BAD_REQUEST, "id must be a 32-bit integer, got '" + rawId + "'"));
            return;
        }
        database.row(ctx, id);
    }

    /** /db/slow?ms=N: ms is required here. */
    private void dbSlow(ChannelHandlerContext ctx, QueryStringDecoder uri) {
        List<String> values = uri.parameters().get("ms");
        String ms = values == null ? null : values.get(0);
        int millis = ms == null ? -1 : parseMillis(ms);
        if (millis < 0) {
            send(ctx, Responses.error(HttpResponseStatus.BAD_REQUEST,
                    ms == null ? "ms is required" : "ms must be an integer in 0..60000, got '" + ms + "'"));
            return;
        }
        database.slow(ctx, millis);
    }

    private static FullHttpResponse dataResponse(int id, Future<Downstream.Answer> f) {
        if (!f.isSuccess()) {
            return Responses.error(HttpResponseStatus.BAD_GATEWAY, "downstream failed: " + f.cause());
        }
        Downstream.Answer answer = f.getNow();
        if (answer.status() == 404) {
            return Responses.error(HttpResponseStatus.NOT_FOUND, "no data " + id);
        }
        if (answer.status() < 200 || answer.status() > 299) {
            return Responses.error(HttpResponseStatus.BAD_GATEWAY, "downstream answered " + answer.status());
        }
        try {
            Data data = Responses.MAPPER.readValue(answer.body(), Data.class);
            return Responses.json(HttpResponseStatus.OK, Responses.MAPPER.writeValueAsBytes(data));
        } catch (IOException e) {
            return Responses.error(HttpResponseStatus.BAD_GATEWAY, "downstream sent unreadable data: "
                    + (e instanceof JsonProcessingException json ? json.getOriginalMessage() : e.getMessage()));
        }
    }

    /** HttpServerKeepAliveHandler adds the keep-alive headers and closes when the client asked. */
    private static void send(ChannelHandlerContext ctx, FullHttpResponse response) {
        ctx.writeAndFlush(response);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (!(cause instanceof IOException)) { // a reset connection is ordinary; anything else is worth a line
            System.err.println("netty: closing " + ctx.channel() + " after " + cause);
        }
        ctx.close();
    }
}
