package arena.contenders.vertxbus;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.Shareable;

/**
 * /stream/stats: totals since start over every connection, so one object in a local shared map
 * that the generators (service verticles) and the WebSockets (HTTP verticles) count into from
 * all event loops at once (hence the adders). {@code clients} counts the generators running.
 */
final class StreamStats implements Shareable {

    final AtomicLong clients = new AtomicLong();
    final LongAdder generated = new LongAdder();
    final LongAdder sent = new LongAdder();
    final LongAdder dropped = new LongAdder();

    /** The one instance, whichever verticle instance asks first creates it. */
    static StreamStats of(Vertx vertx) {
        return vertx.sharedData().<String, StreamStats>getLocalMap("arena.stream")
                .computeIfAbsent("stats", key -> new StreamStats());
    }

    JsonObject toJson() {
        // Read in the order that keeps generated >= sent + dropped while the counters move.
        long d = dropped.sum();
        long s = sent.sum();
        return new JsonObject()
                .put("clients", clients.get())
                .put("generated", generated.sum())
                .put("sent", s)
                .put("dropped", d);
    }
}
