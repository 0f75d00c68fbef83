package arena.contenders.vertx;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.shareddata.LocalMap;
import io.vertx.core.shareddata.Shareable;

import arena.contenders.vertxchat.Chat;

/**
 * Study 000's chat without the EventBus: the rooms of the shared {@link Chat}. They live in one
 * of Vert.x's local shared maps ({@code vertx.sharedData().getLocalMap}), which every instance
 * sees. The members of one room are connections on different event loops: a sender never
 * touches another member's WebSocket from its own thread, it hands the frame to that member's
 * context ({@code runOnContext}), whose tasks run in the order they were queued. So every member
 * gets one sender's messages in the order sent, and every WebSocket is only used on its own loop.
 */
final class LocalMapChat extends Chat<LocalMapChat.LoopMember> {

    /** Every room with at least one member, across all instances. */
    private final LocalMap<String, Room> rooms;
    private final Vertx vertx;

    LocalMapChat(Vertx vertx) {
        super(vertx);
        this.vertx = vertx;
        rooms = vertx.sharedData().getLocalMap("arena.chat.rooms");
    }

    /** A member and its event loop. Other event loops only read its final {@code context}. */
    static final class LoopMember extends Chat.Member {
        /** The context the WebSocket was accepted on: its event loop. */
        final Context context;

        LoopMember(ServerWebSocket ws, Context context) {
            super(ws);
            this.context = context;
        }
    }

    /** The members of one room: a concurrent set that senders on any event loop iterate. */
    private static final class Room implements Shareable {
        final Set<LoopMember> members = ConcurrentHashMap.newKeySet();
    }

    @Override
    protected LoopMember member(ServerWebSocket ws) {
        return new LoopMember(ws, vertx.getOrCreateContext());
    }

    @Override
    protected void enter(LoopMember member) {
        rooms.compute(member.room(), (key, r) -> {
            Room joined = r == null ? new Room() : r;
            joined.members.add(member);
            return joined;
        });
    }

    /** Hands the frame to every member of the sender's room, each on its own context. */
    @Override
    protected void broadcast(LoopMember sender, String frame) {
        Room room = rooms.get(sender.room());
        if (room == null) {
            return;
        }
        for (LoopMember peer : room.members) {
            // The sender too: its copy then goes out after the frames this read brought in have
            // been handled and flushed, so writeQueueFull only counts what the client left unread.
            peer.context.runOnContext(v -> peer.write(frame));
        }
    }

    /** Leaves the room; an empty room goes. */
    @Override
    protected void exit(LoopMember member) {
        rooms.computeIfPresent(member.room(), (key, r) -> {
            r.members.remove(member);
            return r.members.isEmpty() ? null : r;
        });
    }
}
