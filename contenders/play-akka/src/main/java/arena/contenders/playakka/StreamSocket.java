package arena.contenders.playakka;

import static java.util.concurrent.CompletableFuture.completedFuture;

import akka.actor.ActorSystem;
import akka.stream.javadsl.Flow;
import akka.stream.javadsl.Sink;
import akka.stream.javadsl.Source;
import play.http.websocket.Message;
import play.libs.F;
import play.libs.Scala;
import play.mvc.Http;
import play.mvc.WebSocket;
import play.routing.Router;

/**
 * /stream (study 003): Play's Java WebSocket whose outgoing side is an Akka Streams source per
 * client ({@link ClientQueueSource}) and whose incoming side is ignored. A bad rate or size is
 * answered before any upgrade: {@code acceptOrResult} returns the 400 as a plain result.
 *
 * <p>The flow is {@code Flow.fromSinkAndSourceCoupled}: the client's close (the incoming side
 * completes) cancels the source, and a failed or dropped connection (the outgoing side cancels)
 * does too, so the source's postStop stops the generator either way.
 */
final class StreamSocket {

    /**
     * Play's WebSocket.Text for what the server sends, with one change: what the client sends,
     * text or binary, is ignored (WebSocket.Text closes a binary frame with 1003).
     */
    private static final WebSocket.MappedWebSocketAcceptor<Message, String> STREAM =
            new WebSocket.MappedWebSocketAcceptor<>(
                    Scala.partialFunction(message -> {
                        if (message instanceof Message.Text || message instanceof Message.Binary) {
                            return F.Either.Left(message);
                        }
                        throw Scala.noMatch();
                    }),
                    Message.Text::new);

    private StreamSocket() {
    }

    /** The router of GET /stream, to be composed after the RoutingDsl router. */
    static Router router(ActorSystem actors, boolean backpressure, StreamStats stats) {
        WebSocket socket = STREAM.acceptOrResult(request -> {
            StreamParams params;
            try {
                params = StreamParams.parse(request);
            } catch (StreamParams.Invalid e) {
                return completedFuture(F.Either.Left(Errors.json(Http.Status.BAD_REQUEST, e.getMessage())));
            }
            Source<String, ?> messages = Source.fromGraph(new ClientQueueSource(params, backpressure, stats, actors));
            return completedFuture(F.Either.Right(Flow.fromSinkAndSourceCoupled(Sink.<Message>ignore(), messages)));
        });
        return SocketRouter.of("/stream", StreamSocket.class, "stream", socket);
    }
}
