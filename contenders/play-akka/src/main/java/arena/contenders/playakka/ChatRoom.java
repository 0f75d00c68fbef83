package arena.contenders.playakka;

import java.util.HashMap;
import java.util.Map;

import akka.actor.AbstractActor;
import akka.actor.ActorRef;
import akka.actor.Props;
import akka.actor.Terminated;
import play.http.websocket.Message;

/**
 * One chat room: an actor holding its members' outgoing WebSocket refs, keyed by each member's
 * connection actor (which it watches, so a closed connection leaves the room at once).
 *
 * <p>Every message of the room passes through this actor one at a time and is told to each
 * member's outgoing ref in turn. Akka keeps the order of messages between one sender and one
 * receiver, so a member gets one sender's messages (connection actor, then room, then its
 * outgoing ref) in the order sent, each once.
 */
final class ChatRoom extends AbstractActor {

    /** A member enters: {@code out} is its connection's outgoing ref; the sender is its actor. */
    record Enter(ActorRef out) {
    }

    /** A chat message, already encoded, for every member (the sender included). */
    record Say(Message.Text frame) {
    }

    static Props props() {
        return Props.create(ChatRoom.class, ChatRoom::new);
    }

    private final Map<ActorRef, ActorRef> members = new HashMap<>();

    @Override
    public Receive createReceive() {
        return receiveBuilder()
                .match(Say.class, say -> {
                    for (ActorRef out : members.values()) {
                        out.tell(say.frame(), getSelf());
                    }
                })
                .match(Enter.class, enter -> {
                    members.put(getSender(), enter.out());
                    getContext().watch(getSender());
                })
                .match(Terminated.class, terminated -> members.remove(terminated.getActor()))
                .build();
    }
}
