package arena.contenders.webfluxstream;

import java.util.Map;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.handler.SimpleUrlHandlerMapping;

/**
 * Study 003's {@code /stream}, shared by spring-webflux and spring-webflux-fn (each application
 * {@code @Import}s it); each serves {@code /stream/stats} from {@link StreamStats} in its own
 * style. {@code BACKPRESSURE} is {@code on} (the default) or {@code off}.
 */
@Configuration(proxyBeanMethods = false)
public class StreamConfiguration {

    /**
     * Reactor Netty's {@code send} requests this many messages from a publisher, and more only as
     * their writes complete (default 128). main() (the shared WebfluxMain) sets it to 100 before
     * Reactor Netty loads, unless JAVA_OPTS sets it: the contract's 100 sends in flight per
     * connection.
     */
    public static final String SEND_PREFETCH = "reactor.netty.send.maxPrefetchSize";
    public static final String SEND_PREFETCH_VALUE = "100";

    @Bean
    StreamStats streamStats() {
        return new StreamStats();
    }

    @Bean
    StreamHandler streamHandler(StreamStats stats, @Value("${BACKPRESSURE:on}") String backpressure) {
        boolean on = switch (backpressure.trim().toLowerCase()) {
            case "on", "" -> true;
            case "off" -> false;
            default -> throw new IllegalArgumentException("BACKPRESSURE must be on or off, got '" + backpressure + "'");
        };
        return new StreamHandler(stats, on);
    }

    /**
     * {@code /stream} (exactly: {@code /stream/stats} goes on to the application's own routes) to
     * the handler, at order -1, before the controllers and the static resources' {@code /**}.
     */
    @Bean
    HandlerMapping streamHandlerMapping(StreamHandler handler) {
        return new SimpleUrlHandlerMapping(Map.of("/stream", handler), -1);
    }
}
