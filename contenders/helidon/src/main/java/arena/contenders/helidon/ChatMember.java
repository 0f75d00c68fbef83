package arena.contenders.helidon;

import java.time.Duration;
import java.util.concurrent.LinkedBlockingQueue;

import io.helidon.common.buffers.BufferData;
import io.helidon.websocket.WsCloseCodes;
import io.helidon.websocket.WsSession;

/**
 * One connection's outbox: a bounded FIFO queue drained by a virtual thread of its own, the only
 * thread that writes to the session.
 *
 * <p>Helidon 4.3.1's {@code WsSession.send} is a blocking write that is not safe to call from two
 * threads at once (the server's WsConnection frames every message in one shared send buffer), and
 * in a chat every sender's virtual thread wants to write to the same members. So senders only
 * queue, and the writer thread sends one whole frame at a time: no two frames interleave, and the
 * queue's order is the wire order. A writer blocked on a member that does not read blocks only
 * that member; the senders go on.
 */
final class ChatMember {

    /** Frames a member may be behind before it is dropped (as the lab's reference server). */
    static final int MAX_QUEUED = 4096;

    /** What the writer takes from the queue: a text frame, or a close frame that ends it. */
    private sealed interface Out permits Text, Pong, Close, Stop {
    }

    private record Text(String text) implements Out {
    }

    private record Pong(byte[] data) implements Out {
    }

    private record Close(int code, String reason) implements Out {
    }

    private record Stop() implements Out {
    }

    private static final Stop STOP = new Stop();

    private final WsSession session;
    private final LinkedBlockingQueue<Out> outbox = new LinkedBlockingQueue<>(MAX_QUEUED);
    private final Thread writer;

    // Written on the connection's thread when it joins; read by that thread and by the thread
    // that cleans up after it (which joins it first, or reads the maps' published state).
    private volatile String name;
    private volatile String room;

    ChatMember(WsSession session) {
        this.session = session;
        this.writer = Thread.ofVirtual().name("chat-writer").start(this::write);
    }

    void joined(String name, String room) {
        this.name = name;
        this.room = room;
    }

    String name() {
        return name;
    }

    String room() {
        return room;
    }

    /** Queues a text frame; false when the member is {@link #MAX_QUEUED} frames behind. */
    boolean offer(String text) {
        return outbox.offer(new Text(text));
    }

    /** Queues the pong that answers a client's ping (Helidon leaves that to the listener). */
    boolean pong(byte[] data) {
        return outbox.offer(new Pong(data));
    }

    /** Queues a close frame after what is queued already (e.g. the system frame before it). */
    void closeWith(int code, String reason) {
        outbox.offer(new Close(code, reason));
    }

    /**
     * The member could not keep up: what it has not taken is thrown away and it is closed with
     * 1013 (try again later) as soon as its writer is free. A writer stuck on a socket that the
     * client never reads stays parked until the connection ends; nothing is queued for it any more.
     */
    void drop() {
        outbox.clear();
        outbox.offer(new Close(WsCloseCodes.TRY_AGAIN_LATER, "too slow"));
    }

    /**
     * Ends the writer when the connection closes: what is queued is dropped, and the caller waits
     * (up to a second) until the writer is out of its current send, so that Helidon's own close
     * reply, written on the connection's thread, never interleaves with one of ours. A writer stuck
     * longer on a dead peer is interrupted, which closes the socket under it.
     */
    void stop() {
        outbox.clear();
        outbox.offer(STOP);
        if (Thread.currentThread() == writer) {
            return;
        }
        try {
            if (!writer.join(Duration.ofSeconds(1))) {
                writer.interrupt();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void write() {
        try {
            while (true) {
                Out out = outbox.take();
                if (out instanceof Text text) {
                    session.send(text.text(), true);
                } else if (out instanceof Pong pong) {
                    session.pong(BufferData.create(pong.data()));
                } else if (out instanceof Close close) {
                    session.close(close.code(), close.reason());
                    return;
                } else {
                    return;
                }
            }
        } catch (InterruptedException e) {
            // stop() gave up waiting: the connection is gone.
        } catch (RuntimeException e) {
            // The socket failed under a send (peer gone, or closed by the server): the
            // connection's own thread sees the same and the member is cleaned up from there.
        }
    }
}
