package arena.contenders.helidon;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;

import io.helidon.common.buffers.BufferData;
import io.helidon.websocket.WsCloseCodes;
import io.helidon.websocket.WsListener;
import io.helidon.websocket.WsSession;

/**
 * /chat (study 000) as a Helidon SE {@link WsListener}, one instance per connection (the route
 * takes a supplier). Helidon runs each WebSocket connection on a virtual thread of its own that
 * reads one frame at a time and calls this listener, so everything here runs on that one thread
 * and the per-connection fields need no locks; the only cross-thread pieces are the shared
 * {@link ChatRooms} maps and each member's {@link ChatMember} outbox.
 */
final class ChatListener implements WsListener {

    /** The contract's largest frame, also the server's max-frame-length (bigger: close 1009). */
    static final int MAX_FRAME = 64 * 1024;

    private final ChatRooms rooms;

    private ChatMember member;
    /** A text message that arrives in several frames, gathered up to {@link #MAX_FRAME} bytes. */
    private StringBuilder partial;
    private int partialBytes;
    /** A close frame is queued (taken name, oversize message, dropped): later frames are ignored. */
    private boolean closing;

    ChatListener(ChatRooms rooms) {
        this.rooms = rooms;
    }

    @Override
    public void onOpen(WsSession session) {
        ChatMember joined = new ChatMember(session);
        this.member = joined;
        // Helidon 4.3.1 calls no listener method when a connection ends without a close frame
        // (the peer drops the socket) or when the server itself closes it with 1009 for a frame
        // over max-frame-length (helidon-io/helidon#11825): the connection's thread, this one,
        // just ends. So a virtual thread waits for it to end and frees the name then, at once.
        Thread connection = Thread.currentThread();
        Thread.ofVirtual().name("chat-cleanup").start(() -> {
            try {
                connection.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            gone(joined);
        });
    }

    @Override
    public void onMessage(WsSession session, String text, boolean last) {
        if (closing) {
            return;
        }
        if (partial == null && last) {
            handle(text);
            return;
        }
        // A fragmented text message: each frame is within max-frame-length, the whole must be too.
        if (partial == null) {
            partial = new StringBuilder();
            partialBytes = 0;
        }
        partialBytes += utf8Length(text);
        if (partialBytes > MAX_FRAME) {
            partial = null;
            close(WsCloseCodes.TOO_BIG, "message over 64 KiB");
            return;
        }
        partial.append(text);
        if (last) {
            String whole = partial.toString();
            partial = null;
            handle(whole);
        }
    }

    @Override
    public void onMessage(WsSession session, BufferData buffer, boolean last) {
        if (!closing && last) {
            notice("binary frames are not supported: send a JSON text frame");
        }
    }

    @Override
    public void onPing(WsSession session, BufferData buffer) {
        // Helidon 4.3.1 does not answer pings itself; the pong goes through the outbox like every
        // other frame this connection sends.
        byte[] data = new byte[buffer.available()];
        buffer.read(data);
        if (!closing && !member.pong(data)) {
            dropSlow();
        }
    }

    @Override
    public void onClose(WsSession session, int status, String reason) {
        // The client's close frame: Helidon answers it with its own when this returns.
        gone(member);
    }

    @Override
    public void onError(WsSession session, Throwable t) {
        gone(member);
    }

    private void gone(ChatMember who) {
        if (who != null) {
            rooms.leave(who);
            who.stop();
        }
    }

    private void handle(String text) {
        JsonNode frame;
        try {
            frame = Json.MAPPER.readTree(text);
        } catch (JsonProcessingException e) {
            frame = null;
        }
        if (frame == null || !frame.isObject()) {
            notice("not a JSON object");
            return;
        }
        String name = string(frame, "name");
        String room = string(frame, "chat");
        JsonNode message = frame.get("message");
        if (member.name() == null) {
            if (name == null || room == null || message != null) {
                notice("join first with {\"name\":\"<user>\",\"chat\":\"<room>\"}");
            } else if (!rooms.join(member, name, room)) {
                notice("the name " + name + " is taken");
                close(WsCloseCodes.VIOLATED_POLICY, "name taken");
            }
            return;
        }
        if (name == null || room == null || message == null || !message.isTextual()) {
            notice("a message needs name, chat and message");
            return;
        }
        rooms.broadcast(member.room(), Json.chat(member.name(), member.room(), message.textValue()));
    }

    /** A system frame to this connection only. */
    private void notice(String text) {
        if (!member.offer(Json.system(text))) {
            dropSlow();
        }
    }

    /** This connection's outbox is full: it leaves the chat and is closed with 1013. */
    private void dropSlow() {
        rooms.leave(member);
        member.drop();
        closing = true;
    }

    /** Queues a close frame after whatever is queued (so a system frame goes first) and leaves. */
    private void close(int code, String reason) {
        closing = true;
        rooms.leave(member);
        member.closeWith(code, reason);
    }

    private static String string(JsonNode frame, String field) {
        JsonNode value = frame.get(field);
        return value != null && value.isTextual() && !value.textValue().isEmpty() ? value.textValue() : null;
    }

    private static int utf8Length(String s) {
        int bytes = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                bytes++;
            } else if (c < 0x800) {
                bytes += 2;
            } else if (Character.isHighSurrogate(c)) {
                bytes += 4;
                i++;
            } else {
                bytes += 3;
            }
        }
        return bytes;
    }
}
