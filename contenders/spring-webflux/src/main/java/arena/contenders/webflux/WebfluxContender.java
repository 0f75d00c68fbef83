package arena.contenders.webflux;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Import;

import arena.contenders.webfluxchat.ChatConfiguration;
import arena.contenders.webfluxstream.StreamConfiguration;

/**
 * Spring WebFlux on Reactor Netty: every request is served on the event loop, never blocked.
 * The /chat and /stream WebSockets come from {@link ChatConfiguration} and
 * {@link StreamConfiguration}, shared with spring-webflux-fn and outside this package's component
 * scan, hence the explicit import.
 */
@SpringBootApplication
@Import({ ChatConfiguration.class, StreamConfiguration.class })
public class WebfluxContender {

    /**
     * Works around a Reactor Netty bug (reactor/reactor-netty#4361, PR #4347; present in the
     * 1.2.18 that Boot 3.5.16 brings): when a client sends its next request on a keep-alive
     * connection before the server has finished with the previous one, the request is buffered,
     * and after a synchronous answer the server can stop reading that connection for good; about
     * one `arena verify` in two hung on such a request here. Flushing the last response at once
     * when no read is pending terminates the previous request before the next one arrives. Read
     * once by Reactor Netty's HttpTrafficHandler, so set before Boot starts; a -D in JAVA_OPTS
     * still wins. spring-webflux-fn sets the same.
     */
    static final String LAST_FLUSH_WHEN_NO_READ = "reactor.netty.http.server.lastFlushWhenNoRead";

    public static void main(String[] args) {
        if (System.getProperty(LAST_FLUSH_WHEN_NO_READ) == null) {
            System.setProperty(LAST_FLUSH_WHEN_NO_READ, "true");
        }
        // /stream's 100 sends in flight: Reactor Netty's send prefetch, read once when it loads.
        if (System.getProperty(StreamConfiguration.SEND_PREFETCH) == null) {
            System.setProperty(StreamConfiguration.SEND_PREFETCH, StreamConfiguration.SEND_PREFETCH_VALUE);
        }
        SpringApplication.run(WebfluxContender.class, args);
    }
}
