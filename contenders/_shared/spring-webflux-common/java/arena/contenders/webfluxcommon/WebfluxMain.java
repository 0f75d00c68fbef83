package arena.contenders.webfluxcommon;

import org.springframework.boot.SpringApplication;

import arena.contenders.webfluxstream.StreamConfiguration;

/** What both WebFlux contenders' main() does: two Reactor Netty properties, then Boot. */
public final class WebfluxMain {

    /**
     * Works around a Reactor Netty bug (reactor/reactor-netty#4361, PR #4347; present in the
     * 1.2.18 that Boot 3.5.16 brings): when a client sends its next request on a keep-alive
     * connection before the server has finished with the previous one, the request is buffered,
     * and after a synchronous answer the server can stop reading that connection for good. With
     * Go's client about one request in fifty hung, and about one `arena verify` in two failed.
     * Flushing the last response at once when no read is pending terminates the previous request
     * before the next one arrives, which closes that route.
     */
    static final String LAST_FLUSH_WHEN_NO_READ = "reactor.netty.http.server.lastFlushWhenNoRead";

    /**
     * Reactor Netty's event loops: one per CPU the JVM is given, as Netty sizes them, instead of
     * Reactor Netty's minimum of 4. On the lab's one pinned core, four loops took turns on it,
     * and a /data call to this very server crossed from loop to loop (a wake-up and a context
     * switch each way): /data/2 went from 1,158 to 5,782 requests/s with wrk (docs/performance.md).
     */
    static final String IO_WORKER_COUNT = "reactor.netty.ioWorkerCount";

    private WebfluxMain() {
    }

    /**
     * Sets the properties, each unless a -D in JAVA_OPTS already did (Reactor Netty reads them
     * once, when it loads, so before Boot starts), and runs the application.
     */
    public static void run(Class<?> application, String[] args) {
        setDefault(LAST_FLUSH_WHEN_NO_READ, "true");
        setDefault(IO_WORKER_COUNT, String.valueOf(Runtime.getRuntime().availableProcessors()));
        // /stream's 100 sends in flight: Reactor Netty's send prefetch.
        setDefault(StreamConfiguration.SEND_PREFETCH, StreamConfiguration.SEND_PREFETCH_VALUE);
        SpringApplication.run(application, args);
    }

    private static void setDefault(String property, String value) {
        if (System.getProperty(property) == null) {
            System.setProperty(property, value);
        }
    }
}
