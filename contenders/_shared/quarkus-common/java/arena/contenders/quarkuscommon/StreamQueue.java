package arena.contenders.quarkuscommon;

import java.util.ArrayDeque;

/**
 * One /stream client's messages between its generator and its sends, and the counting the
 * contract asks of them. With back-pressure at most {@link #MAX_WAITING} wait, a full queue
 * drops (and counts) its oldest, and {@code sent} counts what is taken into flight; without,
 * the queue has no bound and every generated message counts as sent when it is made. Not
 * thread-safe: the event-loop contender uses it on the client's loop, the virtual-thread one
 * under the client's lock.
 */
public final class StreamQueue {

    /** Generated messages that may wait per client with back-pressure. */
    public static final int MAX_WAITING = 5_000;
    /** Sends in flight per client with back-pressure (hand-off to the transport until done). */
    public static final int MAX_IN_FLIGHT = 100;

    private final ArrayDeque<String> waiting = new ArrayDeque<>();
    private final boolean bounded;
    private final StreamStats stats;

    public StreamQueue(boolean bounded, StreamStats stats) {
        this.bounded = bounded;
        this.stats = stats;
    }

    /** A message just generated. */
    public void offer(String message) {
        stats.generated.increment();
        if (!bounded) {
            stats.sent.increment();
        } else if (waiting.size() >= MAX_WAITING) {
            waiting.pollFirst();
            stats.dropped.increment();
        }
        waiting.addLast(message);
    }

    /** The oldest waiting message, taken to be sent; null when none waits. */
    public String take() {
        String message = waiting.pollFirst();
        if (message != null && bounded) {
            stats.sent.increment();
        }
        return message;
    }

    public boolean isEmpty() {
        return waiting.isEmpty();
    }

    /** The client is gone: its waiting messages are freed, neither sent nor dropped. */
    public void clear() {
        waiting.clear();
    }
}
