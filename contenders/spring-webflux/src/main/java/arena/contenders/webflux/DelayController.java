package arena.contenders.webflux;

import java.time.Duration;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

import reactor.core.publisher.Mono;

/**
 * /instant, /delayed and /sleep (studies 004 and 001). The waits are timers
 * ({@code Mono.delay}), so a pending request holds no thread.
 */
@RestController
public class DelayController {

    static final long MAX_MS = 60_000;

    @GetMapping(path = "/instant", produces = MediaType.TEXT_PLAIN_VALUE)
    public Mono<String> instant() {
        return Mono.just("INSTANT");
    }

    @GetMapping(path = "/delayed", produces = MediaType.TEXT_PLAIN_VALUE)
    public Mono<String> delayed(@RequestParam(name = "ms", required = false) String ms) {
        return Mono.delay(Duration.ofMillis(millis(ms, 10_000))).thenReturn("DELAYED");
    }

    @GetMapping(path = "/sleep", produces = MediaType.TEXT_PLAIN_VALUE)
    public Mono<String> sleep(@RequestParam(name = "ms", required = false) String ms) {
        return Mono.delay(Duration.ofMillis(millis(ms, 100))).thenReturn("SLEPT");
    }

    /**
     * Parsed by hand rather than bound to a {@code long}: Spring's binding would turn an empty
     * {@code ?ms=} into the default, while the contract wants 400 for anything that is not an
     * integer in 0..60000.
     */
    static long millis(String raw, long dflt) {
        if (raw == null) {
            return dflt;
        }
        try {
            long ms = Long.parseLong(raw);
            if (ms >= 0 && ms <= MAX_MS) {
                return ms;
            }
        } catch (NumberFormatException ignored) {
            // falls through to the 400 below
        }
        throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
                "ms must be an integer in 0.." + MAX_MS + ", got '" + raw + "'");
    }
}
