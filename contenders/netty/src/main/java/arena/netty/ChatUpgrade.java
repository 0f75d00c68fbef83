package arena.netty;

import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.websocketx.WebSocketFrameAggregator;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.handler.flush.FlushConsolidationHandler;

/**
 * Sits before {@link Routes} and leaves every request alone except one for /chat: for that
 * one it puts Netty's WebSocket handlers into this channel's pipeline (the protocol handler,
 * which adds its handshake handler and UTF-8 validator, a frame aggregator and the
 * {@link Chat} handler), takes itself out and passes the request on to the handshake. HTTP
 * connections therefore keep exactly the pipeline they had before /chat existed.
 */
@Sharable
final class ChatUpgrade extends ChannelInboundHandlerAdapter {

    static final String PATH = "/chat";

    private final Chat chat;
    private final WebSocketServerProtocolConfig config;

    ChatUpgrade(Chat chat) {
        this.chat = chat;
        this.config = WebSocketServerProtocolConfig.newBuilder()
                .websocketPath(PATH)
                .checkStartsWith(true) // "/chat?..." too, as the upgrade test below
                // A frame over 64 KiB: the decoder sends close 1009 (MESSAGE_TOO_BIG) and the channel closes.
                .maxFramePayloadLength(Chat.MAX_MESSAGE)
                // A close the server starts waits at most this long for its close frame to go
                // out (a member too slow to read its backlog), then the connection is dropped.
                .forceCloseTimeoutMillis(2_000)
                .build();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest request && isChat(request.uri())) {
            ChannelPipeline p = ctx.pipeline();
            String name = ctx.name();
            p.addAfter(name, "websocket", new WebSocketServerProtocolHandler(config));
            // A message sent in fragments is joined up to the same 64 KiB; more closes with 1009 (Chat).
            p.addAfter("websocket", "websocket-aggregator", new WebSocketFrameAggregator(Chat.MAX_MESSAGE));
            p.addAfter("websocket-aggregator", "chat", chat);
            // Broadcasts reach a member as many writeAndFlush calls, often from other event
            // loops; Netty's flush consolidation turns those of one loop turn into one write.
            p.addFirst("flush-consolidation", new FlushConsolidationHandler(FlushConsolidationHandler.DEFAULT_EXPLICIT_FLUSH_AFTER_FLUSHES, true));
            p.remove(this);
        }
        ctx.fireChannelRead(msg);
    }

    private static boolean isChat(String uri) {
        return uri.startsWith(PATH) && (uri.length() == PATH.length() || uri.charAt(PATH.length()) == '?');
    }
}
