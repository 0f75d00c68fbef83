package arena.contenders.webfluxchat;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The chat's shared state: who holds which name, and who is in which room. Both are
 * {@link ConcurrentHashMap}s, so joins, leaves and broadcasts from different event loops need
 * no lock of their own.
 */
public final class ChatRooms {

    /** Names taken, server-wide, while their connection is open. */
    private final ConcurrentHashMap<String, ChatMember> names = new ConcurrentHashMap<>();

    /** Room name to its members; a room that empties is removed. */
    private final ConcurrentHashMap<String, Set<ChatMember>> rooms = new ConcurrentHashMap<>();

    /** Takes the name and enters the room; false when the name is held by another connection. */
    boolean join(ChatMember member, String name, String room) {
        if (names.putIfAbsent(name, member) != null) {
            return false;
        }
        member.joined(name, room);
        rooms.compute(room, (r, members) -> {
            Set<ChatMember> set = members != null ? members : ConcurrentHashMap.newKeySet();
            set.add(member);
            return set;
        });
        if (member.isGone()) { // its connection ended while it was joining
            leave(member);
        }
        return true;
    }

    /** Frees the name and leaves the room; safe to call more than once. */
    void leave(ChatMember member) {
        member.gone();
        String name = member.name();
        if (name == null) {
            return;
        }
        rooms.computeIfPresent(member.room(), (r, members) -> {
            members.remove(member);
            return members.isEmpty() ? null : members;
        });
        names.remove(name, member);
    }

    /**
     * Queues one encoded message for every member of the room, the sender included. A sender's
     * messages are broadcast one after the other from its own connection's event loop, and
     * each member's queue is first in, first out, so every member gets them in the order sent.
     * A member whose queue is full is dropped (see {@link ChatMember#offer}); nobody waits.
     */
    void broadcast(String room, byte[] frame) {
        Set<ChatMember> members = rooms.get(room);
        if (members == null) {
            return;
        }
        for (ChatMember member : members) {
            if (!member.offer(frame)) {
                leave(member);
            }
        }
    }
}
