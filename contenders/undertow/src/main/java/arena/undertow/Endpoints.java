package arena.undertow;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.undertow.server.HttpHandler;
import io.undertow.server.HttpServerExchange;
import io.undertow.util.Headers;
import io.undertow.util.StatusCodes;

/** The routes that need no downstream, and the response helpers every route uses. */
final class Endpoints {

    /** One shared, thread-safe mapper, as Jackson advises. */
    static final ObjectMapper MAPPER = new ObjectMapper();

    private static final String TEXT_PLAIN = "text/plain; charset=UTF-8";
    private static final String APPLICATION_JSON = "application/json";
    private static final byte[] UP = "{\"status\":\"UP\"}".getBytes(StandardCharsets.US_ASCII);

    private record ErrorBody(String error) {
    }

    /** The probes: on the IO thread. */
    static void up(HttpServerExchange exchange) {
        json(exchange, StatusCodes.OK, UP);
    }

    /** /instant: on the IO thread. */
    static void instant(HttpServerExchange exchange) {
        text(exchange, "INSTANT");
    }

    /** A file from the jar, read once at start-up and written from memory on the IO thread. */
    static HttpHandler resource(String name) {
        byte[] body;
        try (InputStream in = Endpoints.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + name);
            }
            body = in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return exchange -> json(exchange, StatusCodes.OK, body);
    }

    /**
     * /delayed and /sleep: ms is checked on the IO thread, then the wait is dispatched to the
     * worker pool, where Thread.sleep blocks one worker until it is over.
     */
    static HttpHandler waiting(int dflt, String body) {
        return exchange -> {
            String ms = exchange.getQueryParameters().containsKey("ms")
                    ? exchange.getQueryParameters().get("ms").peekFirst() : null;
            int millis = ms == null ? dflt : parseMillis(ms);
            if (millis < 0) {
                error(exchange, StatusCodes.BAD_REQUEST, "ms must be an integer in 0..60000, got '" + ms + "'");
                return;
            }
            exchange.dispatch(worker -> {
                Thread.sleep(millis);
                text(worker, body);
            });
        };
    }

    /** The value of ms when it is an integer in 0..60000, else -1. */
    static int parseMillis(String ms) {
        try {
            int value = Integer.parseInt(ms);
            return value >= 0 && value <= 60_000 ? value : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    static void text(HttpServerExchange exchange, String body) {
        exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, TEXT_PLAIN);
        exchange.getResponseSender().send(body, StandardCharsets.UTF_8);
    }

    static void json(HttpServerExchange exchange, int status, byte[] body) {
        exchange.setStatusCode(status);
        exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, APPLICATION_JSON);
        exchange.getResponseSender().send(ByteBuffer.wrap(body));
    }

    /** The contract's error: {"error":"..."} with the given status. */
    static void error(HttpServerExchange exchange, int status, String message) {
        try {
            json(exchange, status, MAPPER.writeValueAsBytes(new ErrorBody(message)));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e); // a one-string record always serializes
        }
    }

    private Endpoints() {
    }
}
