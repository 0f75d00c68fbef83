package arena.contenders.helidon;

import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.helidon.http.HeaderValues;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerResponse;

/** One shared Jackson mapper, and the contract's JSON answers and chat frames. */
final class Json {

    static final ObjectMapper MAPPER = new ObjectMapper();

    private static final byte[] UP = bytes(Map.of("status", "UP"));

    private Json() {
    }

    static byte[] bytes(Object value) {
        try {
            return MAPPER.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode " + value, e);
        }
    }

    /** The probes: {"status":"UP"}. */
    static void up(ServerResponse res) {
        send(res, Status.OK_200, UP);
    }

    /** The contract's error answer: {"error":"..."} with a status. */
    static void error(ServerResponse res, Status status, String message) {
        send(res, status, errorBody(message));
    }

    static byte[] errorBody(String message) {
        return bytes(Map.of("error", message));
    }

    /** A chat message as every member of the room gets it: {"name","chat","message"}. */
    static String chat(String name, String room, String message) {
        return text(MAPPER.createObjectNode().put("name", name).put("chat", room).put("message", message));
    }

    /** A system frame for one connection: {"type":"system","message":...}. */
    static String system(String message) {
        return text(MAPPER.createObjectNode().put("type", "system").put("message", message));
    }

    private static String text(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode " + value, e);
        }
    }

    static void send(ServerResponse res, Status status, byte[] body) {
        res.status(status);
        res.header(HeaderValues.CONTENT_TYPE_JSON);
        res.send(body);
    }
}
