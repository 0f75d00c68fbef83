package arena.contenders.playakka;

import akka.actor.ActorRef;
import akka.actor.ActorSystem;
import akka.stream.Materializer;
import akka.stream.OverflowStrategy;
import play.http.websocket.Message;
import play.libs.F;
import play.libs.Json;
import play.libs.Scala;
import play.libs.streams.ActorFlow;
import play.mvc.WebSocket;
import play.routing.Router;

/**
 * /chat (study 000): Play's Java WebSocket with one {@link ChatUser} actor per connection
 * ({@code ActorFlow}), room actors holding their members' refs, and one registry actor for the
 * names. Frames over 64 KiB are refused by Play itself (play.server.websocket.frame.maxLength),
 * which closes with 1009.
 *
 * <p>Play's Java RoutingDsl routes only actions, so /chat is a small {@link SocketRouter} of its
 * own, composed with the RoutingDsl router by {@code Router.orElse}.
 */
final class ChatSocket {

    /**
     * Frames a member may be behind before Play drops it: ActorFlow's outgoing buffer
     * (Source.actorRef). When it is full the member's stream fails and Play closes it with 1011.
     */
    static final int OUT_BUFFER = 4096;

    /**
     * Play's WebSocket.Text, except that a binary frame gets a system frame back instead of a
     * close (1003), and the flow emits Play messages so that it can close with its own code.
     */
    private static final WebSocket.MappedWebSocketAcceptor<String, Message> CHAT =
            new WebSocket.MappedWebSocketAcceptor<>(
                    Scala.partialFunction(message -> {
                        if (message instanceof Message.Text text) {
                            return F.Either.Left(text.data());
                        }
                        if (message instanceof Message.Binary) {
                            return F.Either.Right(system("binary frames are not supported: send a JSON text frame"));
                        }
                        throw Scala.noMatch();
                    }),
                    message -> message);

    private ChatSocket() {
    }

    /** {"type":"system","message":...} for one connection. */
    static Message.Text system(String text) {
        return new Message.Text(Json.stringify(Json.newObject().put("type", "system").put("message", text)));
    }

    /** The router of GET /chat, to be composed after the RoutingDsl router. */
    static Router router(ActorSystem actors, Materializer materializer) {
        ActorRef registry = actors.actorOf(ChatRegistry.props(), "chat-registry");
        WebSocket socket = CHAT.accept(request -> ActorFlow.actorRef(
                out -> ChatUser.props(out, registry), OUT_BUFFER, OverflowStrategy.fail(), actors, materializer));
        return SocketRouter.of("/chat", ChatSocket.class, "chat", socket);
    }
}
