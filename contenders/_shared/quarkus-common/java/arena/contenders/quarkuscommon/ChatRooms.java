package arena.contenders.quarkuscommon;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.quarkus.websockets.next.CloseReason;
import io.quarkus.websockets.next.WebSocketConnection;
import io.smallrye.mutiny.Uni;

/**
 * Study 000's chat for both Quarkus contenders, all but the waiting, which is what they
 * compare (a Uni returned to the event loop, or awaited on a virtual thread): the frames and
 * their rules, the names (unique across the server while their connection is open) and the
 * rooms. {@link #onText} says what a frame calls for, {@link #handle} does it as writes and
 * gives the Uni of their completion: quarkus-reactive returns that Uni from its event-loop
 * callback, quarkus-virtual blocks its virtual thread on it. Either way the next frame from
 * the same sender is taken once the writes of this one are done (WebSockets Next's serial
 * processing per connection), which keeps every sender's messages in order for every member.
 */
@Singleton
public class ChatRooms {

    /** A taken name: the notice, then this close. */
    public static final CloseReason NAME_TAKEN = new CloseReason(1008, "name taken");

    /** What a frame calls for. */
    public sealed interface Action permits Reply, Refuse, Deliver, Joined {
    }

    /** A system notice to the sender, who stays connected. */
    public record Reply(String notice) implements Action {
    }

    /** A system notice to the sender, then {@link #NAME_TAKEN}. */
    public record Refuse(String notice) implements Action {
    }

    /** The frame to every member of the sender's room, the sender included. */
    public record Deliver(String frame, List<WebSocketConnection> members) implements Action {
    }

    /** Joined: nothing is sent back. */
    public record Joined() implements Action {
    }

    private record Member(String name, String room) {
    }

    private final ObjectMapper mapper;
    /** name → the id of the connection that holds it. */
    private final ConcurrentHashMap<String, String> names = new ConcurrentHashMap<>();
    /** connection id → its member, once joined. */
    private final ConcurrentHashMap<String, Member> members = new ConcurrentHashMap<>();
    /** room → its members' connections. */
    private final ConcurrentHashMap<String, Set<WebSocketConnection>> rooms = new ConcurrentHashMap<>();

    private final String notJson;
    private final String joinFirst;
    private final String incomplete;

    @Inject
    public ChatRooms(ObjectMapper mapper) {
        this.mapper = mapper;
        notJson = notice("not a JSON object");
        joinFirst = notice("join first with {\"name\",\"chat\"}");
        incomplete = notice("a message needs name, chat and message");
    }

    /** What the text frame from {@code from} calls for. */
    public Action onText(WebSocketConnection from, String text) {
        JsonNode frame;
        try {
            frame = mapper.readTree(text);
        } catch (JsonProcessingException e) {
            return new Reply(notJson);
        }
        if (frame == null || !frame.isObject()) {
            return new Reply(notJson);
        }
        String name = nonEmpty(frame.get("name"));
        String room = nonEmpty(frame.get("chat"));
        JsonNode message = frame.get("message");
        Member member = members.get(from.id());
        if (member == null) {
            if (name == null || room == null || message != null) {
                return new Reply(joinFirst);
            }
            return join(from, name, room) ? new Joined() : new Refuse(notice("the name " + name + " is taken"));
        }
        if (name == null || room == null || message == null || !message.isTextual()) {
            return new Reply(incomplete);
        }
        ObjectNode out = mapper.createObjectNode()
                .put("name", member.name())
                .put("chat", member.room())
                .put("message", message.textValue());
        return new Deliver(out.toString(), List.copyOf(rooms.getOrDefault(member.room(), Set.of())));
    }

    /**
     * Does what the frame calls for: a notice, a notice and the close 1008, or the frame written
     * to every member at once (each write handed to the member's connection, its event loop
     * writing it). The Uni completes when every write is done; a write to a member that has gone
     * meanwhile is no failure of the sender's.
     */
    public Uni<Void> handle(WebSocketConnection from, String text) {
        return switch (onText(from, text)) {
            case Reply r -> quietly(from.sendText(r.notice()));
            case Refuse r -> quietly(from.sendText(r.notice()))
                    .chain(() -> from.isClosed() ? Uni.createFrom().voidItem() : quietly(from.close(NAME_TAKEN)));
            case Deliver d -> deliver(d);
            case Joined j -> Uni.createFrom().voidItem();
        };
    }

    private static Uni<Void> deliver(Deliver d) {
        if (d.members().isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        List<Uni<Void>> writes = new ArrayList<>(d.members().size());
        for (WebSocketConnection member : d.members()) {
            writes.add(quietly(member.sendText(d.frame())));
        }
        return Uni.join().all(writes).andFailFast().replaceWithVoid();
    }

    private static Uni<Void> quietly(Uni<Void> write) {
        return write.onFailure().recoverWithNull();
    }

    private boolean join(WebSocketConnection c, String name, String room) {
        if (names.putIfAbsent(name, c.id()) != null) {
            return false;
        }
        members.put(c.id(), new Member(name, room));
        rooms.compute(room, (k, set) -> {
            Set<WebSocketConnection> s = set == null ? ConcurrentHashMap.newKeySet() : set;
            s.add(c);
            return s;
        });
        return true;
    }

    /** The connection closed: its name is free at once and it leaves its room. */
    public void leave(WebSocketConnection c) {
        Member m = members.remove(c.id());
        if (m == null) {
            return;
        }
        names.remove(m.name(), c.id());
        rooms.computeIfPresent(m.room(), (k, set) -> {
            set.remove(c);
            return set.isEmpty() ? null : set;
        });
    }

    private static String nonEmpty(JsonNode v) {
        return v != null && v.isTextual() && !v.textValue().isEmpty() ? v.textValue() : null;
    }

    private String notice(String text) {
        return mapper.createObjectNode().put("type", "system").put("message", text).toString();
    }
}
