package arena.contender;

import com.fasterxml.jackson.databind.ObjectMapper;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.util.Map;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.ServerHttpRequest;
import org.springframework.http.server.ServerHttpResponse;
import org.springframework.http.server.ServletServerHttpRequest;
import org.springframework.stereotype.Component;
import org.springframework.web.socket.WebSocketHandler;
import org.springframework.web.socket.server.HandshakeInterceptor;

/**
 * Reads /stream's rate and size before the upgrade. Valid values go to the session's attributes
 * for StreamHandler; anything else answers 400 with the contract's {"error": …} body, and
 * returning false stops Spring before the handshake, so nothing is upgraded.
 */
@Component
class StreamParams implements HandshakeInterceptor {

    static final String RATE = "stream.rate";
    static final String SIZE = "stream.size";

    static final int MAX_RATE = 1_000_000;
    static final int MIN_SIZE = 16;
    static final int MAX_SIZE = 65_536;

    private final ObjectMapper json;

    StreamParams(ObjectMapper json) {
        this.json = json;
    }

    @Override
    public boolean beforeHandshake(ServerHttpRequest request, ServerHttpResponse response, WebSocketHandler handler,
            Map<String, Object> attributes) throws IOException {
        HttpServletRequest servlet = ((ServletServerHttpRequest) request).getServletRequest();
        String rate = servlet.getParameter("rate");
        String size = servlet.getParameter("size");
        int r = parse(rate, 0, 0, MAX_RATE);
        int s = parse(size, 250, MIN_SIZE, MAX_SIZE);
        if (r < 0) {
            return reject(response, "rate must be an integer in 0.." + MAX_RATE + ", got '" + rate + "'");
        }
        if (s < 0) {
            return reject(response,
                    "size must be an integer in " + MIN_SIZE + ".." + MAX_SIZE + ", got '" + size + "'");
        }
        attributes.put(RATE, r);
        attributes.put(SIZE, s);
        return true;
    }

    @Override
    public void afterHandshake(ServerHttpRequest request, ServerHttpResponse response, WebSocketHandler handler,
            Exception exception) {
    }

    /** The value, dflt when absent, or -1 for anything but decimal digits within min..max (even "?rate="). */
    private static int parse(String raw, int dflt, int min, int max) {
        if (raw == null) {
            return dflt;
        }
        if (raw.isEmpty() || raw.length() > 9 || !raw.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return -1;
        }
        int value = Integer.parseInt(raw);
        return value >= min && value <= max ? value : -1;
    }

    private boolean reject(ServerHttpResponse response, String message) throws IOException {
        byte[] body = json.writeValueAsBytes(new ErrorBodies.ErrorBody(message));
        response.setStatusCode(HttpStatus.BAD_REQUEST);
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        response.getHeaders().setContentLength(body.length);
        response.getBody().write(body); // Spring's handler closes (flushes) the response after us
        return false;
    }
}
