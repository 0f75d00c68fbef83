package arena.contenders.webfluxchat;

import java.io.IOException;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;

import io.netty.handler.codec.TooLongFrameException;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.web.reactive.socket.CloseStatus;
import org.springframework.web.reactive.socket.WebSocketHandler;
import org.springframework.web.reactive.socket.WebSocketMessage;
import org.springframework.web.reactive.socket.WebSocketSession;

import reactor.core.publisher.Mono;

/**
 * The {@code /chat} handler. Each session is two streams: {@code receive()}, whose frames are
 * handled one at a time on the connection's Reactor Netty event loop, and {@code send()} of the
 * member's own outbound queue. The session lasts until either ends.
 */
public final class ChatHandler implements WebSocketHandler {

    /** The chat message every member of a room receives. */
    record Message(String name, String chat, String message) {
    }

    /** What only the sender gets: a bad frame, or a name already taken. */
    record Notice(String type, String message) {
    }

    private final ChatRooms rooms;
    private final ObjectReader reader;
    private final ObjectWriter writer;
    private final ObjectWriter noticeWriter;
    private final byte[] notJson;
    private final byte[] joinFirst;
    private final byte[] missingField;

    ChatHandler(ChatRooms rooms, ObjectMapper mapper) {
        this.rooms = rooms;
        // Strict: one JSON value and nothing after it.
        this.reader = mapper.readerFor(JsonNode.class).with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
        this.writer = mapper.writerFor(Message.class);
        this.noticeWriter = mapper.writerFor(Notice.class);
        this.notJson = system("not a JSON object");
        this.joinFirst = system("join first with {\"name\",\"chat\"}");
        this.missingField = system("a message needs name, chat and message");
    }

    @Override
    public Mono<Void> handle(WebSocketSession session) {
        ChatMember member = new ChatMember(session);
        Mono<Void> input = session.receive()
                .doOnNext(frame -> onFrame(member, frame))
                .then()
                // A message over 64 KiB in fragments: WebFlux's frame aggregator gives up. (Reactor
                // Netty then signals the error once more when the close discards the inbound, and
                // Reactor logs that second signal as dropped: one ERROR line per such message.)
                .onErrorResume(TooLongFrameException.class, e -> session.close(CloseStatus.TOO_BIG_TO_PROCESS))
                // A single frame over 64 KiB: Netty's decoder has already sent close 1009 and is
                // closing the connection. Any other read error ends the session as well.
                .onErrorComplete();
        Mono<Void> output = session.send(member.outbound())
                .then(Mono.defer(member::closeIfAsked));
        return Mono.zip(input, output).then()
                .doFinally(signal -> rooms.leave(member));
    }

    private void onFrame(ChatMember member, WebSocketMessage frame) {
        if (frame.getType() != WebSocketMessage.Type.TEXT && frame.getType() != WebSocketMessage.Type.BINARY) {
            return; // pings and pongs
        }
        if (member.isClosing()) {
            return; // refused: its notice and close are on the way
        }
        JsonNode json = parse(frame.getPayload());
        if (json == null || !json.isObject()) {
            member.offer(notJson);
            return;
        }
        String name = text(json, "name");
        String room = text(json, "chat");
        String message = json.path("message").isTextual() ? json.get("message").asText() : null;
        if (!member.hasJoined()) {
            if (name == null || room == null || message != null) {
                member.offer(joinFirst);
            }
            else if (!rooms.join(member, name, room)) {
                // The notice is queued before the close, so it goes out first.
                member.finish(system("the name " + name + " is taken"), CloseStatus.POLICY_VIOLATION);
            }
            return;
        }
        if (name == null || room == null || message == null) {
            member.offer(missingField);
            return;
        }
        rooms.broadcast(member.room(), encode(new Message(member.name(), member.room(), message)));
    }

    private JsonNode parse(DataBuffer payload) {
        byte[] bytes = new byte[payload.readableByteCount()];
        payload.read(bytes);
        try {
            return reader.readTree(bytes);
        }
        catch (IOException e) {
            return null;
        }
    }

    /** A non-empty string member, else null. */
    private static String text(JsonNode json, String field) {
        JsonNode value = json.get(field);
        return value != null && value.isTextual() && !value.asText().isEmpty() ? value.asText() : null;
    }

    private byte[] encode(Message message) {
        try {
            return writer.writeValueAsBytes(message);
        }
        catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private byte[] system(String text) {
        try {
            return noticeWriter.writeValueAsBytes(new Notice("system", text));
        }
        catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
