package arena.contenders.webfluxchat;

import org.springframework.web.reactive.socket.CloseStatus;
import org.springframework.web.reactive.socket.WebSocketMessage;
import org.springframework.web.reactive.socket.WebSocketSession;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.util.concurrent.Queues;

/**
 * One connection of the chat and its outbound queue: a unicast sink holding at most
 * {@link #OUTBOX} encoded frames, which the session's {@code send()} drains as fast as the
 * client reads.
 */
final class ChatMember {

    /** Frames a member may have waiting; one more and it is dropped with 1013. */
    static final int OUTBOX = 4096;

    static final CloseStatus TOO_SLOW = new CloseStatus(1013, "too slow");

    private final WebSocketSession session;

    /**
     * Unicast, bounded, and fed by many event loops. Reactor's sinks want one producer at a
     * time, so every emission holds this member's monitor: the lock serialises only the
     * senders that deliver to this one member at the same instant.
     */
    private final Sinks.Many<byte[]> outbox =
            Sinks.unsafe().many().unicast().onBackpressureBuffer(Queues.<byte[]>get(OUTBOX).get());

    private volatile String name;
    private volatile String room;
    private volatile boolean gone;
    private volatile CloseStatus closeAfterSend;
    private boolean dropped; // guarded by this

    ChatMember(WebSocketSession session) {
        this.session = session;
    }

    String name() {
        return name;
    }

    String room() {
        return room;
    }

    boolean hasJoined() {
        return name != null;
    }

    void joined(String name, String room) {
        this.room = room;
        this.name = name;
    }

    boolean isGone() {
        return gone;
    }

    void gone() {
        gone = true;
    }

    /**
     * Queues a frame. False when the queue is full: the member cannot keep up, so it is sent a
     * close frame 1013 (try again later) at once, ahead of the frames still in its queue, which
     * are dropped when the connection ends (Reactor Netty closes the connection once the close
     * frame is written). The sender goes on with the next member at once; the caller takes the
     * member out of its room.
     */
    boolean offer(byte[] frame) {
        synchronized (this) {
            if (dropped) {
                return false;
            }
            if (outbox.tryEmitNext(frame) != Sinks.EmitResult.FAIL_OVERFLOW) {
                return true; // queued, or the connection is already ending, which frees the member
            }
            dropped = true;
        }
        session.close(TOO_SLOW).subscribe(null, error -> { }); // a reset connection is gone anyway
        return false;
    }

    boolean isClosing() {
        return closeAfterSend != null;
    }

    /** Queues a last frame, then closes with status once everything queued has gone out. */
    void finish(byte[] frame, CloseStatus status) {
        synchronized (this) {
            closeAfterSend = status;
            outbox.tryEmitNext(frame);
            outbox.tryEmitComplete();
        }
    }

    /** What the session sends: the queued frames, wrapped (not copied) as text messages. */
    Flux<WebSocketMessage> outbound() {
        return outbox.asFlux()
                .map(bytes -> new WebSocketMessage(WebSocketMessage.Type.TEXT, session.bufferFactory().wrap(bytes)));
    }

    /** After the outbound queue completed: the close that {@link #finish} asked for. */
    Mono<Void> closeIfAsked() {
        CloseStatus status = closeAfterSend;
        return status != null ? session.close(status) : Mono.empty();
    }
}
