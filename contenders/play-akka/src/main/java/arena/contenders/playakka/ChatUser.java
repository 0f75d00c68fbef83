package arena.contenders.playakka;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;

import akka.actor.AbstractActorWithStash;
import akka.actor.ActorRef;
import akka.actor.Props;
import akka.actor.Terminated;
import play.http.websocket.Message;
import play.libs.Json;

/**
 * The actor of one /chat connection, made by Play's {@code ActorFlow}: every text frame the
 * client sends arrives here as a String, and what it tells {@code out} goes to the client.
 *
 * <p>Three states. Before the join, a valid {@code {"name","chat"}} frame asks the registry for
 * the name; frames that arrive while the registry answers are stashed and replayed after. Once
 * joined, each valid message goes to the room actor. A taken name gets a system frame and then a
 * close frame with 1008, both through {@code out} so they leave in that order.
 */
final class ChatUser extends AbstractActorWithStash {

    static Props props(ActorRef out, ActorRef registry) {
        return Props.create(ChatUser.class, () -> new ChatUser(out, registry));
    }

    private final ActorRef out;
    private final ActorRef registry;
    private String name;
    private String roomName;
    private ActorRef room;

    private ChatUser(ActorRef out, ActorRef registry) {
        this.out = out;
        this.registry = registry;
    }

    /**
     * Watches the outgoing ref: when the way out is gone (the client left, or Play failed the
     * stream of a member that fell {@link ChatSocket#OUT_BUFFER} frames behind), this actor stops,
     * so its name and room are freed at once and ActorFlow cancels the incoming side too.
     */
    @Override
    public void preStart() {
        getContext().watch(out);
    }

    @Override
    public Receive createReceive() {
        return waitingForJoin();
    }

    private Receive waitingForJoin() {
        return receiveBuilder()
                .match(String.class, this::beforeJoin)
                .match(Terminated.class, this::outGone)
                .build();
    }

    private Receive joining() {
        return receiveBuilder()
                .match(ChatRegistry.Joined.class, joined -> {
                    room = joined.room();
                    room.tell(new ChatRoom.Enter(out), getSelf());
                    getContext().become(joined());
                    unstashAll();
                })
                .match(ChatRegistry.Taken.class, taken -> {
                    notice("the name " + taken.name() + " is taken");
                    out.tell(new Message.Close(1008, "name taken"), getSelf());
                    getContext().become(receiveBuilder()
                            .match(Terminated.class, this::outGone)
                            .matchAny(ignored -> { })
                            .build());
                })
                .match(Terminated.class, this::outGone)
                .matchAny(frame -> stash())
                .build();
    }

    private Receive joined() {
        return receiveBuilder()
                .match(String.class, this::afterJoin)
                .match(Terminated.class, this::outGone)
                .build();
    }

    private void outGone(Terminated terminated) {
        if (terminated.getActor().equals(out)) {
            getContext().stop(getSelf());
        }
    }

    private void beforeJoin(String text) {
        JsonNode frame = parse(text);
        if (frame == null) {
            return;
        }
        String wanted = string(frame, "name");
        String room = string(frame, "chat");
        if (wanted == null || room == null || frame.has("message")) {
            notice("join first with {\"name\":\"<user>\",\"chat\":\"<room>\"}");
            return;
        }
        name = wanted;
        roomName = room;
        registry.tell(new ChatRegistry.Join(wanted, room), getSelf());
        getContext().become(joining());
    }

    private void afterJoin(String text) {
        JsonNode frame = parse(text);
        if (frame == null) {
            return;
        }
        JsonNode message = frame.get("message");
        if (string(frame, "name") == null || string(frame, "chat") == null
                || message == null || !message.isTextual()) {
            notice("a message needs name, chat and message");
            return;
        }
        String encoded = Json.stringify(Json.newObject()
                .put("name", name)
                .put("chat", roomName)
                .put("message", message.textValue()));
        room.tell(new ChatRoom.Say(new Message.Text(encoded)), getSelf());
    }

    /** The frame as a JSON object, or null after telling the client it is not one. */
    private JsonNode parse(String text) {
        JsonNode frame;
        try {
            frame = Json.mapper().readTree(text);
        } catch (JsonProcessingException e) {
            frame = null;
        }
        if (frame == null || !frame.isObject()) {
            notice("not a JSON object");
            return null;
        }
        return frame;
    }

    private void notice(String text) {
        out.tell(ChatSocket.system(text), getSelf());
    }

    private static String string(JsonNode frame, String field) {
        JsonNode value = frame.get(field);
        return value != null && value.isTextual() && !value.textValue().isEmpty() ? value.textValue() : null;
    }
}
