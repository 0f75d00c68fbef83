package arena.contenders.webflux;

import java.time.Duration;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import arena.contenders.webfluxcommon.Millis;

import reactor.core.publisher.Mono;

/**
 * /instant, /delayed and /sleep (studies 004 and 001). The waits are timers
 * ({@code Mono.delay}), so a pending request holds no thread. {@code ms} is a String, checked by
 * the shared {@link Millis}: anything but an integer in 0..60000 is a 400.
 */
@RestController
public class DelayController {

    @GetMapping(path = "/instant", produces = MediaType.TEXT_PLAIN_VALUE)
    public Mono<String> instant() {
        return Mono.just("INSTANT");
    }

    @GetMapping(path = "/delayed", produces = MediaType.TEXT_PLAIN_VALUE)
    public Mono<String> delayed(@RequestParam(name = "ms", required = false) String ms) {
        return Mono.delay(Duration.ofMillis(Millis.parse(ms, 10_000))).thenReturn("DELAYED");
    }

    @GetMapping(path = "/sleep", produces = MediaType.TEXT_PLAIN_VALUE)
    public Mono<String> sleep(@RequestParam(name = "ms", required = false) String ms) {
        return Mono.delay(Duration.ofMillis(Millis.parse(ms, 100))).thenReturn("SLEPT");
    }
}
