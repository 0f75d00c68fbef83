package arena.contenders.vertx;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.LocalMap;
import io.vertx.core.shareddata.Shareable;

/**
 * Study 000's chat on /chat, without the EventBus. One instance per {@link HttpVerticle}, so one
 * per event loop; the names and the rooms live in two of Vert.x's local shared maps
 * ({@code vertx.sharedData().getLocalMap}), which every instance sees. The members of one room
 * are connections on different event loops: a sender never touches another member's
 * WebSocket from its own thread, it hands the frame to that member's context
 * ({@code runOnContext}), whose tasks run in the order they were queued. So every member gets
 * one sender's messages in the order sent, and every WebSocket is only used on its own loop.
 */
final class Chat {

    /**
     * The contract's largest message (a single frame, or the sum of its fragments): Vert.x's
     * message aggregator refuses a bigger one and the chat closes it with 1009.
     */
    static final int MAX_MESSAGE = 64 * 1024;
    /**
     * Netty's frame limit sits above the message limit on purpose. In Vert.x 4.5 a frame over
     * maxWebSocketFrameSize fails Netty's decoder (its close on protocol violation is off), and
     * Vert.x closes the TCP connection right after calling the exception handler. The 1009
     * close frame written there is lost whenever earlier frames came in the same read (writes
     * during a read are flushed only at its end): the client then sees 1006. A frame between
     * 64 and 256 KiB passes the decoder and is refused by the message limit instead, always
     * with a 1009 close frame; only a frame over 256 KiB can end with 1006.
     */
    static final int MAX_FRAME = 4 * MAX_MESSAGE;
    /**
     * How much a member may have queued and unsent before it is dropped (close 1013): about
     * 3,000 chat frames, what the lab's reference server allows (4,096 frames).
     */
    static final int WRITE_QUEUE_MAX = 256 * 1024;

    private static final short POLICY_VIOLATION = 1008;
    private static final short MESSAGE_TOO_BIG = 1009;
    private static final short TRY_AGAIN_LATER = 1013;

    private static final String NOT_JSON = notice("not a JSON object");
    private static final String JOIN_FIRST = notice("join first with {\"name\",\"chat\"}");
    private static final String INCOMPLETE = notice("a message needs name, chat and message");

    /** Every joined name, across all instances (putIfAbsent makes a name unique). */
    private final LocalMap<String, Member> names;
    /** Every room with at least one member, across all instances. */
    private final LocalMap<String, Room> rooms;

    Chat(Vertx vertx) {
        names = vertx.sharedData().getLocalMap("arena.chat.names");
        rooms = vertx.sharedData().getLocalMap("arena.chat.rooms");
    }

    /**
     * A member of a room, shared through the local maps (hence {@link Shareable}). Other event
     * loops only read its final {@code context}; everything else is used on that context only.
     */
    private static final class Member implements Shareable {
        final ServerWebSocket ws;
        /** The context the WebSocket was accepted on: its event loop. */
        final Context context;
        String name;
        String room;
        /** Set once the server has started to close it; later frames are ignored. */
        boolean closing;

        Member(ServerWebSocket ws, Context context) {
            this.ws = ws;
            this.context = context;
        }

        /** Runs on this member's context only. */
        void write(String frame) {
            if (closing || ws.isClosed()) {
                return;
            }
            if (ws.writeQueueFull()) {
                // Over WRITE_QUEUE_MAX unsent bytes: drop it rather than buffer without bound.
                close(TRY_AGAIN_LATER, "too slow");
                return;
            }
            ws.writeTextMessage(frame);
        }

        void close(short code, String reason) {
            if (!closing) {
                closing = true;
                ws.close(code, reason);
            }
        }
    }

    /** The members of one room: a concurrent set that senders on any event loop iterate. */
    private static final class Room implements Shareable {
        final Set<Member> members = ConcurrentHashMap.newKeySet();
    }

    /** Takes a WebSocket just accepted on /chat; runs on its context. */
    void connect(ServerWebSocket ws, Context context) {
        Member member = new Member(ws, context);
        ws.setWriteQueueMaxSize(WRITE_QUEUE_MAX);
        ws.textMessageHandler(text -> onText(member, text));
        ws.binaryMessageHandler(data -> onText(member, data.toString()));
        ws.exceptionHandler(e -> onError(member, e));
        ws.closeHandler(v -> leave(member));
    }

    private void onText(Member member, String text) {
        if (member.closing) {
            return;
        }
        JsonObject frame;
        try {
            frame = new JsonObject(text);
        } catch (RuntimeException e) {
            member.write(NOT_JSON);
            return;
        }
        String name = nonEmpty(frame.getValue("name"));
        String room = nonEmpty(frame.getValue("chat"));
        String message = frame.getValue("message") instanceof String s ? s : null;
        if (member.name == null) {
            if (name == null || room == null || frame.containsKey("message")) {
                member.write(JOIN_FIRST);
            } else if (!join(member, name, room)) {
                member.write(notice("the name " + name + " is taken"));
                member.close(POLICY_VIOLATION, "name taken"); // queued after the notice
            }
        } else if (name == null || room == null || message == null) {
            member.write(INCOMPLETE);
        } else {
            broadcast(member, new JsonObject()
                    .put("name", member.name)
                    .put("chat", member.room)
                    .put("message", message)
                    .encode());
        }
    }

    private boolean join(Member member, String name, String room) {
        if (names.putIfAbsent(name, member) != null) {
            return false;
        }
        member.name = name;
        member.room = room;
        rooms.compute(room, (key, r) -> {
            Room joined = r == null ? new Room() : r;
            joined.members.add(member);
            return joined;
        });
        return true;
    }

    /** Hands the frame to every member of the sender's room, each on its own context. */
    private void broadcast(Member sender, String frame) {
        Room room = rooms.get(sender.room);
        if (room == null) {
            return;
        }
        for (Member peer : room.members) {
            // The sender too: its copy then goes out after the frames this read brought in have
            // been handled and flushed, so writeQueueFull only counts what the client left unread.
            peer.context.runOnContext(v -> peer.write(frame));
        }
    }

    /** On close: the name is free at once and the member leaves its room (empty rooms go). */
    private void leave(Member member) {
        member.closing = true;
        if (member.name == null) {
            return;
        }
        names.removeIfPresent(member.name, member);
        rooms.computeIfPresent(member.room, (key, r) -> {
            r.members.remove(member);
            return r.members.isEmpty() ? null : r;
        });
    }

    /**
     * A message over maxWebSocketMessageSize (one frame or several) fails Vert.x's message
     * aggregator with an IllegalStateException: close with 1009, and ignore the fragments that
     * may still follow. A frame over maxWebSocketFrameSize fails Netty's decoder with its own
     * status (1009); the close frame is attempted, but Vert.x drops the connection right after
     * (see {@link #MAX_FRAME}). Other errors (a reset connection) end in the close handler.
     */
    private void onError(Member member, Throwable e) {
        if (e instanceof CorruptedWebSocketFrameException bad) {
            member.close((short) bad.closeStatus().code(), bad.closeStatus().reasonText());
        } else if (e instanceof IllegalStateException) {
            member.close(MESSAGE_TOO_BIG, "message over 64 KiB");
        }
    }

    private static String nonEmpty(Object value) {
        return value instanceof String s && !s.isEmpty() ? s : null;
    }

    private static String notice(String text) {
        return new JsonObject().put("type", "system").put("message", text).encode();
    }
}
