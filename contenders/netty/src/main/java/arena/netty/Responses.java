package arena.netty;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;

/** Builds the full responses the server sends; every one carries its Content-Length. */
final class Responses {

    /** One shared, thread-safe mapper, as Jackson advises. */
    static final ObjectMapper MAPPER = new ObjectMapper();

    static final String TEXT_PLAIN = "text/plain; charset=UTF-8";

    private record ErrorBody(String error) {
    }

    static FullHttpResponse text(String body) {
        return of(HttpResponseStatus.OK, TEXT_PLAIN, body.getBytes(StandardCharsets.UTF_8));
    }

    static FullHttpResponse json(HttpResponseStatus status, byte[] body) {
        return of(status, HttpHeaderValues.APPLICATION_JSON.toString(), body);
    }

    /** The contract's error: {"error":"..."} with the given status. */
    static FullHttpResponse error(HttpResponseStatus status, String message) {
        try {
            return json(status, MAPPER.writeValueAsBytes(new ErrorBody(message)));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e); // a one-string record always serializes
        }
    }

    private static FullHttpResponse of(HttpResponseStatus status, String contentType, byte[] body) {
        // wrappedBuffer does not copy: the constant bodies are shared, read-only, by every response.
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(body));
        response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, contentType)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
        return response;
    }

    /** A file from the jar, read once at start-up. */
    static byte[] classpath(String name) {
        try (InputStream in = Responses.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + name);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Responses() {
    }
}
