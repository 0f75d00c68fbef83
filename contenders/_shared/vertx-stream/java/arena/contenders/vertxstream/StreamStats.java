package arena.contenders.vertxstream;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.Shareable;

/**
 * /stream/stats: totals since start over every connection, so one object in a local shared map,
 * counted from all event loops at once (hence the adders). In vertx every verticle instance
 * counts into it; in vertx-eventbus the generators (service verticles: {@code clients},
 * {@code generated}) and the WebSockets (HTTP verticles: {@code sent}, {@code dropped}) do.
 * {@code clients} counts the generators running.
 */
public final class StreamStats implements Shareable {

    public final AtomicLong clients = new AtomicLong();
    public final LongAdder generated = new LongAdder();
    public final LongAdder sent = new LongAdder();
    public final LongAdder dropped = new LongAdder();

    private StreamStats() {
    }

    /** The one instance, whichever verticle instance asks first creates it. */
    public static StreamStats of(Vertx vertx) {
        return vertx.sharedData().<String, StreamStats>getLocalMap("arena.stream")
                .computeIfAbsent("stats", key -> new StreamStats());
    }

    public JsonObject toJson() {
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
