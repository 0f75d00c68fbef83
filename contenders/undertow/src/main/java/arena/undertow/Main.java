package arena.undertow;

import java.net.URI;

import io.undertow.Handlers;
import io.undertow.Undertow;
import io.undertow.UndertowOptions;
import io.undertow.server.RoutingHandler;
import io.undertow.util.Headers;
import io.undertow.util.Methods;
import io.undertow.util.StatusCodes;

/**
 * Undertow's core API, no servlet layer: a RoutingHandler on one HTTP listener. Fast answers
 * are written on the IO threads; /delayed, /sleep, /data and /db are dispatched to the worker pool,
 * where they block (Undertow's "IO threads + worker pool" model). /chat is a WebSocket
 * ({@link Chat}) whose messages are handled on the IO threads; /stream is study 003's
 * generated stream ({@link Stream}), sent by an actor per client on the worker pool.
 */
public final class Main {

    private static final int SHUTDOWN_TIMEOUT_MS = 2_000;

    public static void main(String[] args) {
        // BIND_ADDRESS only in a multi-host run, where load agents on other hosts must reach it.
        String host = env("BIND_ADDRESS", "127.0.0.1");
        int port = Integer.parseInt(env("PORT", "8080"));
        // Unset: itself, on the address it listens on (127.0.0.1 does not answer once moved).
        URI downstreamUrl = URI.create(env("DOWNSTREAM_URL", "http://" + host + ":" + port));
        String workerThreads = env("WORKER_THREADS", null);
        boolean backpressure = backpressure(env("BACKPRESSURE", "on"));
        Stream stream = new Stream(backpressure);
        // /db: the lab's PostgreSQL when DB_URL is set; unset, the server runs as ever and /db answers 502.
        Database database = Database.fromEnv(env("DB_URL", null), env("DB_POOL", null));

        RoutingHandler routes = Handlers.routing()
                .get("/actuator/health/liveness", Endpoints::up)
                .get("/actuator/health/readiness", Endpoints::up)
                .get("/instant", Endpoints::instant)
                .get("/resources/data1.json", Endpoints.resource("/resources/data1.json"))
                .get("/resources/data2.json", Endpoints.resource("/resources/data2.json"))
                .get("/delayed", Endpoints.waiting(10_000, "DELAYED"))
                .get("/sleep", Endpoints.waiting(100, "SLEPT"))
                .get("/data/{id}", new DataEndpoint(downstreamUrl))
                // The database: checked on the IO thread, the JDBC query dispatched to the workers.
                .get("/db/slow", database::slow)
                .get("/db/{id}", database::row)
                // Study 000's chat: the WebSocket handshake on the IO thread, then Chat (a plain
                // GET without the upgrade falls through to Undertow's 404, given a JSON body).
                .get("/chat", Handlers.websocket(new Chat()))
                // Study 003's stream: rate and size checked on the IO thread, then the handshake.
                .get("/stream", stream.handshake())
                .get("/stream/stats", stream::stats)
                .setFallbackHandler(exchange -> Endpoints.error(exchange, StatusCodes.NOT_FOUND,
                        "no such path: " + exchange.getRequestPath()))
                .setInvalidMethodHandler(exchange -> {
                    exchange.getResponseHeaders().put(Headers.ALLOW, Methods.GET_STRING);
                    Endpoints.error(exchange, StatusCodes.METHOD_NOT_ALLOWED,
                            exchange.getRequestMethod() + " is not allowed on " + exchange.getRequestPath());
                });

        Undertow.Builder builder = Undertow.builder()
                .addHttpListener(port, host)
                .setHandler(new JsonErrors(routes))
                // stop() waits this long for busy workers, then interrupts them (shutdownNow).
                .setServerOption(UndertowOptions.SHUTDOWN_TIMEOUT, SHUTDOWN_TIMEOUT_MS);
        if (workerThreads != null) { // unset: Undertow's default, 8 workers per IO thread
            int n = Integer.parseInt(workerThreads);
            if (n < 1) {
                throw new IllegalArgumentException("WORKER_THREADS must be at least 1, got " + n);
            }
            builder.setWorkerThreads(n);
        }
        Undertow undertow = builder.build();
        undertow.start();

        // SIGTERM: close the listener, give the worker pool 2 s, then interrupt the workers
        // still sleeping in /delayed or waiting on the downstream; the JVM exits after ~2 s.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            undertow.stop();
            database.close(); // at most 2 s more
        }, "shutdown"));

        var worker = undertow.getWorker().getMXBean();
        System.out.printf("undertow listening on %s:%d (%d IO threads, %d worker threads), downstream %s, back-pressure %s, %s%n",
                host, port, worker.getIoThreadCount(), worker.getMaxWorkerPoolSize(), downstreamUrl, backpressure ? "on" : "off",
                database.describe());
    }

    private static boolean backpressure(String value) {
        return switch (value.toLowerCase(java.util.Locale.ROOT)) {
            case "on" -> true;
            case "off" -> false;
            default -> throw new IllegalArgumentException("BACKPRESSURE must be on or off, got " + value);
        };
    }

    private static String env(String name, String dflt) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? dflt : value.trim();
    }

    private Main() {
    }
}
