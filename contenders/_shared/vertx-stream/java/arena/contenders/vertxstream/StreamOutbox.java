package arena.contenders.vertxstream;

import java.util.ArrayDeque;

import io.vertx.core.AsyncResult;
import io.vertx.core.http.ServerWebSocket;

/**
 * The sending side of one /stream WebSocket, the same in both Vert.x contenders (which differ in
 * where the generator runs and how its messages get here: on this event loop, or over the
 * EventBus). Used on the WebSocket's event loop only, so nothing is locked.
 *
 * <p>With back-pressure on, a message waits in the connection's own {@link ArrayDeque} (at most
 * {@link #QUEUE}; one more drops the oldest) until it may be written: at most
 * {@link #IN_FLIGHT} writes whose future has not completed (Netty completes it once the frame
 * is in the socket), and never while {@code writeQueueFull()} (Netty's channel over its
 * high-water mark, 64 KiB); the {@code drainHandler} and each write's completion resume it.
 * With back-pressure off, each message is written as it is offered, whatever
 * {@code writeQueueFull()} says: Netty's outbound buffer grows without bound.
 */
public final class StreamOutbox {

    /** Messages a client may have waiting; one more drops the oldest. */
    public static final int QUEUE = 5_000;
    /** Writes a client may have under way. */
    public static final int IN_FLIGHT = 100;

    private final ServerWebSocket ws;
    private final boolean backpressure;
    private final StreamStats stats;
    /** Back-pressure on: the messages waiting, oldest first. */
    private final ArrayDeque<String> queue = new ArrayDeque<>();
    /** Writes handed to the WebSocket whose future has not completed yet. */
    private int inFlight;
    /** Guards drain() against itself: a write that completes at once calls back into it. */
    private boolean draining;
    private boolean closed;

    /**
     * Takes over the WebSocket's handlers: what the client sends is read and ignored, and when
     * the connection is gone the waiting messages are freed, then {@code onClose} runs.
     */
    public StreamOutbox(ServerWebSocket ws, boolean backpressure, StreamStats stats, Runnable onClose) {
        this.ws = ws;
        this.backpressure = backpressure;
        this.stats = stats;
        ws.handler(data -> { });
        ws.exceptionHandler(e -> { }); // a reset connection ends in the close handler
        ws.closeHandler(v -> close(onClose));
        if (backpressure) {
            ws.drainHandler(v -> drain());
        }
    }

    public ServerWebSocket ws() {
        return ws;
    }

    /** The connection is gone: nothing more is written. */
    public boolean closed() {
        return closed;
    }

    /**
     * Back-pressure on: queues the message (a full queue drops its oldest), for {@link #drain()}
     * to write. Off: writes it at once. Counts it as sent or dropped; the generator counts it as
     * generated.
     */
    public void offer(String message) {
        if (!backpressure) {
            stats.sent.increment();
            ws.writeTextMessage(message); // whatever writeQueueFull() says
            return;
        }
        if (queue.size() == QUEUE) {
            queue.pollFirst();
            stats.dropped.increment();
        }
        queue.addLast(message);
    }

    /** Back-pressure on: writes from the queue while fewer than 100 are under way and Netty takes more. */
    public void drain() {
        if (!backpressure || draining) {
            return;
        }
        draining = true;
        try {
            // isClosed() first: once a close frame has gone either way, writeQueueFull() throws.
            while (!closed && inFlight < IN_FLIGHT && !queue.isEmpty() && !ws.isClosed() && !ws.writeQueueFull()) {
                String message = queue.pollFirst();
                inFlight++;
                stats.sent.increment();
                ws.writeTextMessage(message).onComplete(this::written);
            }
        } finally {
            draining = false;
        }
    }

    private void written(AsyncResult<Void> result) {
        inFlight--;
        drain();
    }

    private void close(Runnable onClose) {
        if (closed) {
            return;
        }
        closed = true;
        queue.clear();
        onClose.run();
    }
}
