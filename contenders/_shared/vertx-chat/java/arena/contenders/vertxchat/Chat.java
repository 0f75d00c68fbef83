package arena.contenders.vertxchat;

import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.LocalMap;
import io.vertx.core.shareddata.Shareable;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.HttpException;

/**
 * Study 000's chat on /chat, for both Vert.x contenders: the upgrade, the frames and their rules,
 * the names (one of Vert.x's local shared maps, which every verticle instance sees, so
 * {@code putIfAbsent} makes a name unique across the server) and each member's writes. What the
 * two compare is how a room reaches its members, so that is all a subclass adds: vertx keeps
 * the rooms in a local map and hands each frame to every member's own context, vertx-eventbus
 * makes a room an EventBus address that every member consumes.
 *
 * <p>One instance per HttpVerticle, so one per event loop. Everything a member's WebSocket does
 * runs on the context that accepted it, its event loop.
 *
 * @param <M> the subclass's member, with what its rooms need
 */
public abstract class Chat<M extends Chat.Member> {

    /**
     * The contract's largest message (a single frame, or the sum of its fragments): Vert.x's
     * message aggregator refuses a bigger one and the chat closes it with 1009.
     */
    public static final int MAX_MESSAGE = 64 * 1024;
    /**
     * Netty's frame limit sits above the message limit on purpose. In Vert.x 4.5 a frame over
     * maxWebSocketFrameSize fails Netty's decoder (its close on protocol violation is off), and
     * Vert.x closes the TCP connection right after calling the exception handler. The 1009
     * close frame written there is lost whenever earlier frames came in the same read (writes
     * during a read are flushed only at its end): the client then sees 1006. A frame between
     * 64 and 256 KiB passes the decoder and is refused by the message limit instead, always
     * with a 1009 close frame; only a frame over 256 KiB can end with 1006.
     */
    public static final int MAX_FRAME = 4 * MAX_MESSAGE;
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

    /** Every joined name, across all instances. */
    private final LocalMap<String, M> names;

    protected Chat(Vertx vertx) {
        names = vertx.sharedData().getLocalMap("arena.chat.names");
    }

    /**
     * A chat user, registered under its name in the local map (hence {@link Shareable}). Its
     * state is used on its WebSocket's context only; a subclass adds what its rooms need.
     */
    public abstract static class Member implements Shareable {
        final ServerWebSocket ws;
        String name;
        String room;
        /** Set once the server has started to close it; later frames are ignored. */
        boolean closing;

        protected Member(ServerWebSocket ws) {
            this.ws = ws;
        }

        /** The room it joined (null before the join). */
        public final String room() {
            return room;
        }

        /** Writes one frame; runs on this member's context only. */
        public final void write(String frame) {
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

    /** A new member for a WebSocket just accepted; called on its context. */
    protected abstract M member(ServerWebSocket ws);

    /** The member has its name and now joins {@link Member#room()}. */
    protected abstract void enter(M member);

    /** Delivers the frame to every member of the sender's room, the sender included. */
    protected abstract void broadcast(M sender, String frame);

    /** The joined member's connection is gone: it leaves its room. */
    protected abstract void exit(M member);

    /** GET /chat: upgrades to a WebSocket (a plain GET is a 400) and takes it in. */
    public void upgrade(RoutingContext ctx) {
        if (!"websocket".equalsIgnoreCase(ctx.request().getHeader(HttpHeaders.UPGRADE))) {
            ctx.fail(new HttpException(400, "/chat is a WebSocket: upgrade the request"));
            return;
        }
        ctx.request().toWebSocket()
                .onSuccess(this::connect)
                .onFailure(e -> {
                    if (!ctx.response().ended()) {
                        ctx.fail(new HttpException(400, "WebSocket handshake failed: " + e.getMessage()));
                    }
                });
    }

    /** Takes a WebSocket just accepted on /chat; runs on its context. */
    private void connect(ServerWebSocket ws) {
        M member = member(ws);
        ws.setWriteQueueMaxSize(WRITE_QUEUE_MAX);
        ws.textMessageHandler(text -> onText(member, text));
        ws.binaryMessageHandler(data -> onText(member, data.toString()));
        ws.exceptionHandler(e -> onError(member, e));
        ws.closeHandler(v -> leave(member));
    }

    private void onText(M member, String text) {
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

    private boolean join(M member, String name, String room) {
        if (names.putIfAbsent(name, member) != null) {
            return false;
        }
        member.name = name;
        member.room = room;
        enter(member);
        return true;
    }

    /** On close: the name is free at once and the member leaves its room. */
    private void leave(M member) {
        member.closing = true;
        if (member.name == null) {
            return;
        }
        names.removeIfPresent(member.name, member);
        exit(member);
    }

    /**
     * A message over maxWebSocketMessageSize (one frame or several) fails Vert.x's message
     * aggregator with an IllegalStateException: close with 1009, and ignore the fragments that
     * may still follow. A frame over maxWebSocketFrameSize fails Netty's decoder with its own
     * status (1009); the close frame is attempted, but Vert.x drops the connection right after
     * (see {@link #MAX_FRAME}). Other errors (a reset connection) end in the close handler.
     */
    private void onError(M member, Throwable e) {
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
