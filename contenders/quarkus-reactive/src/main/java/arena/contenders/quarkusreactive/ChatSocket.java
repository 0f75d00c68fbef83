package arena.contenders.quarkusreactive;

import jakarta.inject.Inject;

import arena.contenders.quarkuscommon.ChatRooms;
import arena.contenders.quarkuscommon.WsErrors;
import io.quarkus.websockets.next.CloseReason;
import io.quarkus.websockets.next.OnClose;
import io.quarkus.websockets.next.OnError;
import io.quarkus.websockets.next.OnTextMessage;
import io.quarkus.websockets.next.WebSocket;
import io.quarkus.websockets.next.WebSocketConnection;
import io.smallrye.mutiny.Uni;

/**
 * /chat (study 000) with WebSockets Next, on the event loop: each callback returns a Uni, so
 * WebSockets Next runs it on the connection's event loop, and the next frame of the same
 * connection is taken once the Uni of this one (its writes to every member) completes.
 */
@WebSocket(path = "/chat")
public class ChatSocket {

    @Inject
    ChatRooms rooms;

    @OnTextMessage
    public Uni<Void> onText(String text, WebSocketConnection connection) {
        return rooms.handle(connection, text);
    }

    @OnClose
    public Uni<Void> onClose(WebSocketConnection connection) {
        rooms.leave(connection);
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
}
