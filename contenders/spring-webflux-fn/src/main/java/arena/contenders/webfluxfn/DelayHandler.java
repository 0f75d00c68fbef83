package arena.contenders.webfluxfn;

import java.time.Duration;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.ResponseStatusException;

import reactor.core.publisher.Mono;

/**
 * Handler functions for /instant, /delayed and /sleep (studies 004 and 001). The waits are
 * timers ({@code Mono.delay}), so a pending request holds no thread.
 */
@Component
public class DelayHandler {

    static final long MAX_MS = 60_000;

    public Mono<ServerResponse> instant(ServerRequest request) {
        return text("INSTANT");
    }

    public Mono<ServerResponse> delayed(ServerRequest request) {
        return wait(request, 10_000).then(text("DELAYED"));
    }

    public Mono<ServerResponse> sleep(ServerRequest request) {
        return wait(request, 100).then(text("SLEPT"));
    }

    private static Mono<ServerResponse> text(String body) {
        return ServerResponse.ok().contentType(MediaType.TEXT_PLAIN).bodyValue(body);
    }

    /**
     * A timer for {@code ?ms=N}, or for {@code dflt} ms without it. Anything but an integer in
     * 0..60000, including an empty {@code ?ms=}, is a 400.
     */
    private static Mono<Long> wait(ServerRequest request, long dflt) {
        String raw = request.queryParam("ms").orElse(null);
        if (raw == null) {
            return Mono.delay(Duration.ofMillis(dflt));
        }
        try {
            long ms = Long.parseLong(raw);
            if (ms >= 0 && ms <= MAX_MS) {
                return Mono.delay(Duration.ofMillis(ms));
            }
        } catch (NumberFormatException ignored) {
            // falls through to the 400 below
        }
        return Mono.error(new ResponseStatusException(HttpStatus.BAD_REQUEST,
                "ms must be an integer in 0.." + MAX_MS + ", got '" + raw + "'"));
    }
}
