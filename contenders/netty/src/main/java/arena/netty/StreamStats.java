package arena.netty;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/** Study 003's server-wide counters, shown by GET /stream/stats; every event loop adds to them. */
final class StreamStats {

    final AtomicInteger clients = new AtomicInteger();
    final LongAdder generated = new LongAdder();
    final LongAdder sent = new LongAdder();
    final LongAdder dropped = new LongAdder();

    byte[] json() {
        return ("{\"clients\":" + clients.get() + ",\"generated\":" + generated.sum() + ",\"sent\":" + sent.sum()
                + ",\"dropped\":" + dropped.sum() + "}").getBytes(StandardCharsets.US_ASCII);
    }
}
