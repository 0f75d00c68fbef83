package arena.contenders.playakka;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import akka.actor.ActorSystem;
import akka.actor.Cancellable;
import scala.concurrent.ExecutionContextExecutor;

/**
 * One /stream client's generator (study 003), run on a dispatcher of its own
 * ({@value #DISPATCHER}, a thread pool with one thread per core, see application.conf) and never
 * inside the client's stream:
 * <ul>
 * <li>rate &gt; 0: a task on the Akka scheduler every 10 ms makes the messages due by then
 * (message n is due n/rate seconds after the start), so a second holds the rate whatever the
 * scheduler's jitter;</li>
 * <li>rate 0: a task makes a batch of 100 messages and submits itself again to the dispatcher,
 * behind the other clients' generators, while the client's stream runs on Akka's default
 * dispatcher.</li>
 * </ul>
 * It stops when the client's queue is closed (the stream ended).
 */
final class StreamGenerator implements Runnable {

    static final String DISPATCHER = "stream-generator-dispatcher";
    static final int BATCH = 100;
    static final Duration TICK = Duration.ofMillis(10);

    private final ClientQueue queue;
    private final StreamParams params;
    private final ActorSystem actors;
    private final ExecutionContextExecutor dispatcher;
    /** A tick that finds the previous one still running lets it be (the next catches up). */
    private final AtomicBoolean busy = new AtomicBoolean();
    private final String[] batch = new String[BATCH];

    private long seq;
    private long start;
    private volatile Cancellable ticks;

    StreamGenerator(ClientQueue queue, StreamParams params, ActorSystem actors) {
        this.queue = queue;
        this.params = params;
        this.actors = actors;
        this.dispatcher = actors.dispatchers().lookup(DISPATCHER);
    }

    void start() {
        start = System.nanoTime();
        if (params.rate() == 0) {
            dispatcher.execute(this);
        } else {
            ticks = actors.scheduler().scheduleAtFixedRate(Duration.ZERO, TICK, this, dispatcher);
        }
    }

    void stop() {
        Cancellable t = ticks;
        if (t != null) {
            t.cancel();
        }
    }

    @Override
    public void run() {
        if (queue.closed() || !busy.compareAndSet(false, true)) {
            return;
        }
        try {
            int size = params.size();
            if (params.rate() == 0) {
                for (int i = 0; i < BATCH; i++) {
                    batch[i] = StreamMessage.build(seq++, StreamMessage.micros(), size);
                }
                queue.offer(batch, BATCH);
            } else {
                long due = due(System.nanoTime() - start);
                while (seq < due && !queue.closed()) {
                    int n = (int) Math.min(BATCH, due - seq);
                    for (int i = 0; i < n; i++) {
                        batch[i] = StreamMessage.build(seq++, StreamMessage.micros(), size);
                    }
                    queue.offer(batch, n);
                }
            }
        } finally {
            busy.set(false);
        }
        if (params.rate() == 0 && !queue.closed()) {
            // Yield: the next batch is a new task at the back of the dispatcher's queue.
            dispatcher.execute(this);
        }
    }

    /** Messages due after elapsed nanoseconds: the first at once, then rate per second. */
    private long due(long elapsed) {
        long rate = params.rate();
        return elapsed / 1_000_000_000L * rate + elapsed % 1_000_000_000L * rate / 1_000_000_000L + 1;
    }
}
