package arena.contenders.helidon;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

import io.helidon.common.buffers.BufferData;

import io.helidon.websocket.WsSession;

/**
 * One /stream connection (study 003): a generator virtual thread makes the messages and puts them
 * on this client's queue; a sender virtual thread takes them off and writes them with Helidon's
 * blocking {@link WsSession#send(String, boolean)}, the only thread that writes to the session.
 *
 * <p>Helidon 4's WebSocket send has no completion callback: it returns once the frame is written
 * to the socket (the server's {@code WsConnection} writes every frame straight to the socket, a
 * virtual thread parking while the kernel's send buffer is full). So the back-pressure is the
 * blocking send itself, with a bounded queue in front of it:
 * <ul>
 * <li><b>on</b>: the queue holds at most {@link #MAX_WAITING} messages; when it is full the generator
 * drops the oldest one (and counts it). The sender takes at most {@link #MAX_IN_FLIGHT} at a time
 * (that is "in flight": taken from the queue, counted as sent, not yet written) and writes them one
 * after the other; a send is "done" when the blocking write returns.</li>
 * <li><b>off</b>: the queue is unbounded and nothing is dropped: every generated message is sent at
 * once as far as the stack goes, and a slow reader makes the queue grow without bound.</li>
 * </ul>
 */
final class StreamClient {

    /** Messages taken from the queue and not yet written, at most. */
    static final int MAX_IN_FLIGHT = 100;
    /** Messages waiting in the queue with back-pressure on, at most. */
    static final int MAX_WAITING = 5_000;
    /** Messages the generator makes before it yields (rate 0) or offers at once (rate > 0). */
    static final int BATCH = 100;
    /** The generator's tick with a rate (the contract: at most 10 ms). */
    static final long TICK_NANOS = 10_000_000L;
    /** The rate-0 generator's yield between batches (see generate()). */
    private static final long YIELD_NANOS = 1;

    private final WsSession session;
    private final StreamParams params;
    private final boolean backpressure;
    private final StreamStats stats;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition ready = lock.newCondition();
    /** Guarded by lock. Bounded by MAX_WAITING with back-pressure, unbounded without. */
    private final ArrayDeque<String> queue = new ArrayDeque<>();
    /** Written under lock, read anywhere. */
    private volatile boolean running = true;
    /** Guarded by lock: the payload of a ping to answer, which the sender writes between messages. */
    private byte[] pong;
    private final AtomicBoolean stopped = new AtomicBoolean();

    private Thread generator;
    private Thread sender;

    StreamClient(WsSession session, StreamParams params, boolean backpressure, StreamStats stats) {
        this.session = session;
        this.params = params;
        this.backpressure = backpressure;
        this.stats = stats;
    }

    void start() {
        stats.clients.incrementAndGet();
        sender = Thread.ofVirtual().name("stream-sender").start(this::send);
        generator = Thread.ofVirtual().name("stream-generator").start(this::generate);
    }

