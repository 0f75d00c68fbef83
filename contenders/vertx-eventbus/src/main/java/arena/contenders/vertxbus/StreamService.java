package arena.contenders.vertxbus;

import io.vertx.core.AsyncResult;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;

import arena.contenders.vertxstream.Frames;
import arena.contenders.vertxstream.StreamStats;

/**
 * The service side of /stream (study 003), one per {@link ServiceVerticle}: the generators. A
 * stream is opened with a request to {@link Addresses#STREAM_OPEN} that names the WebSocket's
 * own address; the service instance that gets it runs that stream's generator on its event loop
 * and sends every message, built there, to that address, where the HTTP side queues or writes
 * it.
 *
 * <p>The EventBus has no demand signal of its own, so the generator keeps one batch on the bus:
 * up to {@link #BATCH} messages with {@code send}, the last one with {@code request}, whose reply
 * (the WebSocket's consumer has taken the whole batch) lets the next batch go. That is also the
 * yield between batches (the reply is a new task on this loop), and it bounds what waits on the
 * bus whatever the client does; what the client does not read waits on the HTTP side. A failed
 * reply (the WebSocket is closed, or its consumer gone) stops the generator.
 */
final class StreamService {

    /** rate 0: messages per batch; rate > 0: at most this many per batch as well. */
    static final int BATCH = 100;
    /** rate > 0: the generator's tick. */
    static final long TICK_MS = 10;

    private final Vertx vertx;
    private final EventBus bus;
    private final StreamStats stats;

    StreamService(Vertx vertx) {
        this.vertx = vertx;
        this.bus = vertx.eventBus();
        this.stats = StreamStats.of(vertx);
    }

    /** {@code {"address","rate","size"}} (checked by the HTTP verticle): starts a generator. */
    void open(Message<JsonObject> msg) {
        JsonObject body = msg.body();
        new Generator(body.getString("address"), body.getInteger("rate"), body.getInteger("size")).start();
        msg.reply(null);
    }

    /** /stream/stats: the counters, as the reply. */
    void stats(Message<Void> msg) {
        msg.reply(stats.toJson());
    }

    /** One stream's generator; runs on this service instance's event loop only. */
    private final class Generator {
        final String address;
        final int rate;
        final Frames frames;
        long started;
        long timer = -1;
        /** A batch is on the bus and its reply has not come back. */
        boolean waiting;
        boolean stopped;

        Generator(String address, int rate, int size) {
            this.address = address;
            this.rate = rate;
            this.frames = new Frames(size);
        }

        void start() {
            stats.clients.incrementAndGet(); // a client until its generator has stopped
            started = System.nanoTime();
            if (rate > 0) {
                timer = vertx.setPeriodic(TICK_MS, id -> pump());
            } else {
                pump();
            }
        }

        /** Sends the next batch, if one is due and none is on the bus. */
        void pump() {
            if (waiting || stopped) {
                return;
            }
            long due = rate > 0 ? (System.nanoTime() - started) / 1_000 * rate / 1_000_000 : Long.MAX_VALUE;
            int n = (int) Math.min(BATCH, due - frames.count());
            if (n <= 0) {
                return;
            }
            for (int i = 1; i < n; i++) {
                stats.generated.increment();
                bus.send(address, frames.next());
            }
            stats.generated.increment();
            waiting = true;
            bus.request(address, frames.next()).onComplete(this::taken);
        }

        /** The reply to a batch's last message: the next batch (rate 0), or what is still due. */
        void taken(AsyncResult<Message<Object>> reply) {
            waiting = false;
            if (reply.failed()) {
                stop();
            } else {
                pump();
            }
        }

        void stop() {
            stopped = true;
            if (timer >= 0) {
                vertx.cancelTimer(timer);
            }
            stats.clients.decrementAndGet();
        }
    }
}
