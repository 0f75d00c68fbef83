package arena.contenders.helidon;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * /stream/stats (study 003): totals since start over all clients. {@code sent} counts messages
 * handed to the socket: with back-pressure, those taken from a client's queue by its sender; without,
 * every generated one. So {@code generated = sent + dropped + waiting}.
 */
final class StreamStats {

    final AtomicInteger clients = new AtomicInteger();
    final LongAdder generated = new LongAdder();
    final LongAdder sent = new LongAdder();
    final LongAdder dropped = new LongAdder();

    byte[] json() {
        // Read in the reverse order of the counting (generated first, then sent or dropped), so
        // that a snapshot never shows more sent + dropped than generated.
        long sentNow = sent.sum();
        long droppedNow = dropped.sum();
        long generatedNow = generated.sum();
        return ("{\"clients\":" + clients.get()
                + ",\"generated\":" + generatedNow
                + ",\"sent\":" + sentNow
                + ",\"dropped\":" + droppedNow + "}").getBytes(StandardCharsets.US_ASCII);
    }
}
