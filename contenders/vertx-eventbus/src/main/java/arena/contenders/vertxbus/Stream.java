package arena.contenders.vertxbus;

import java.util.ArrayDeque;
import java.util.List;
import java.util.UUID;

import io.vertx.core.AsyncResult;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.HttpException;

import arena.contenders.vertxstream.Frames;
import arena.contenders.vertxstream.StreamStats;

/**
 * The HTTP side of /stream (study 003), one per {@link HttpVerticle}: the WebSockets. Each
 * connection consumes an EventBus address of its own, registered from its socket's context, so
 * the messages its generator ({@link StreamService}, on a service verticle) sends arrive as tasks
 * on the socket's event loop, in order; queue and writes are used there only.
 *
 * <p>With back-pressure on, a message waits in the connection's own {@link ArrayDeque} (at most
 * {@link #QUEUE}; one more drops the oldest) until it may be written: at most
 * {@link #IN_FLIGHT} writes whose future has not completed (Netty completes it once the frame
 * is in the socket), and never while {@code writeQueueFull()} (Netty's channel over its
 * high-water mark, 64 KiB); the {@code drainHandler} and each write's completion resume it.
 * With back-pressure off, each message is written as it arrives, whatever
 * {@code writeQueueFull()} says: Netty's outbound buffer grows without bound.
 */
final class Stream {

    static final int MAX_RATE = 1_000_000;
    static final int MIN_SIZE = 16;
    static final int MAX_SIZE = Frames.MAX_SIZE;
    static final int DEFAULT_SIZE = 250;
    /** Messages a client may have waiting; one more drops the oldest. */
    static final int QUEUE = 5_000;
    /** Writes a client may have under way. */
    static final int IN_FLIGHT = 100;
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

    /** GET /stream: the query checked first (400, no upgrade), then the WebSocket. */
    void upgrade(RoutingContext ctx) {
        int rate;
        int size;
        try {
            rate = param(ctx.queryParam("rate"), "rate", 0, 0, MAX_RATE);
            size = param(ctx.queryParam("size"), "size", DEFAULT_SIZE, MIN_SIZE, MAX_SIZE);
        } catch (HttpException e) {
            ctx.fail(e);
            return;
        }
        if (!"websocket".equalsIgnoreCase(ctx.request().getHeader(HttpHeaders.UPGRADE))) {
            ctx.fail(new HttpException(400, "/stream is a WebSocket: upgrade the request"));
            return;
        }
        ctx.request().toWebSocket()
                .onSuccess(ws -> new Client(ws).open(rate, size))
                .onFailure(e -> {
                    if (!ctx.response().ended()) {
                        ctx.fail(new HttpException(400, "WebSocket handshake failed: " + e.getMessage()));
                    }
                });
    }

    /** An integer in min..max, the default when absent; anything else (an empty value too) is a 400. */
    static int param(List<String> values, String name, int dflt, int min, int max) {
        if (values.isEmpty()) {
            return dflt;
        }
        String raw = values.get(0);
        try {
            int value = Integer.parseInt(raw);
            if (value >= min && value <= max) {
                return value;
            }
        } catch (NumberFormatException ignored) {
            // falls through to the 400
        }
        throw new HttpException(400, name + " must be an integer in " + min + ".." + max + ", got '" + raw + "'");
    }

    /** One connection; everything here runs on its socket's event loop. */
    private final class Client {
        final ServerWebSocket ws;
        final String address = CLIENT_ADDRESS + UUID.randomUUID();
        MessageConsumer<String> consumer;
        /** Back-pressure on: the messages waiting, oldest first. */
        final ArrayDeque<String> queue = new ArrayDeque<>();
        /** Writes handed to the WebSocket whose future has not completed yet. */
        int inFlight;
        /** Guards drain() against itself: a write that completes at once calls back into it. */
        boolean draining;
        boolean closed;

        Client(ServerWebSocket ws) {
            this.ws = ws;
        }

        /** Subscribes to its own address, then asks a service instance for a generator. */
        void open(int rate, int size) {
            ws.handler(data -> { }); // what the client sends is read and ignored
            ws.exceptionHandler(e -> { }); // a reset connection ends in the close handler
            ws.closeHandler(v -> close());
            if (backpressure) {
                ws.drainHandler(v -> drain());
            }
            // On the local bus the consumer is registered at once, on this (the WebSocket's) context.
            consumer = bus.consumer(address, this::receive);
            bus.request(Addresses.STREAM_OPEN, new JsonObject().put("address", address).put("rate", rate).put("size", size))
                    .onFailure(e -> {
                        consumer.unregister();
                        if (!closed) {
                            ws.close((short) 1011, "no stream service");
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
            if (closed) {
                if (lastOfBatch) {
                    msg.fail(410, "the WebSocket is closed");
                    consumer.unregister();
                }
                return;
            }
            if (!backpressure) {
                stats.sent.increment();
                ws.writeTextMessage(msg.body()); // whatever writeQueueFull() says
            } else {
                if (queue.size() == QUEUE) {
                    queue.pollFirst();
                    stats.dropped.increment();
                }
                queue.addLast(msg.body());
            }
            if (lastOfBatch) {
                drain();
                msg.reply(null);
            }
        }

        /** Back-pressure on: writes from the queue while fewer than 100 are under way and Netty takes more. */
        void drain() {
            if (!backpressure || draining) {
                return;
            }
            draining = true;
            try {
                // isClosed() first: once a close frame has gone either way, writeQueueFull() throws.
                while (!closed && inFlight < IN_FLIGHT && !queue.isEmpty() && !ws.isClosed() && !ws.writeQueueFull()) {
                    String message = queue.pollFirst();
                    inFlight++;
                    stats.sent.increment();
                    ws.writeTextMessage(message).onComplete(this::written);
                }
            } finally {
                draining = false;
            }
        }

        void written(AsyncResult<Void> result) {
            inFlight--;
            drain();
        }

        /** The connection is gone: the waiting messages are freed; the generator stops at its next reply. */
        void close() {
            closed = true;
            queue.clear();
        }
    }
}
