package arena.contenders.webfluxstream;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * {@code /stream/stats}: totals since start over all connections, updated from the generators'
 * threads and the event loops at once, hence {@link LongAdder}s.
 */
public final class StreamStats {

    /** The JSON answer, its members in this order. */
    public record Snapshot(int clients, long generated, long sent, long dropped) {
    }

    private final AtomicInteger clients = new AtomicInteger();
    private final LongAdder generated = new LongAdder();
    private final LongAdder sent = new LongAdder();
    private final LongAdder dropped = new LongAdder();

    public Snapshot snapshot() {
        // Read in the order that keeps generated >= sent + dropped while the counters move.
        long d = dropped.sum();
        long s = sent.sum();
        return new Snapshot(clients.get(), generated.sum(), s, d);
    }

    void opened() {
        clients.incrementAndGet();
    }

    void closed() {
        clients.decrementAndGet();
    }

    void generated() {
        generated.increment();
    }

    void sent() {
        sent.increment();
    }

    void dropped() {
        dropped.increment();
    }
}
