package arena.contenders.webfluxfn;

import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

import arena.contenders.webfluxstream.StreamStats;

import reactor.core.publisher.Mono;

/**
 * The handler function for /stream/stats (study 003): the shared /stream's counters, encoded
 * by Spring as {@code {"clients","generated","sent","dropped"}}.
 */
@Component
public class StreamStatsHandler {

    private final StreamStats stats;

    public StreamStatsHandler(StreamStats stats) {
        this.stats = stats;
    }

    public Mono<ServerResponse> stats(ServerRequest request) {
        return ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).bodyValue(stats.snapshot());
    }
}
