package arena.contenders.quarkuscommon;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import jakarta.inject.Singleton;

/**
 * /stream/stats: totals since start over every client. {@code sent} counts what was handed to
 * the transport (with back-pressure: taken from the queue into flight; without: every
 * generated message), so {@code generated = sent + dropped + waiting}.
 */
@Singleton
public class StreamStats {

    public final AtomicLong clients = new AtomicLong();
    public final LongAdder generated = new LongAdder();
    public final LongAdder sent = new LongAdder();
    public final LongAdder dropped = new LongAdder();

    public String json() {
        return "{\"clients\":" + clients.get() + ",\"generated\":" + generated.sum() + ",\"sent\":" + sent.sum()
                + ",\"dropped\":" + dropped.sum() + "}";
    }
}
