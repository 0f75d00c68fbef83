package arena.contenders.playakka;

import java.util.ArrayDeque;
import java.util.concurrent.locks.ReentrantLock;

import akka.stream.stage.AsyncCallback;

/**
 * One /stream client's queue of generated messages (study 003), between the generator (on Akka's
 * dispatcher) and the client's stream (its graph stage, {@link ClientQueueSource}), modelled on
 * Akka's own {@code BoundedSourceQueue}: the generator offers without waiting; the stage takes one
 * message per pull, and when it finds the queue empty it asks to be woken by the next offer (an
 * async callback into the stream).
 *
 * <p>With back-pressure the queue holds at most {@link #MAX_WAITING} messages and an offer to a
 * full queue drops the oldest (Akka's {@code OverflowStrategy.dropHead}, counted, which
 * {@code Source.queue} does not tell). Without it the queue has no bound.
 */
final class ClientQueue {

    /** Messages waiting with back-pressure on, at most. */
    static final int MAX_WAITING = 5_000;

    private final boolean backpressure;
    private final StreamStats stats;
    private final ReentrantLock lock = new ReentrantLock();
    /** Guarded by lock. */
    private final ArrayDeque<String> queue = new ArrayDeque<>();
    /** Guarded by lock: the stage found the queue empty with demand and waits for an offer. */
    private boolean waiting;
    /** Guarded by lock (and volatile for the generator's unlocked check). */
    private volatile boolean closed;
    private final AsyncCallback<Boolean> wake;

    ClientQueue(boolean backpressure, StreamStats stats, AsyncCallback<Boolean> wake) {
        this.backpressure = backpressure;
        this.stats = stats;
        this.wake = wake;
    }

    boolean closed() {
        return closed;
    }

    /** Generator side: queues n messages of batch (and clears them from it). */
    void offer(String[] batch, int n) {
        stats.generated.add(n);
        if (!backpressure) {
            // Off: every generated message counts as handed to the connection.
            stats.sent.add(n);
        }
        int dropped = 0;
        boolean wakeUp = false;
        lock.lock();
        try {
            if (!closed) {
                for (int i = 0; i < n; i++) {
                    if (backpressure && queue.size() == MAX_WAITING) {
                        queue.pollFirst();
                        dropped++;
                    }
                    queue.addLast(batch[i]);
                }
                wakeUp = waiting;
                waiting = false;
            }
        } finally {
            lock.unlock();
        }
        java.util.Arrays.fill(batch, 0, n, null);
        if (dropped > 0) {
            stats.dropped.add(dropped);
        }
        if (wakeUp) {
            wake.invoke(Boolean.TRUE);
        }
    }

    /** Stage side, on a pull: the oldest message, or null (and a wake-up on the next offer). */
    String poll() {
        String message;
        lock.lock();
        try {
            message = queue.pollFirst();
            waiting = message == null;
        } finally {
            lock.unlock();
        }
        if (message != null && backpressure) {
            stats.sent.increment();
        }
        return message;
    }

    /** The stream is over: later offers are ignored and what waits is freed. */
    void close() {
        lock.lock();
        try {
            closed = true;
            waiting = false;
            queue.clear();
        } finally {
            lock.unlock();
        }
    }
}
