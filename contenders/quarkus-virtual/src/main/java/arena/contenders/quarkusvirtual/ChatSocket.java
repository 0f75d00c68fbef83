package arena.contenders.quarkusvirtual;

import jakarta.inject.Inject;

import arena.contenders.quarkuscommon.ChatRooms;
import arena.contenders.quarkuscommon.WsErrors;
import io.quarkus.websockets.next.CloseReason;
import io.quarkus.websockets.next.OnClose;
import io.quarkus.websockets.next.OnError;
import io.quarkus.websockets.next.OnTextMessage;
import io.quarkus.websockets.next.WebSocket;
import io.quarkus.websockets.next.WebSocketConnection;
import io.smallrye.common.annotation.RunOnVirtualThread;

/**
 * /chat (study 000) with WebSockets Next, on virtual threads: each callback runs on a new
 * virtual thread, which blocks until the frame's writes to every member are done (the shared
 * ChatRooms' Uni, awaited); WebSockets Next takes the next frame of the same connection only
 * then.
 */
@WebSocket(path = "/chat")
public class ChatSocket {

    @Inject
    ChatRooms rooms;

    @OnTextMessage
    @RunOnVirtualThread
    public void onText(String text, WebSocketConnection connection) {
        rooms.handle(connection, text).await().indefinitely();
    }

    @OnClose
    @RunOnVirtualThread
    public void onClose(WebSocketConnection connection) {
        rooms.leave(connection);
    }

    @OnError
    @RunOnVirtualThread
    public void onError(Throwable failure, WebSocketConnection connection) {
        CloseReason reason = WsErrors.closeFor(failure);
        if (WsErrors.closable(connection, reason)) {
            connection.close(reason).onFailure().recoverWithNull().await().indefinitely();
        }
    }
}
