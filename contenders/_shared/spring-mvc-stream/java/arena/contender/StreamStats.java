package arena.contender;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** /stream's counters, totals since start over all clients, and GET /stream/stats. */
@RestController
class StreamStats {

    record Body(int clients, long generated, long sent, long dropped) {
    }

    final AtomicInteger clients = new AtomicInteger();
    final LongAdder generated = new LongAdder();
    /** With back-pressure: taken from the queue into flight; without: every generated message. */
    final LongAdder sent = new LongAdder();
    /** The oldest waiting messages dropped for a newer one when a client's queue was full. */
    final LongAdder dropped = new LongAdder();

    @GetMapping(path = "/stream/stats", produces = MediaType.APPLICATION_JSON_VALUE)
    Body stats() {
        return new Body(clients.get(), generated.sum(), sent.sum(), dropped.sum());
    }
}
