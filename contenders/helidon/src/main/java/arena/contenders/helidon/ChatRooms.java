package arena.contenders.helidon;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The chat's shared state (study 000), in concurrent maps: the names taken server-wide and the
 * members of each room. No global lock: a name is claimed with putIfAbsent, and a room's member
 * set is created and removed with the map's atomic compute, so a join never races the removal of
 * an emptied room.
 *
 * <p>Broadcast runs on the sender's own virtual thread (the one that read its frame) and only
 * queues the text on each member's {@link ChatMember} outbox; each member's writer thread does
 * the socket write. One sender's frames are read and broadcast one after the other on one thread,
 * and every outbox is FIFO, so every member gets one sender's messages in the order sent.
 */
final class ChatRooms {

    private final ConcurrentHashMap<String, ChatMember> names = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Set<ChatMember>> rooms = new ConcurrentHashMap<>();

    /** Claims the name and enters the room; false when the name is taken. */
    boolean join(ChatMember member, String name, String room) {
        if (names.putIfAbsent(name, member) != null) {
            return false;
        }
        member.joined(name, room);
        rooms.compute(room, (key, members) -> {
            Set<ChatMember> set = members != null ? members : ConcurrentHashMap.newKeySet();
            set.add(member);
            return set;
        });
        return true;
    }

    /** Frees the name and leaves the room, at once; safe to call more than once. */
    void leave(ChatMember member) {
        String name = member.name();
        if (name == null || !names.remove(name, member)) {
            return;
        }
        rooms.computeIfPresent(member.room(), (key, members) -> {
            members.remove(member);
            return members.isEmpty() ? null : members;
        });
    }

    /**
     * Queues text for every member of the room, the sender included. A member whose outbox is
     * full (it has not taken {@link ChatMember#MAX_QUEUED} frames) is dropped from the chat
     * rather than let it hold the room up.
     */
    void broadcast(String room, String text) {
        Set<ChatMember> members = rooms.get(room);
        if (members == null) {
            return;
        }
        for (ChatMember member : members) {
            if (!member.offer(text)) {
                leave(member);
                member.drop();
            }
        }
    }
}
