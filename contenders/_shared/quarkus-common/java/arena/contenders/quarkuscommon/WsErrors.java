package arena.contenders.quarkuscommon;

import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.quarkus.websockets.next.CloseReason;
import io.quarkus.websockets.next.WebSocketConnection;

/**
 * What a WebSocket endpoint's {@code @OnError} does with what Vert.x reports: a message over
 * the 64-KiB limit (Vert.x's aggregator fails with an IllegalStateException, and leaves the
 * close to the application) is closed with 1009; a frame Netty's decoder refuses (unmasked,
 * a length no frame may have) with the decoder's own status. Anything else (a reset
 * connection) needs no answer: the close callback follows. Without this, WebSockets Next's
 * default for an unhandled failure is a close 1011.
 */
public final class WsErrors {

    public static final int MAX_MESSAGE = 64 * 1024;

    private WsErrors() {
    }

    /** The close the failure calls for, or null when none does. */
    public static CloseReason closeFor(Throwable t) {
        if (t instanceof CorruptedWebSocketFrameException bad) {
            return new CloseReason(bad.closeStatus().code(), bad.closeStatus().reasonText());
        }
        if (t instanceof IllegalStateException) {
            return new CloseReason(1009, "message over 64 KiB");
        }
        return null;
    }

    /** Whether the connection is still open to be closed (closing a closed one logs a warning). */
    public static boolean closable(WebSocketConnection connection, CloseReason reason) {
        return reason != null && !connection.isClosed();
    }
}
