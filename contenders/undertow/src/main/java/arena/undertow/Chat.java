package arena.undertow;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;

import io.undertow.util.WorkerUtils;
import io.undertow.websockets.WebSocketConnectionCallback;
import io.undertow.websockets.core.AbstractReceiveListener;
import io.undertow.websockets.core.BufferedBinaryMessage;
import io.undertow.websockets.core.BufferedTextMessage;
import io.undertow.websockets.core.CloseMessage;
import io.undertow.websockets.core.WebSocketCallback;
import io.undertow.websockets.core.WebSocketChannel;
import io.undertow.websockets.core.WebSockets;
import io.undertow.websockets.spi.WebSocketHttpExchange;
import org.xnio.IoUtils;

/**
 * Study 000's chat on Undertow's WebSocket API ({@code Handlers.websocket} with this callback).
 * The server-wide state is two concurrent maps: names to their connection (a name is unique
 * while its connection is open) and room names to the set of their members.
 *
 * <p>Every connection gets its own {@link Member}, its receive listener. Undertow calls it on
 * the connection's XNIO IO thread, one message after another, with the whole message
 * buffered (up to 64 KiB: a bigger one makes Undertow send close 1009). A message is
 * encoded once and sent to every member of the room with {@link WebSockets#sendText}, which
 * queues the frame on the member's connection and returns at once; members on other IO
 * threads get it written by their own thread. Undertow sends a connection's frames in the
 * order its send calls were made, and one sender's messages are all handled on the sender's
 * IO thread in order, so every member gets one sender's messages in the order they were sent.
 *
 * <p>Undertow's send queue has no bound of its own, so each member counts the bytes queued for
 * it and not yet written; past {@link #SLOW_MEMBER_BYTES} the member cannot keep up and is
 * closed with 1013 (try again later): it gets nothing more, and its connection is cut if the
 * close frame has not gone out within 2 s.
 */
final class Chat implements WebSocketConnectionCallback {

    /** The largest text message a client may send; a bigger one is closed with 1009. */
    static final int MAX_MESSAGE = 64 * 1024;

    /** Bytes a member may have queued before it counts as too slow (about 13,000 chat frames). */
    static final long SLOW_MEMBER_BYTES = 1024 * 1024;

    /** Close code 1013, "try again later" (RFC 6455 registry); CloseMessage has no constant for it. */
    private static final int TRY_AGAIN_LATER = 1013;

    /** Strict JSON: a text with anything after the object is not JSON either. */
    private static final ObjectReader JSON = Endpoints.MAPPER.readerFor(JsonNode.class)
            .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private record Said(String name, String chat, String message) {
    }

    private record Notice(String type, String message) {
    }

    private final ConcurrentMap<String, Member> names = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Set<Member>> rooms = new ConcurrentHashMap<>();

    @Override
    public void onConnect(WebSocketHttpExchange exchange, WebSocketChannel channel) {
        channel.getReceiveSetter().set(new Member(channel));
        channel.resumeReceives();
    }

    /**
     * One connection: its receive listener (name and room are only touched on its IO thread)
     * and the callback of every frame sent to it (which counts its queued bytes down).
     */
    private final class Member extends AbstractReceiveListener implements WebSocketCallback<Integer> {

        private final WebSocketChannel channel;
        private final AtomicLong queued = new AtomicLong();
        private final AtomicBoolean dropped = new AtomicBoolean();
        private String name;
        private String roomName;
        private Set<Member> room;

        Member(WebSocketChannel channel) {
            this.channel = channel;
        }

        @Override
        protected long getMaxTextBufferSize() {
            return MAX_MESSAGE;
        }

        @Override
        protected long getMaxBinaryBufferSize() {
            return MAX_MESSAGE;
        }

