package arena.contender;

import jakarta.websocket.RemoteEndpoint;
import jakarta.websocket.SendHandler;
import jakarta.websocket.SendResult;
import jakarta.websocket.Session;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.springframework.core.task.TaskExecutor;
import org.springframework.core.task.TaskRejectedException;
import org.springframework.scheduling.TaskScheduler;

/**
 * One /stream client: its generator, its queue of waiting messages and its sends.
 *
 * <p><b>Generator.</b> Each message is built when it is generated (its text, with its seq and
 * ts) and the queue holds those strings. rate &gt; 0: every 10 ms the messages due since the
 * start (rate × elapsed) are made, in batches of up to 100. rate 0: batches of 100, with a
 * yield between two. What runs it depends on the model (see StreamHandler):
 * <ul>
 * <li>platform threads: a TaskScheduler, the fixed-rate tick for rate &gt; 0, and for rate 0 a
 * task that makes one batch and hands itself to the scheduler again;
 * <li>virtual threads: the client's own virtual thread, which sleeps between ticks, and for a
 * microsecond between rate-0 batches, so that other virtual threads, requests included, get
 * the carrier (see YIELD_NANOS: neither Thread.yield() nor a new task per batch did).
 * </ul>
 *
 * <p><b>Sends.</b> Jakarta WebSocket async sends: RemoteEndpoint.Async.sendText(text, this),
 * and the container calls onResult when that message has been written to the socket (or has
 * failed), which is when a send is done. Tomcat accepts one outstanding async message per
 * session (a second sendText before the first completes throws IllegalStateException,
 * TEXT_FULL_WRITING; it calls onResult after it has ended the message, on a container thread),
 * so there a client has at most one send in flight. Jetty queues any number of them in its
 * FrameFlusher (stream.container-queues-sends=true), so there up to 100 are in flight. A
 * drain loop moves waiting messages into flight up to that limit; it runs on the generator's
 * thread after a batch and on the container's thread after each completion, one at a time per
 * client (a counter, as Reactor's drain loops do, also keeps a completion called inside
 * sendText from recursing).
 *
 * <p><b>BACKPRESSURE=on:</b> at most 5000 waiting; a batch that finds the queue full drops the
 * oldest waiting messages, counted. <b>off:</b> no limit of our own: on Jetty every message
 * goes to sendText at once and Jetty's frame queue grows; on Tomcat, which takes one at a time,
 * the waiting queue in front of it grows. Either way a slow reader makes the heap grow.
 *
 * <p><b>Close:</b> stop() ends the generator and clears the queue; sends in flight fail or
 * finish and let go of this client. A message is counted as generated when it joins the queue,
 * under the queue's lock, so none is counted once the client is closed.
 */
final class ClientStream implements SendHandler {

    static final int BATCH = 100;
    static final int MAX_IN_FLIGHT = 100;
    static final int MAX_WAITING = 5000;
    static final Duration TICK = Duration.ofMillis(10);
    /**
     * Virtual threads, rate 0: the pause between two batches. Thread.yield() does not do: on
     * JDK 25 a yielding virtual thread is re-queued on the queue its carrier is taking from, so
     * on one carrier it runs again at once and requests starve; a timed sleep unmounts it.
     */
    static final long YIELD_NANOS = 1_000;

    /** 65536 ASCII letters; a pad is a prefix of it. */
    private static final String LETTERS;

    static {
        char[] letters = new char[StreamParams.MAX_SIZE];
        for (int i = 0; i < letters.length; i++) {
            letters[i] = (char) ('a' + i % 26);
        }
        LETTERS = new String(letters);
    }

    private final RemoteEndpoint.Async remote;
    private final StreamStats stats;
    private final int rate;
    private final int size;
    private final boolean backPressure;
    private final int maxInFlight;
    private final int maxWaiting;

    // Guarded by this.
    private final ArrayDeque<String> waiting = new ArrayDeque<>();
    private int inFlight;
    private volatile boolean closed; // written under this, read anywhere

    /** Drain requests; the thread that raises it from 0 drains until it is back to 0. */
    private final AtomicInteger drains = new AtomicInteger();

    /** rate &gt; 0: one tick generates at a time; a skipped tick is caught up by the next. */
    private final ReentrantLock generating = new ReentrantLock();
    private long seq; // the generator's only
    private long startNanos;
    private volatile ScheduledFuture<?> ticks;

    ClientStream(Session ws, StreamStats stats, int rate, int size, boolean backPressure,
            boolean containerQueuesSends) {
        this.remote = ws.getAsyncRemote();
        this.stats = stats;
        this.rate = rate;
        this.size = size;
        this.backPressure = backPressure;
        this.maxInFlight = !containerQueuesSends ? 1 : backPressure ? MAX_IN_FLIGHT : Integer.MAX_VALUE;
        this.maxWaiting = backPressure ? MAX_WAITING : Integer.MAX_VALUE;
    }