    /**
     * The client is gone (close frame, dropped connection, failed write): the generator stops,
     * the queue is freed, and the caller waits (up to a second) until the sender is out of its
     * current write, because Helidon writes its own close reply on the connection's thread. A
     * sender stuck longer on a peer that does not read is interrupted, which closes the socket.
     */
    void stop() {
        if (!stopped.compareAndSet(false, true)) {
            return;
        }
        lock.lock();
        try {
            running = false;
            queue.clear();
            ready.signalAll();
        } finally {
            lock.unlock();
        }
        stats.clients.decrementAndGet();
        if (generator != Thread.currentThread()) {
            generator.interrupt();
        }
        if (sender != Thread.currentThread()) {
            try {
                if (!sender.join(Duration.ofSeconds(1))) {
                    sender.interrupt();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void generate() {
        String[] batch = new String[BATCH];
        int size = params.size();
        long seq = 0;
        try {
            if (params.rate() == 0) {
                // As fast as the server can: a batch, then let the sender and other clients run.
                // Not Thread.yield(): a virtual thread that yields while its carrier's local queue
                // holds a task (here: the sender it just woke) is pushed back on that same local
                // queue, and a carrier runs its local queue dry before it looks anywhere else, so
                // a generator and its sender would keep the carrier to themselves (with the JVM on
                // one CPU, /stream/stats and new connections hung). Not Thread.sleep(1 ns) either:
                // a virtual thread's sleep leaves the park permit set when it ends, so the next
                // short sleep returns at once. The shortest timed park puts the generator on the
                // scheduler's timer, which re-submits it behind every other waiting task.
                while (running) {
                    for (int i = 0; i < BATCH; i++) {
                        batch[i] = StreamMessage.build(seq++, StreamMessage.micros(), size);
                    }
                    offer(batch, BATCH);
                    LockSupport.parkNanos(YIELD_NANOS);
                }
            } else {
                // Message n is due n/rate seconds after the start; every tick makes what is due.
                long start = System.nanoTime();
                while (running) {
                    long elapsed = System.nanoTime() - start;
                    long due = due(elapsed);
                    while (seq < due && running) {
                        int n = (int) Math.min(BATCH, due - seq);
                        for (int i = 0; i < n; i++) {
                            batch[i] = StreamMessage.build(seq++, StreamMessage.micros(), size);
                        }
                        offer(batch, n);
                    }
                    long next = start + (elapsed / TICK_NANOS + 1) * TICK_NANOS;
                    long sleep = next - System.nanoTime();
                    if (sleep > 0) {
                        Thread.sleep(Duration.ofNanos(sleep));
                    }
                }
            }
        } catch (InterruptedException e) {
            // stop(): the client is gone.
        }
    }

    /** Messages due after elapsed nanoseconds: the first at once, then rate per second. */
    private long due(long elapsed) {
        long rate = params.rate();
        return elapsed / 1_000_000_000L * rate + elapsed % 1_000_000_000L * rate / 1_000_000_000L + 1;
    }

    private void offer(String[] batch, int n) {
        stats.generated.add(n);
        if (!backpressure) {
            stats.sent.add(n);
        }
        int dropped = 0;
        lock.lock();
        try {
            if (running) {
                for (int i = 0; i < n; i++) {
                    if (backpressure && queue.size() == MAX_WAITING) {
                        queue.pollFirst();
                        dropped++;
                    }
                    queue.addLast(batch[i]);
                }
                ready.signal();
            }
        } finally {
            lock.unlock();
        }
        Arrays.fill(batch, 0, n, null);
        if (dropped > 0) {
            stats.dropped.add(dropped);
        }
    }

    /**
     * Answers a ping. Helidon 4.3.1 does not answer pings itself, and the sender is the only
     * thread that writes to the session, so it writes the pong before its next messages.
     */
    void pong(byte[] payload) {
        lock.lock();
        try {
            pong = payload;
            ready.signal();
        } finally {
            lock.unlock();
        }
    }

    private void send() {
        String[] flight = new String[MAX_IN_FLIGHT];
        try {
            while (true) {
                int n = 0;
                lock.lock();
                try {
                    while (running && queue.isEmpty() && pong == null) {
                        ready.await();
                    }
                    if (!running) {
                        return;
                    }
                    if (pong != null) {
                        session.pong(BufferData.create(pong));
                        pong = null;
                    }
                    String message;
                    while (n < MAX_IN_FLIGHT && (message = queue.pollFirst()) != null) {
                        flight[n++] = message;
                    }
                } finally {
                    lock.unlock();
                }
                if (backpressure) {
                    stats.sent.add(n);
                }
                for (int i = 0; i < n && running; i++) {
                    String message = flight[i];
                    flight[i] = null;
                    session.send(message, true);
                }
            }
        } catch (InterruptedException e) {
            // stop() gave up waiting for a write: the connection is gone.
        } catch (RuntimeException e) {
            // The socket failed under a write (peer gone, or closed by the server).
            stop();
        } finally {
            Arrays.fill(flight, null);
        }
    }
}
