package arena.netty;

import java.util.List;

import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.util.ReferenceCountUtil;

/**
 * Sits before {@link Routes} like {@link ChatUpgrade} and leaves every request alone except
 * one for /stream: it checks rate and size first (a bad one gets 400 and no upgrade), then puts
 * Netty's WebSocket protocol handler and a new {@link Stream} handler for this client into the
 * channel's pipeline, takes itself out and passes the request on to the handshake.
 */
@Sharable
final class StreamUpgrade extends ChannelInboundHandlerAdapter {

    static final String PATH = "/stream";

    private final StreamStats stats;
    private final boolean backpressure;
    private final WebSocketServerProtocolConfig config;

    StreamUpgrade(StreamStats stats, boolean backpressure) {
        this.stats = stats;
        this.backpressure = backpressure;
        this.config = WebSocketServerProtocolConfig.newBuilder()
                .websocketPath(PATH)
                .checkStartsWith(true) // "/stream?rate=…"
                // The client's frames are read and ignored; one over 64 KiB is closed with 1009.
                .maxFramePayloadLength(Chat.MAX_MESSAGE)
                .forceCloseTimeoutMillis(2_000)
                .build();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof HttpRequest request)) {
            ctx.fireChannelRead(msg);
            return;
        }
        QueryStringDecoder uri = new QueryStringDecoder(request.uri());
        if (!PATH.equals(uri.path())) {
            ctx.fireChannelRead(msg);
            return;
        }
        FullHttpResponse refusal = null;
        int rate = 0;
        int size = 0;
        if (!HttpMethod.GET.equals(request.method())) {
            refusal = Responses.error(HttpResponseStatus.METHOD_NOT_ALLOWED, request.method() + " is not allowed on " + PATH);
            refusal.headers().set(HttpHeaderNames.ALLOW, HttpMethod.GET.name());
        } else {
            String rawRate = first(uri, "rate");
            String rawSize = first(uri, "size");
            rate = Frames.param(rawRate, 0, 0, Frames.MAX_RATE);
            size = Frames.param(rawSize, Frames.DEFAULT_SIZE, Frames.MIN_SIZE, Frames.MAX_SIZE);
            if (rate < 0) {
                refusal = Responses.error(HttpResponseStatus.BAD_REQUEST,
                        "rate must be an integer in 0.." + Frames.MAX_RATE + ", got '" + rawRate + "'");
            } else if (size < 0) {
                refusal = Responses.error(HttpResponseStatus.BAD_REQUEST,
                        "size must be an integer in " + Frames.MIN_SIZE + ".." + Frames.MAX_SIZE + ", got '" + rawSize + "'");
            }
        }
        if (refusal != null) {
            ReferenceCountUtil.release(msg);
            ctx.writeAndFlush(refusal); // HttpServerKeepAliveHandler keeps or closes the connection
            return;
        }
        ChannelPipeline p = ctx.pipeline();
        String name = ctx.name();
        p.addAfter(name, "websocket", new WebSocketServerProtocolHandler(config));
        p.addAfter("websocket", "stream", new Stream(stats, backpressure, rate, size));
        p.remove(this);
        ctx.fireChannelRead(msg);
    }

    private static String first(QueryStringDecoder uri, String name) {
        List<String> values = uri.parameters().get(name);
        return values == null || values.isEmpty() ? null : values.get(0);
    }
}
