package arena.contenders.quarkusvirtual;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import jakarta.inject.Inject;

import arena.contenders.quarkuscommon.Frames;
import arena.contenders.quarkuscommon.Settings;
import arena.contenders.quarkuscommon.StreamParams;
import arena.contenders.quarkuscommon.StreamQueue;
import arena.contenders.quarkuscommon.StreamStats;
import arena.contenders.quarkuscommon.WsErrors;
import io.quarkus.websockets.next.CloseReason;
import io.quarkus.websockets.next.OnClose;
import io.quarkus.websockets.next.OnError;
import io.quarkus.websockets.next.OnOpen;
import io.quarkus.websockets.next.WebSocket;
import io.quarkus.websockets.next.WebSocketConnection;
import io.smallrye.common.annotation.RunOnVirtualThread;
import io.smallrye.mutiny.Uni;

/**
 * /stream (study 003) with WebSockets Next, on virtual threads. Each client has two: a
 * generator that sleeps until its next 10-ms tick (or, at rate 0, makes 100 messages and
 * sleeps 1 µs) and puts what is due in the client's queue, and a sender that takes up to 100
 * waiting messages and blocks until their writes are done (see {@link Client#send}). The
 * queue is guarded by the client's lock. What the client sends is read
 * and ignored (no message callback). The rate and size were checked before the upgrade (the
 * shared StreamUpgradeFilter).
 */
@WebSocket(path = "/stream")
public class StreamSocket {

    /** Open clients by connection id, for the close callback. */
    private static final ConcurrentHashMap<String, Client> CLIENTS = new ConcurrentHashMap<>();

    @Inject
    StreamStats stats;

    @Inject
    Settings settings;

    @OnOpen
    @RunOnVirtualThread
    public void onOpen(WebSocketConnection connection) {
        StreamParams params = StreamParams.parse(connection.handshakeRequest().query());
        Client client = new Client(connection, params, new StreamQueue(settings.backpressure(), stats));
        CLIENTS.put(connection.id(), client);
        stats.clients.incrementAndGet();
        client.start();
    }

    @OnClose
    @RunOnVirtualThread
    public void onClose(WebSocketConnection connection) {
        Client client = CLIENTS.remove(connection.id());
        if (client != null && client.stop()) {
            stats.clients.decrementAndGet();
        }
    }

    @OnError
    @RunOnVirtualThread
    public void onError(Throwable failure, WebSocketConnection connection) {
        CloseReason reason = WsErrors.closeFor(failure);
        if (WsErrors.closable(connection, reason)) {
            connection.close(reason).onFailure().recoverWithNull().await().indefinitely();
        }
    }

    /** One client: its generator and sender threads, and the queue between them. */
    static final class Client {

        private static final int BATCH = 100;
        private static final long TICK_MS = 10;
        /**
         * The yield between rate-0 batches: a sleep, not Thread.yield(), which re-queues a
         * virtual thread where its carrier looks first and starved other work in
         * spring-mvc-virtual.
         */
        private static final Duration YIELD = Duration.ofNanos(1_000);

        private final WebSocketConnection connection;
        private final int rate;
        private final Frames frames;
        private final StreamQueue queue;
        private final ReentrantLock lock = new ReentrantLock();
        private final Condition waiting = lock.newCondition();
        private boolean closed;

        Client(WebSocketConnection connection, StreamParams params, StreamQueue queue) {
            this.connection = connection;
            this.rate = params.rate();
            this.frames = new Frames(params.size());
            this.queue = queue;
        }

        void start() {
            Thread.ofVirtual().name("stream-generator").start(this::generate);
            Thread.ofVirtual().name("stream-sender").start(this::send);
        }

        private void generate() {
            long started = System.nanoTime();
            long made = 0;
            try {
                while (isOpen()) {
                    if (rate > 0) {
                        Thread.sleep(TICK_MS);
                        long due = (long) (rate * ((System.nanoTime() - started) / 1e9)) - made;
                        put(Math.max(0, due));
                        made += Math.max(0, due);
                    } else {
                        put(BATCH);
                        Thread.sleep(YIELD);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** n new messages into the queue, each built as it is made. */
        private void put(long n) {
            if (n == 0) {
                return;
            }
            lock.lock();
            try {
                if (closed) {
                    return;
                }
                for (long i = 0; i < n; i++) {
                    queue.offer(frames.next());
                }
                waiting.signal();
            } finally {
                lock.unlock();
            }
        }

        /**
         * Takes what waits, up to 100 messages (the contract's bound on sends in flight), hands
         * each to the connection and blocks until every one of those writes is done (the frame
         * is in the socket), then takes the next ones. A client that does not read leaves this
         * thread blocked, and the generator's messages wait in the queue (or, with back-pressure,
         * push its oldest out).
         */
        private void send() {
            List<Uni<Void>> writes = new ArrayList<>(StreamQueue.MAX_IN_FLIGHT);
            try {
                while (true) {
                    writes.clear();
                    lock.lock();
                    try {
                        while (!closed && queue.isEmpty()) {
                            waiting.await();
                        }
                        if (closed) {
                            return;
                        }
                        for (String m; writes.size() < StreamQueue.MAX_IN_FLIGHT && (m = queue.take()) != null; ) {
                            writes.add(connection.sendText(m));
                        }
                    } finally {
                        lock.unlock();
                    }
                    Uni.join().all(writes).andFailFast().await().indefinitely();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                // A write failed: the connection is gone, and its close callback stops the rest.
            }
        }

        private boolean isOpen() {
            lock.lock();
            try {
                return !closed;
            } finally {
                lock.unlock();
            }
        }

        /** The connection closed: stops both threads and frees the queue; true the first time. */
        boolean stop() {
            lock.lock();
            try {
                if (closed) {
                    return false;
                }
                closed = true;
                queue.clear();
                waiting.signalAll();
                return true;
            } finally {
                lock.unlock();
            }
        }
    }
}