    /** Platform threads: ticks on the scheduler, rate-0 batches re-submitted to it. */
    void startOn(TaskScheduler scheduler, TaskExecutor executor) {
        startNanos = System.nanoTime();
        try {
            if (rate > 0) {
                ticks = scheduler.scheduleAtFixedRate(this::tick, TICK);
                if (closed) {
                    ticks.cancel(false);
                }
            } else {
                executor.execute(() -> burst(executor));
            }
        } catch (TaskRejectedException e) {
            // shutting down
        }
    }

    /** Virtual threads: a virtual thread of the client's own (the executor makes one per task). */
    void startOnOwnThread(TaskExecutor newVirtualThread) {
        startNanos = System.nanoTime();
        try {
            newVirtualThread.execute(this::run);
        } catch (TaskRejectedException e) {
            // shutting down
        }
    }

    void stop() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            waiting.clear();
        }
        ScheduledFuture<?> t = ticks;
        if (t != null) {
            t.cancel(false);
        }
        stats.clients.decrementAndGet();
    }

    /** rate &gt; 0: the messages due by now, rate × elapsed, in batches of up to 100. */
    private void tick() {
        if (closed || !generating.tryLock()) {
            return;
        }
        try {
            long elapsed = System.nanoTime() - startNanos;
            long due = rate * (elapsed / 1_000_000_000L) + rate * (elapsed % 1_000_000_000L) / 1_000_000_000L;
            while (seq < due && !closed) {
                offer(generate((int) Math.min(BATCH, due - seq)));
            }
        } finally {
            generating.unlock();
        }
    }

    /** rate 0 on a pool: one batch, then a new task for the next, so that other clients and sends interleave. */
    private void burst(TaskExecutor executor) {
        if (closed) {
            return;
        }
        offer(generate(BATCH));
        try {
            executor.execute(() -> burst(executor));
        } catch (TaskRejectedException e) {
            // shutting down
        }
    }

    /** The client's own virtual thread: ticks with a sleep between them, or batches with a yield between them. */
    private void run() {
        long next = startNanos;
        while (!closed) {
            long wait;
            if (rate == 0) {
                offer(generate(BATCH));
                wait = YIELD_NANOS;
            } else {
                tick();
                next += TICK.toNanos();
                wait = next - System.nanoTime();
                if (wait <= 0) {
                    next = System.nanoTime(); // late: the next tick catches up, no burst of ticks
                    continue;
                }
            }
            try {
                Thread.sleep(Duration.ofNanos(wait));
            } catch (InterruptedException e) {
                return; // shutting down
            }
        }
    }

    private String[] generate(int n) {
        String[] batch = new String[n];
        for (int i = 0; i < n; i++) {
            batch[i] = frame(seq++, micros(Instant.now()), size);
        }
        return batch;
    }

    /** {"seq":n,"ts":µs,"pad":"…"}, exactly size bytes unless that is too short for an empty pad. */
    static String frame(long seq, long ts, int size) {
        StringBuilder b = new StringBuilder(Math.max(size, 64));
        b.append("{\"seq\":").append(seq).append(",\"ts\":").append(ts).append(",\"pad\":\"");
        int pad = size - b.length() - 2;
        if (pad > 0) {
            b.append(LETTERS, 0, pad);
        }
        return b.append("\"}").toString();
    }

    private static long micros(Instant t) {
        return t.getEpochSecond() * 1_000_000L + t.getNano() / 1_000;
    }

    private void offer(String[] batch) {
        int dropped = 0;
        synchronized (this) {
            if (closed) {
                return; // made as the client closed: neither queued nor counted
            }
            stats.generated.add(batch.length);
            for (String m : batch) {
                if (waiting.size() >= maxWaiting) {
                    waiting.pollFirst(); // drop the oldest
                    dropped++;
                }
                waiting.addLast(m);
            }
        }
        if (dropped > 0) {
            stats.dropped.add(dropped);
        }
        if (!backPressure) {
            stats.sent.add(batch.length); // handed over at once: no limit of ours stands in between
        }
        drain();
    }

    /** Moves waiting messages into flight up to the limit; one thread per client at a time. */
    private void drain() {
        if (drains.getAndIncrement() != 0) {
            return; // the thread draining now will go round again
        }
        int missed = 1;
        do {
            for (;;) {
                String m;
                synchronized (this) {
                    if (closed || inFlight >= maxInFlight || (m = waiting.pollFirst()) == null) {
                        break;
                    }
                    inFlight++;
                }
                if (backPressure) {
                    stats.sent.increment();
                }
                try {
                    remote.sendText(m, this);
                } catch (RuntimeException e) { // the session is closing
                    onResult(new SendResult(e));
                }
            }
            missed = drains.addAndGet(-missed);
        } while (missed != 0);
    }

    /** The container: one send is done. */
    @Override
    public void onResult(SendResult result) {
        synchronized (this) {
            inFlight--;
        }
        if (result.isOK()) {
            drain();
        } else {
            // The connection failed: the container closes it (StreamHandler then sees the close);
            // the generator stops now.
            stop();
        }
    }
}
