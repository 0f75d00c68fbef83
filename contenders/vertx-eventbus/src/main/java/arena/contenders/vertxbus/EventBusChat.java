package arena.contenders.vertxbus;

import io.vertx.core.Vertx;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.http.ServerWebSocket;

import arena.contenders.vertxchat.Chat;

/**
 * Study 000's chat through the EventBus, as the study's "Vert.x with EventBus" app: the rooms of
 * the shared {@link Chat}. A room is an EventBus address. Every member consumes its room's
 * address, and a message is published to that address, so the bus hands it to every member, the
 * sender included.
 *
 * <p>A member's consumer is registered from the WebSocket's own context, so the bus runs its
 * handler there, as a task on that event loop: the WebSocket is only ever used on its own
 * loop. The bus delivers the messages of one sender to one consumer in the order they were
 * published, so every member gets one sender's messages in order.
 */
final class EventBusChat extends Chat<EventBusChat.BusMember> {

    /** A room's EventBus address is this prefix and the room's name. */
    static final String ROOM_ADDRESS = "arena.chat.room.";

    private final EventBus bus;

    EventBusChat(Vertx vertx) {
        super(vertx);
        bus = vertx.eventBus();
    }

    /** A member and its subscription; no other thread uses it. */
    static final class BusMember extends Chat.Member {
        String address;
        /** Its subscription to the room's address, once joined. */
        MessageConsumer<String> consumer;

        BusMember(ServerWebSocket ws) {
            super(ws);
        }
    }

    @Override
    protected BusMember member(ServerWebSocket ws) {
        return new BusMember(ws);
    }

    @Override
    protected void enter(BusMember member) {
        member.address = ROOM_ADDRESS + member.room();
        // On the local bus the consumer is registered at once, on this (the WebSocket's) context.
        member.consumer = bus.<String>consumer(member.address, msg -> member.write(msg.body()));
    }

    /** Published to the room's address: every member's consumer gets it, the sender's too. */
    @Override
    protected void broadcast(BusMember sender, String frame) {
        bus.publish(sender.address, frame);
    }

    /** Leaves the room: unsubscribes. */
    @Override
    protected void exit(BusMember member) {
        member.consumer.unregister();
    }
}
