package arena.contender;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.stereotype.Component;
import org.springframework.web.socket.CloseStatus;
import org.springframework.web.socket.TextMessage;
import org.springframework.web.socket.WebSocketSession;
import org.springframework.web.socket.handler.ConcurrentWebSocketSessionDecorator;
import org.springframework.web.socket.handler.ConcurrentWebSocketSessionDecorator.OverflowStrategy;
import org.springframework.web.socket.handler.SessionLimitExceededException;
import org.springframework.web.socket.handler.TextWebSocketHandler;

/**
 * One handler for every /chat connection. The container calls it on its own request threads
 * (Tomcat's or Jetty's pool, or a virtual thread), one frame of a connection at a time.
 *
 * <p>Rooms and names live in ConcurrentHashMaps. Each member's session is wrapped in Spring's
 * ConcurrentWebSocketSessionDecorator: a broadcast hands the encoded message to every member
 * of the room; a member nobody is writing to is written to at once, otherwise the message
 * joins that member's queue, which the thread already writing to it drains in order. Because
 * a sender's frames reach the handler one after another, and each broadcast has queued or
 * written to every member before the next begins, every member gets one sender's messages in
 * the order sent, with no lock around the room.
 */
@Component
class ChatHandler extends TextWebSocketHandler {

    /** A member whose pending write has not finished after this long is closed. */
    static final int SEND_TIME_LIMIT_MS = 10_000;
    /** A member with more than this many bytes queued is closed (OverflowStrategy.TERMINATE). */
    static final int SEND_BUFFER_LIMIT = 1024 * 1024;

    record Message(String name, String chat, String message) {
    }

    record Notice(String type, String message) {
    }

    /** One connection; name and room are set once, by the join. */
    static final class Member {
        final ConcurrentWebSocketSessionDecorator out;
        volatile String name;
        volatile String room;

        Member(WebSocketSession session) {
            this.out = new ConcurrentWebSocketSessionDecorator(session, SEND_TIME_LIMIT_MS, SEND_BUFFER_LIMIT,
                    OverflowStrategy.TERMINATE);
        }
    }

    private final ObjectMapper json;
    private final Map<String, Member> members = new ConcurrentHashMap<>(); // by session id, joined or not
    private final Map<String, Member> names = new ConcurrentHashMap<>();
    private final Map<String, Set<Member>> rooms = new ConcurrentHashMap<>();

    ChatHandler(ObjectMapper json) {
        this.json = json;
    }

    @Override
    public void afterConnectionEstablished(WebSocketSession session) {
        members.put(session.getId(), new Member(session));
    }

    @Override
    protected void handleTextMessage(WebSocketSession session, TextMessage frame) {
        Member m = members.get(session.getId());
        if (m == null) {
            return;
        }
        JsonNode f;
        try {
            f = json.readTree(frame.getPayload());
        } catch (JsonProcessingException e) {
            f = null;
        }
        if (f == null || !f.isObject()) {
            notice(m, "not a JSON object");
            return;
        }
        String name = nonEmpty(text(f, "name"));
        String room = nonEmpty(text(f, "chat"));
        String message = text(f, "message"); // may be empty; delivered unchanged
        if (m.name == null) {
            if (name == null || room == null || f.has("message")) {
                notice(m, "join first with {\"name\",\"chat\"}");
            } else if (!join(m, name, room)) {
                notice(m, "the name " + name + " is taken"); // written before the close frame
                close(m, CloseStatus.POLICY_VIOLATION);
            }
        } else if (name == null || room == null || message == null) {
            notice(m, "a message needs name, chat and message");
        } else {
            broadcast(m.room, new Message(m.name, m.room, message));
        }
    }

    @Override
    public void afterConnectionClosed(WebSocketSession session, CloseStatus status) {
        Member m = members.remove(session.getId());
        if (m != null) {
            leave(m);
        }
    }

    private boolean join(Member m, String name, String room) {
        if (names.putIfAbsent(name, m) != null) {
            return false;
        }
        m.name = name;
        m.room = room;
        rooms.compute(room, (r, set) -> {
            Set<Member> in = set != null ? set : ConcurrentHashMap.newKeySet();
            in.add(m);
            return in;
        });
        return true;
    }

    private void leave(Member m) {
        String name = m.name;
        if (name == null) {
            return;
        }
        rooms.computeIfPresent(m.room, (r, set) -> {
            set.remove(m);
            return set.isEmpty() ? null : set;
        });
        names.remove(name, m);
    }

    /** Encodes once and hands the same frame to every member of the room, the sender included. */
    private void broadcast(String room, Message message) {
        Set<Member> in = rooms.get(room);
        if (in == null) {
            return;
        }
        TextMessage out = encode(message);
        for (Member peer : in) {
            send(peer, out);
        }
    }

    private void notice(Member m, String text) {
        send(m, encode(new Notice("system", text)));
    }

    private void send(Member m, TextMessage out) {
        try {
            m.out.sendMessage(out);
        } catch (SessionLimitExceededException e) {
            // Too slow: more than SEND_BUFFER_LIMIT queued, or one write stuck for longer than
            // SEND_TIME_LIMIT_MS. It leaves its room now and is closed; nobody waits for it.
            leave(m);
            close(m, e.getStatus());
        } catch (IOException | IllegalStateException e) {
            // The connection is already going away; afterConnectionClosed cleans up.
        }
    }

    private static void close(Member m, CloseStatus status) {
        try {
            m.out.close(status);
        } catch (IOException e) {
            // already closed
        }
    }

    private TextMessage encode(Object frame) {
        try {
            return new TextMessage(json.writeValueAsString(frame));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e); // two records of strings always encode
        }
    }

    private static String text(JsonNode f, String field) {
        JsonNode v = f.get(field);
        return v != null && v.isTextual() ? v.asText() : null;
    }

    private static String nonEmpty(String s) {
        return s == null || s.isEmpty() ? null : s;
    }
}