        @Override
        protected void onFullTextMessage(WebSocketChannel channel, BufferedTextMessage text) {
            JsonNode json;
            try {
                json = JSON.readValue(text.getData());
            } catch (IOException e) {
                json = null;
            }
            if (json == null || !json.isObject()) {
                notice("not a JSON object");
                return;
            }
            String name = nonEmpty(json.get("name"));
            String room = nonEmpty(json.get("chat"));
            JsonNode message = json.get("message");
            boolean hasMessage = message != null && message.isTextual();
            if (this.name == null) {
                if (name == null || room == null || hasMessage) {
                    notice("join first with {\"name\":…,\"chat\":…}");
                } else if (!join(name, room)) {
                    // Undertow sends a connection's frames in the order of the send calls:
                    // the notice goes out before the close frame.
                    notice("the name " + name + " is taken");
                    WebSockets.sendClose(new CloseMessage(CloseMessage.MSG_VIOLATES_POLICY, "name taken"), channel,
                            new WebSocketCallback<Void>() {
                                @Override
                                public void complete(WebSocketChannel ch, Void context) {
                                    IoUtils.safeClose(ch);
                                }

                                @Override
                                public void onError(WebSocketChannel ch, Void context, Throwable throwable) {
                                    IoUtils.safeClose(ch);
                                }
                            });
                }
                return;
            }
            if (name == null || room == null || !hasMessage) {
                notice("a message needs name, chat and message");
                return;
            }
            broadcast(message.textValue());
        }

        @Override
        protected void onFullBinaryMessage(WebSocketChannel channel, BufferedBinaryMessage message) {
            message.getData().free();
            notice("only text frames are understood");
        }

        /** Takes the name if it is free and enters the room; both undone when the connection closes. */
        private boolean join(String name, String roomName) {
            if (names.putIfAbsent(name, this) != null) {
                return false;
            }
            this.name = name;
            this.roomName = roomName;
            // compute: atomic with a concurrent leave that drops the room when it empties.
            this.room = rooms.compute(roomName, (key, members) -> {
                Set<Member> room = members != null ? members : ConcurrentHashMap.newKeySet();
                room.add(this);
                return room;
            });
            channel.addCloseTask(closed -> leave());
            if (!channel.isOpen()) { // closed meanwhile, perhaps before the task was added
                leave();
            }
            return true;
        }

        private void leave() {
            rooms.computeIfPresent(roomName, (key, members) -> {
                members.remove(this);
                return members.isEmpty() ? null : members;
            });
            names.remove(name, this);
        }

        /** Encodes the message once and queues it for every member of the room, the sender included. */
        private void broadcast(String message) {
            byte[] frame;
            try {
                frame = Endpoints.MAPPER.writeValueAsBytes(new Said(name, roomName, message));
            } catch (JsonProcessingException e) {
                throw new IllegalStateException(e); // three strings always serialize
            }
            Integer size = frame.length;
            for (Member peer : room) {
                peer.send(frame, size);
            }
        }

        /** Queues one frame for this member, unless it is too far behind already. */
        private void send(byte[] frame, Integer size) {
            if (dropped.get()) {
                return;
            }
            if (queued.addAndGet(size) > SLOW_MEMBER_BYTES) {
                tooSlow();
                return;
            }
            WebSockets.sendText(ByteBuffer.wrap(frame), channel, this, size);
        }

        /** Written (or failed): no longer queued. */
        @Override
        public void complete(WebSocketChannel channel, Integer size) {
            queued.addAndGet(-size);
        }

        @Override
        public void onError(WebSocketChannel channel, Integer size, Throwable throwable) {
            queued.addAndGet(-size);
        }

        private void tooSlow() {
            if (!dropped.compareAndSet(false, true)) {
                return;
            }
            WebSockets.sendClose(new CloseMessage(TRY_AGAIN_LATER, "too slow"), channel, null);
            WorkerUtils.executeAfter(channel.getIoThread(), () -> IoUtils.safeClose(channel), 2, TimeUnit.SECONDS);
        }

        private void notice(String text) {
            try {
                WebSockets.sendText(ByteBuffer.wrap(Endpoints.MAPPER.writeValueAsBytes(new Notice("system", text))), channel, null);
            } catch (JsonProcessingException e) {
                throw new IllegalStateException(e); // two strings always serialize
            }
        }
    }

    private static String nonEmpty(JsonNode node) {
        return node != null && node.isTextual() && !node.textValue().isEmpty() ? node.textValue() : null;
    }
}
