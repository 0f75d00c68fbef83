package arena.contenders.playakka;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import com.fasterxml.jackson.databind.node.ObjectNode;

import play.libs.Json;

/**
 * /stream/stats (study 003): totals since start over all clients. {@code sent} counts messages
 * handed to the WebSocket stream: with back-pressure, those the stream pulled from a client's
 * queue; without, every generated one. So {@code generated = sent + dropped + waiting}.
 */
final class StreamStats {

    final AtomicInteger clients = new AtomicInteger();
    final LongAdder generated = new LongAdder();
    final LongAdder sent = new LongAdder();
    final LongAdder dropped = new LongAdder();

    ObjectNode json() {
        // Read in the reverse order of the counting (generated first, then sent or dropped), so
        // that a snapshot never shows more sent + dropped than generated.
        long sentNow = sent.sum();
        long droppedNow = dropped.sum();
        long generatedNow = generated.sum();
        return Json.newObject()
                .put("clients", clients.get())
                .put("generated", generatedNow)
                .put("sent", sentNow)
                .put("dropped", droppedNow);
    }
}
