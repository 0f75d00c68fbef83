package arena.contenders.vertxbus;

import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.LocalMap;
import io.vertx.core.shareddata.Shareable;

/**
 * Study 000's chat on /chat, through the EventBus, as the study's "Vert.x with EventBus" app: a
 * room is an EventBus address. Every member consumes its room's address, and a message is
 * published to that address, so the bus hands it to every member, the sender included. One
 * instance per {@link HttpVerticle}, so one per event loop; the names live in one of Vert.x's
 * local shared maps, which every instance sees.
 *
 * <p>A member's consumer is registered from the WebSocket's own context, so the bus runs its
 * handler there, as a task on that event loop: the WebSocket is only ever used on its own
 * loop. The bus delivers the messages of one sender to one consumer in the order they were
 * published, so every member gets one sender's messages in order.
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

    /** A room's EventBus address is this prefix and the room's name. */
    static final String ROOM_ADDRESS = "arena.chat.room.";

    private static final short POLICY_VIOLATION = 1008;
    private static final short MESSAGE_TOO_BIG = 1009;
    private static final short TRY_AGAIN_LATER = 1013;

    private static final String NOT_JSON = notice("not a JSON object");
    private static final String JOIN_FIRST = notice("join first with {\"name\",\"chat\"}");
    private static final String INCOMPLETE = notice("a message needs name, chat and message");

    private final EventBus bus;
    /** Every joined name, across all instances (putIfAbsent makes a name unique). */
    private final LocalMap<String, Member> names;

    Chat(Vertx vertx) {
        bus = vertx.eventBus();
        names = vertx.sharedData().getLocalMap("arena.chat.names");
    }

    /**
     * A chat user, registered under its name in the local map (hence {@link Shareable}); no
     * other thread uses it: everything here runs on the WebSocket's context.
     */
    private static final class Member implements Shareable {
        final ServerWebSocket ws;
        String name;
        String room;
        String address;
        /** Its subscription to the room's address, once joined. */
        MessageConsumer<String> consumer;
        /** Set once the server has started to close it; later frames are ignored. */
        boolean closing;

        Member(ServerWebSocket ws) {
            this.ws = ws;
        }

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

    /** Takes a WebSocket just accepted on /chat; runs on its context. */
    void connect(ServerWebSocket ws) {
        Member member = new Member(ws);
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
            // Published to the room's address: every member's consumer gets it, the sender's too.
            bus.publish(member.address, new JsonObject()
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
        member.address = ROOM_ADDRESS + room;
        // On the local bus the consumer is registered at once, on this (the WebSocket's) context.
        member.consumer = bus.<String>consumer(member.address, msg -> member.write(msg.body()));
        return true;
    }

    /** On close: the name is free at once and the member leaves its room (unsubscribes). */
    private void leave(Member member) {
        member.closing = true;
        if (member.name == null) {
            return;
        }
        names.removeIfPresent(member.name, member);
        member.consumer.unregister();
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
