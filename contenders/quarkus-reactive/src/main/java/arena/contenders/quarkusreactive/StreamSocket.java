package arena.contenders.quarkusreactive;

import java.util.concurrent.ConcurrentHashMap;

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
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;

/**
 * /stream (study 003) with WebSockets Next, on the event loop. Each client lives on the event
 * loop that accepted it: its generator (a Vert.x periodic timer, or batches queued behind the
 * loop's other tasks), its queue and its writes all run there, so nothing is locked. The
 * callbacks return Uni, so WebSockets Next runs them on that loop too. What the client sends
 * is read and ignored (no message callback). The rate and size were checked before the upgrade
 * (the shared StreamUpgradeFilter).
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
    public Uni<Void> onOpen(WebSocketConnection connection) {
        StreamParams params = StreamParams.parse(connection.handshakeRequest().query());
        Client client = new Client(connection, params, new StreamQueue(settings.backpressure(), stats), settings.backpressure());
        CLIENTS.put(connection.id(), client);
        stats.clients.incrementAndGet();
        client.start();
        return Uni.createFrom().voidItem();
    }

    @OnClose
    public Uni<Void> onClose(WebSocketConnection connection) {
        Client client = CLIENTS.remove(connection.id());
        if (client != null && client.stop()) {
            stats.clients.decrementAndGet();
        }
        return Uni.createFrom().voidItem();
    }

    @OnError
    public Uni<Void> onError(Throwable failure, WebSocketConnection connection) {
        CloseReason reason = WsErrors.closeFor(failure);
        if (!WsErrors.closable(connection, reason)) {
            return Uni.createFrom().voidItem();
        }
        return connection.close(reason).onFailure().recoverWithNull();
    }

    /** One client's generator and sends; used on its event loop only. */
    static final class Client {

        private static final int BATCH = 100;
        private static final long TICK_MS = 10;

        private final WebSocketConnection connection;
        private final int rate;
        private final Frames frames;
        private final StreamQueue queue;
        private final boolean bounded;
        private final Context context = Vertx.currentContext();
        private long timer = -1;
        private long started;
        private long made;
        private int inFlight;
        private boolean closed;
        private boolean draining;
        private boolean drainAgain;

        Client(WebSocketConnection connection, StreamParams params, StreamQueue queue, boolean bounded) {
            this.connection = connection;
            this.rate = params.rate();
            this.frames = new Frames(params.size());
            this.queue = queue;
            this.bounded = bounded;
        }

        void start() {
            if (rate > 0) {
                started = System.nanoTime();
                timer = context.owner().setPeriodic(TICK_MS, id -> tick());
            } else {
                context.runOnContext(v -> batch());
            }
        }

        /** rate > 0: what the clock says is due since the start, every 10 ms. */
        private void tick() {
            if (closed) {
                return;
            }
            long due = (long) (rate * ((System.nanoTime() - started) / 1e9)) - made;
            for (; due > 0; due--, made++) {
                queue.offer(frames.next());
            }
            drain();
        }

        /** rate 0: 100 messages, then the next batch behind whatever else the loop has to do. */
        private void batch() {
            if (closed) {
                return;
            }
            for (int i = 0; i < BATCH; i++) {
                queue.offer(frames.next());
            }
            drain();
            context.runOnContext(v -> batch());
        }

        /**
         * Hands waiting messages to the connection: with back-pressure while fewer than 100
         * writes are under way, without it all of them. A write's completion (the frame is in
         * the socket) comes back on this loop and drains again; a completion that comes while
         * draining (Vert.x may complete a write at once) only asks the loop below to go on, so
         * the stack does not grow with the queue.
         */
        private void drain() {
            if (draining) {
                drainAgain = true;
                return;
            }
            draining = true;
            try {
                do {
                    drainAgain = false;
                    while (!closed && (!bounded || inFlight < StreamQueue.MAX_IN_FLIGHT)) {
                        String message = queue.take();
                        if (message == null) {
                            break;
                        }
                        inFlight++;
                        connection.sendText(message).subscribe().with(v -> written(), e -> written());
                    }
                } while (drainAgain);
            } finally {
                draining = false;
            }
        }

        private void written() {
            inFlight--;
            if (!closed) {
                drain();
            }
        }

        /** The connection closed: stops the generator and frees the queue; true the first time. */
        boolean stop() {
            if (closed) {
                return false;
            }
            closed = true;
            if (timer != -1) {
                context.owner().cancelTimer(timer);
            }
            queue.clear();
            return true;
        }
    }
}
