package arena.contenders.webflux;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import arena.contenders.webfluxstream.StreamStats;

/**
 * /stream/stats (study 003): the shared /stream's counters, read without blocking and encoded
 * by Spring as {@code {"clients","generated","sent","dropped"}}.
 */
@RestController
public class StreamStatsController {

    private final StreamStats stats;

    public StreamStatsController(StreamStats stats) {
        this.stats = stats;
    }

    @GetMapping(path = "/stream/stats", produces = MediaType.APPLICATION_JSON_VALUE)
    public StreamStats.Snapshot stats() {
        return stats.snapshot();
    }
}
