package arena.contenders.webfluxfn;

import java.time.Duration;

import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.ResponseStatusException;

import arena.contenders.webfluxcommon.Millis;

import reactor.core.publisher.Mono;

/**
 * Handler functions for /instant, /delayed and /sleep (studies 004 and 001). The waits are
 * timers ({@code Mono.delay}), so a pending request holds no thread.
 */
@Component
public class DelayHandler {

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
     * A timer for {@code ?ms=N}, or for {@code dflt} ms without it; the shared {@link Millis}
     * makes anything but an integer in 0..60000, including an empty {@code ?ms=}, a 400.
     */
    private static Mono<Long> wait(ServerRequest request, long dflt) {
        long ms;
        try {
            ms = Millis.parse(request.queryParam("ms").orElse(null), dflt);
        } catch (ResponseStatusException e) {
            return Mono.error(e);
        }
        return Mono.delay(Duration.ofMillis(ms));
    }
}
