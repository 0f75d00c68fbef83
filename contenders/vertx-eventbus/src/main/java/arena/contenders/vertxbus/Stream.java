package arena.contenders.vertxbus;

import java.util.UUID;

import io.vertx.core.Vertx;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

import arena.contenders.vertxstream.StreamOutbox;
import arena.contenders.vertxstream.StreamStats;
import arena.contenders.vertxstream.StreamUpgrade;

/**
 * The HTTP side of /stream (study 003), one per {@link HttpVerticle}: the WebSockets. Each
 * connection consumes an EventBus address of its own, registered from its socket's context, so
 * the messages its generator ({@link StreamService}, on a service verticle) sends arrive as tasks
 * on the socket's event loop, in order, where the shared {@link StreamOutbox} queues and writes
 * them.
 */
final class Stream {

    /** A WebSocket's address is this prefix and a random id. */
    static final String CLIENT_ADDRESS = "arena.stream.client.";

    private final EventBus bus;
    private final boolean backpressure;
    private final StreamStats stats;

    Stream(Vertx vertx, boolean backpressure) {
        this.bus = vertx.eventBus();
        this.backpressure = backpressure;
        this.stats = StreamStats.of(vertx);
    }

    /** GET /stream: the shared checks and upgrade, then a generator asked for over the bus. */
    void upgrade(RoutingContext ctx) {
        StreamUpgrade.handle(ctx, (ws, rate, size) -> new Client(ws).open(rate, size));
    }

    /** One connection; everything here runs on its socket's event loop. */
    private final class Client {
        final String address = CLIENT_ADDRESS + UUID.randomUUID();
        final StreamOutbox outbox;
        MessageConsumer<String> consumer;

        Client(ServerWebSocket ws) {
            // On close the outbox frees the waiting messages; the generator stops at its next reply.
            this.outbox = new StreamOutbox(ws, backpressure, stats, () -> { });
        }

        /** Subscribes to its own address, then asks a service instance for a generator. */
        void open(int rate, int size) {
            // On the local bus the consumer is registered at once, on this (the WebSocket's) context.
            consumer = bus.consumer(address, this::receive);
            bus.request(Addresses.STREAM_OPEN, new JsonObject().put("address", address).put("rate", rate).put("size", size))
                    .onFailure(e -> {
                        consumer.unregister();
                        if (!outbox.closed()) {
                            outbox.ws().close((short) 1011, "no stream service");
                        }
                    });
        }

        /**
         * A message from the generator. The last one of each batch is a request: the reply lets
         * the generator send the next batch, and once the WebSocket is closed a failure stops it,
         * after which nothing more comes and the consumer goes.
         */
        void receive(Message<String> msg) {
            boolean lastOfBatch = msg.replyAddress() != null;
            if (outbox.closed()) {
                if (lastOfBatch) {
                    msg.fail(410, "the WebSocket is closed");
                    consumer.unregister();
                }
                return;
            }
            outbox.offer(msg.body());
            if (lastOfBatch) {
                outbox.drain();
                msg.reply(null);
            }
        }
    }
}
