package arena.contenders.vertx;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.ext.web.RoutingContext;

import arena.contenders.vertxstream.Frames;
import arena.contenders.vertxstream.StreamOutbox;
import arena.contenders.vertxstream.StreamStats;
import arena.contenders.vertxstream.StreamUpgrade;

/**
 * Study 003's /stream without the EventBus, one instance per {@link HttpVerticle}. Each
 * connection is a {@link Client} that lives on the event loop that accepted it: its generator
 * (a periodic timer, or batches queued with runOnContext), its queue and its writes (the shared
 * {@link StreamOutbox}) all run there, so none of its state needs a lock.
 */
final class Stream {

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

    /** GET /stream: the shared checks and upgrade, then a generator on this event loop. */
    void upgrade(RoutingContext ctx) {
        StreamUpgrade.handle(ctx, (ws, rate, size) -> new Client(ws, vertx.getOrCreateContext(), rate, size).start());
    }

    /** GET /stream/stats. */
    void stats(RoutingContext ctx) {
        ctx.response()
                .putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
                .end(stats.toJson().toBuffer());
    }

    /** One connection; everything here runs on its context's event loop. */
    private final class Client {
        final Context context;
        final int rate;
        final Frames frames;
        final StreamOutbox outbox;
        long timer = -1;
        long started;

        Client(ServerWebSocket ws, Context context, int rate, int size) {
            this.context = context;
            this.rate = rate;
            this.frames = new Frames(size);
            this.outbox = new StreamOutbox(ws, backpressure, stats, this::stop);
        }

        void start() {
            stats.clients.incrementAndGet();
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
            while (frames.count() < due && !outbox.closed()) {
                offer(frames.next());
            }
            outbox.drain();
        }

        /** rate 0: one batch, then the next as a new task on the loop, after what is queued there. */
        void batch() {
            if (outbox.closed()) {
                return;
            }
            for (int i = 0; i < BATCH; i++) {
                offer(frames.next());
            }
            outbox.drain();
            context.runOnContext(v -> batch());
        }

        void offer(String message) {
            stats.generated.increment();
            outbox.offer(message);
        }

        /** The connection is gone (the outbox has freed the waiting messages): the generator stops. */
        void stop() {
            if (timer >= 0) {
                vertx.cancelTimer(timer);
            }
            stats.clients.decrementAndGet();
        }
    }
}
