package arena.contenders.vertx;

import java.util.ArrayDeque;
import java.util.List;

import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.HttpException;

import arena.contenders.vertxstream.Frames;
import arena.contenders.vertxstream.StreamStats;

/**
 * Study 003's /stream, one instance per {@link HttpVerticle}. Each connection is a
 * {@link Client} that lives on the event loop that accepted it: its generator (a periodic timer,
 * or batches queued with runOnContext), its queue and its writes all run there, so none of its
 * state needs a lock.
 *
 * <p>With back-pressure on, a message waits in the client's own {@link ArrayDeque} (at most
 * {@link #QUEUE}; one more drops the oldest) until it may be written: at most
 * {@link #IN_FLIGHT} writes whose future has not completed (Netty completes it once the frame
 * is in the socket), and never while {@code writeQueueFull()} (Netty's channel over its
 * high-water mark, 64 KiB); the {@code drainHandler} and each write's completion resume it.
 * With back-pressure off, each message is written as it is made, whatever
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
    /** rate 0: messages per batch, each batch a task of its own on the event loop. */
    static final int BATCH = 100;
    /** rate > 0: the generator's tick. */
    static final long TICK_MS = 10;

    private final Vertx vertx;
    private final boolean backpressure;
    private final StreamStats stats;

    Stream(Vertx vertx, boolean backpressure) {
        this.vertx = vertx;
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
                .onSuccess(ws -> new Client(ws, vertx.getOrCreateContext(), rate, size).start())
                .onFailure(e -> {
                    if (!ctx.response().ended()) {
                        ctx.fail(new HttpException(400, "WebSocket handshake failed: " + e.getMessage()));
                    }
                });
    }

    /** GET /stream/stats. */
    void stats(RoutingContext ctx) {
        ctx.response()
                .putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
                .end(stats.toJson().toBuffer());
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

    /** One connection; everything here runs on its context's event loop. */
    private final class Client {
        final ServerWebSocket ws;
        final Context context;
        final int rate;
        final Frames frames;
        /** Back-pressure on: the messages waiting, oldest first. */
        final ArrayDeque<String> queue = new ArrayDeque<>();
        /** Writes handed to the WebSocket whose future has not completed yet. */
        int inFlight;
        /** Guards drain() against itself: a write that completes at once calls back into it. */
        boolean draining;
        boolean closed;
        long timer = -1;
        long started;

        Client(ServerWebSocket ws, Context context, int rate, int size) {
            this.ws = ws;
            this.context = context;
            this.rate = rate;
            this.frames = new Frames(size);
        }

        void start() {
            stats.clients.incrementAndGet();
            ws.handler(data -> { }); // what the client sends is read and ignored
            ws.exceptionHandler(e -> { }); // a reset connection ends in the close handler
            ws.closeHandler(v -> stop());
            if (backpressure) {
                ws.drainHandler(v -> drain());
            }
            if (rate > 0) {
                started = System.nanoTime();
                timer = vertx.setPeriodic(TICK_MS, id -> tick());
            } else {
                context.runOnContext(v -> batch());
            }
        }

        /** rate > 0: makes what the clock says is due since the start. */
        void tick() {
            long due = (System.nanoTime() - started) / 1_000 * rate / 1_000_000;
            while (frames.count() < due && !closed) {
                offer(frames.next());
            }
            drain();
        }

        /** rate 0: one batch, then the next as a new task on the loop, after what is queued there. */
        void batch() {
            if (closed) {
                return;
            }
            for (int i = 0; i < BATCH; i++) {
                offer(frames.next());
            }
            drain();
            context.runOnContext(v -> batch());
        }

        void offer(String message) {
            stats.generated.increment();
            if (!backpressure) {
                stats.sent.increment();
                ws.writeTextMessage(message); // whatever writeQueueFull() says
                return;
            }
            if (queue.size() == QUEUE) {
                queue.pollFirst();
                stats.dropped.increment();
            }
            queue.addLast(message);
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

        /** The connection is gone: the generator stops and the waiting messages are freed. */
        void stop() {
            if (closed) {
                return;
            }
            closed = true;
            if (timer >= 0) {
                vertx.cancelTimer(timer);
            }
            queue.clear();
            stats.clients.decrementAndGet();
        }
    }
}
