package arena.netty;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.ChannelMatchers;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.GlobalEventExecutor;

/**
 * Study 000's chat on Netty's WebSocket support. One shared handler; the server-wide state is
 * two concurrent maps: names to channels (a name is unique while its channel is open) and
 * room names to a {@link ChannelGroup} of the room's channels. Each channel's own state
 * (its name and room once joined) is a channel attribute, touched only on its event loop.
 *
 * <p>A message is encoded once into a pooled buffer and handed to {@link ChannelGroup#writeAndFlush},
 * which writes a retained duplicate to every member. A member on another event loop gets the
 * write as a task on its loop; a sender's frames are all read and broadcast on the sender's
 * one loop, in order, and each loop runs its tasks in order, so every member gets one
 * sender's messages in the order they were sent.
 *
 * <p>Writes are never waited for. A member that does not read keeps its frames queued in its
 * channel's outbound buffer; once more than {@link #SLOW_MEMBER} bytes wait there, the channel
 * turns unwritable and the member is closed with 1013 (try again later): frames queued after
 * that are dropped, and the connection is cut if the close frame cannot go out within 2 s.
 */
@Sharable
final class Chat extends SimpleChannelInboundHandler<WebSocketFrame> {

    /** The largest frame (and message) a client may send; a bigger one is closed with 1009. */
    static final int MAX_MESSAGE = 64 * 1024;

    /** Outbound bytes a member may have waiting before it counts as too slow (about 13,000 chat frames). */
    static final WriteBufferWaterMark SLOW_MEMBER = new WriteBufferWaterMark(512 * 1024, 1024 * 1024);

    private static final AttributeKey<Member> MEMBER = AttributeKey.valueOf(Chat.class, "member");

    /** Strict JSON: a text with anything after the object is not JSON either. */
    private static final ObjectReader JSON = Responses.MAPPER.readerFor(JsonNode.class)
            .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private record Said(String name, String chat, String message) {
    }

    private record Notice(String type, String message) {
    }

    /** One connection's chat state; only its channel's event loop touches it. */
    private static final class Member {
        String name;
        String roomName;
        ChannelGroup room;
        boolean dropped;
    }

    private final ConcurrentMap<String, Channel> names = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, ChannelGroup> rooms = new ConcurrentHashMap<>();

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof WebSocketServerProtocolHandler.HandshakeComplete) {
            ctx.channel().config().setWriteBufferWaterMark(SLOW_MEMBER);
            ctx.channel().attr(MEMBER).setIfAbsent(new Member());
        }
        super.userEventTriggered(ctx, evt);
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, WebSocketFrame frame) {
        Member member = ctx.channel().attr(MEMBER).get();
        if (member == null) { // a frame cannot come before the handshake completes, but be safe
            member = new Member();
            ctx.channel().attr(MEMBER).set(member);
        }
        if (!(frame instanceof TextWebSocketFrame)) {
            notice(ctx, "only text frames are understood");
            return;
        }
        JsonNode json;
        try {
            json = JSON.readValue((InputStream) new ByteBufInputStream(frame.content()));
        } catch (IOException e) {
            json = null;
        }
        if (json == null || !json.isObject()) {
            notice(ctx, "not a JSON object");
            return;
        }
        String name = nonEmpty(json.get("name"));
        String room = nonEmpty(json.get("chat"));
        JsonNode message = json.get("message");
        boolean hasMessage = message != null && message.isTextual();
        if (member.name == null) {
            if (name == null || room == null || hasMessage) {
                notice(ctx, "join first with {\"name\":…,\"chat\":…}");
            } else if (!join(ctx.channel(), member, name, room)) {
                // The notice goes out before the close frame: both are written, in order, on this loop.
                ctx.write(noticeFrame("the name " + name + " is taken"));
                ctx.writeAndFlush(new CloseWebSocketFrame(WebSocketCloseStatus.POLICY_VIOLATION, "name taken"))
                        .addListener(ChannelFutureListener.CLOSE);
            }
            return;
        }
        if (name == null || room == null || !hasMessage) {
            notice(ctx, "a message needs name, chat and message");
            return;
        }
        broadcast(ctx, member, message.textValue());
    }

    private static String nonEmpty(JsonNode node) {
        return node != null && node.isTextual() && !node.textValue().isEmpty() ? node.textValue() : null;
    }

    /** Takes the name if it is free and puts the channel into the room; both undone when it closes. */
    private boolean join(Channel ch, Member member, String name, String roomName) {
        if (names.putIfAbsent(name, ch) != null) {
            return false;
        }
        member.name = name;
        member.roomName = roomName;
        // compute: atomic with a concurrent leave that drops the room when it empties.
        member.room = rooms.compute(roomName, (key, group) -> {
            ChannelGroup room = group != null ? group : new DefaultChannelGroup(key, GlobalEventExecutor.INSTANCE);
            room.add(ch);
            return room;
        });
        ch.closeFuture().addListener(closed -> {
            rooms.computeIfPresent(roomName, (key, room) -> {
                room.remove(ch);
                return room.isEmpty() ? null : room;
            });
            names.remove(name, ch);
        });
        return true;
    }

    /** Encodes the message once and writes it to every member of the sender's room, the sender included. */
    private static void broadcast(ChannelHandlerContext ctx, Member from, String message) {
        ByteBuf out = ctx.alloc().buffer();
        try {
            Responses.MAPPER.writeValue((OutputStream) new ByteBufOutputStream(out), new Said(from.name, from.roomName, message));
        } catch (IOException e) {
            out.release();
            throw new UncheckedIOException(e); // three strings always serialize
        }
        // Void promises: no group future and no per-member future to allocate; the group
        // releases the frame once every member holds its own retained duplicate.
        from.room.writeAndFlush(new TextWebSocketFrame(out), ChannelMatchers.all(), true);
    }

    private static void notice(ChannelHandlerContext ctx, String text) {
        ctx.writeAndFlush(noticeFrame(text));
    }

    private static TextWebSocketFrame noticeFrame(String text) {
        try {
            return new TextWebSocketFrame(Unpooled.wrappedBuffer(Responses.MAPPER.writeValueAsBytes(new Notice("system", text))));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e); // two strings always serialize
        }
    }

    /** More than SLOW_MEMBER bytes wait for this member: it cannot keep up, so it is closed. */
    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        Member member = ctx.channel().attr(MEMBER).get();
        if (member != null && !member.dropped && !ctx.channel().isWritable()) {
            member.dropped = true;
            // After the close frame the protocol handler drops every further write; close()
            // waits for the frame at most forceCloseTimeoutMillis (ChatUpgrade), then cuts.
            ctx.write(new CloseWebSocketFrame(WebSocketCloseStatus.TRY_AGAIN_LATER, "too slow"));
            ctx.close();
        }
        super.channelWritabilityChanged(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof CorruptedWebSocketFrameException) {
            // Netty's decoder has already sent the close frame (1009 for a frame over 64 KiB,
            // 1002 or 1007 for a broken one), and the protocol handler closes the channel.
            return;
        }
        if (cause instanceof TooLongFrameException) { // fragments adding up to more than 64 KiB
            ctx.writeAndFlush(new CloseWebSocketFrame(WebSocketCloseStatus.MESSAGE_TOO_BIG, "message over 64 KiB"))
                    .addListener(ChannelFutureListener.CLOSE);
            return;
        }
        if (!(cause instanceof IOException)) { // a reset connection is ordinary; anything else is worth a line
            System.err.println("netty chat: closing " + ctx.channel() + " after " + cause);
        }
        ctx.close();
    }
}
