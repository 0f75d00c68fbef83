package arena.contenders.playakka;

import java.util.HashMap;
import java.util.Map;

import akka.actor.AbstractActor;
import akka.actor.ActorRef;
import akka.actor.Props;
import akka.actor.Terminated;

/**
 * The one actor that owns the chat's names and rooms (study 000). Names are unique because only
 * this actor hands them out, one Join at a time. Each room is a {@link ChatRoom} child actor,
 * created on its first join and stopped when its last member is gone. The registry watches every
 * joined connection actor (Akka DeathWatch), so a name is free again as soon as its connection's
 * actor stops, however the connection ended.
 */
final class ChatRegistry extends AbstractActor {

    /** Asks for a name and a room; answered with {@link Joined} or {@link Taken}. */
    record Join(String name, String room) {
    }

    /** The name is yours; {@code room} is the room's actor. */
    record Joined(ActorRef room) {
    }

    /** The name belongs to another open connection. */
    record Taken(String name) {
    }

    private record Member(String name, String room) {
    }

    /** A room's actor and how many joined connections hold it. */
    private static final class Room {
        final ActorRef ref;
        int members;

        Room(ActorRef ref) {
            this.ref = ref;
        }
    }

    static Props props() {
        return Props.create(ChatRegistry.class, ChatRegistry::new);
    }

    private final Map<String, ActorRef> names = new HashMap<>();
    private final Map<ActorRef, Member> members = new HashMap<>();
    private final Map<String, Room> rooms = new HashMap<>();

    @Override
    public Receive createReceive() {
        return receiveBuilder()
                .match(Join.class, this::join)
                .match(Terminated.class, this::gone)
                .build();
    }

    private void join(Join join) {
        ActorRef user = getSender();
        if (names.containsKey(join.name())) {
            user.tell(new Taken(join.name()), getSelf());
            return;
        }
        names.put(join.name(), user);
        members.put(user, new Member(join.name(), join.room()));
        getContext().watch(user);
        Room room = rooms.computeIfAbsent(join.room(),
                key -> new Room(getContext().actorOf(ChatRoom.props())));
        room.members++;
        user.tell(new Joined(room.ref), getSelf());
    }

    private void gone(Terminated terminated) {
        Member member = members.remove(terminated.getActor());
        if (member == null) {
            return;
        }
        names.remove(member.name());
        Room room = rooms.get(member.room());
        if (--room.members == 0) {
            rooms.remove(member.room());
            getContext().stop(room.ref);
        }
    }
}
