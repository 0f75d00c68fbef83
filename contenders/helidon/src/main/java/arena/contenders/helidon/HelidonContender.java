package arena.contenders.helidon;

import java.time.Duration;
import java.util.List;

import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.Headers;
import io.helidon.http.HttpException;
import io.helidon.http.Status;
import io.helidon.logging.common.LogConfig;
import io.helidon.webclient.api.WebClient;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.staticcontent.ClasspathHandlerConfig;
import io.helidon.webserver.staticcontent.StaticContentFeature;
import io.helidon.webserver.websocket.WsConfig;
import io.helidon.webserver.websocket.WsRouting;

/**
 * Helidon 4 SE WebServer ("Níma"): every request runs on a new virtual thread, so handlers block
 * as plain code does. /chat is Helidon's WebSocket support (a WsListener per connection, each
 * connection on a virtual thread of its own). Started on 127.0.0.1:$PORT (or $BIND_ADDRESS:$PORT);
 * Helidon's own JVM shutdown hook stops it on SIGTERM.
 */
public final class HelidonContender {

    private static final Duration TIMEOUT = Duration.ofSeconds(2);

    private HelidonContender() {
    }

    public static void main(String[] args) {
        // java.util.logging from logging.properties, as a Helidon SE main starts.
        LogConfig.configureRuntime();

        // BIND_ADDRESS only in a multi-host run, where load agents on other hosts must reach it.
        String host = System.getenv().getOrDefault("BIND_ADDRESS", "127.0.0.1");
        int port = Integer.parseInt(System.getenv().getOrDefault("PORT", "8080"));
        // Unset: itself, on the address it listens on (127.0.0.1 does not answer once moved).
        String downstreamUrl = System.getenv().getOrDefault("DOWNSTREAM_URL", "http://" + host + ":" + port)
                .replaceAll("/+$", "");

        // One shared blocking WebClient: HTTP/1.1 keep-alive connections in its (default, shared)
        // connection cache, 2-s connect and read timeouts.
        WebClient downstream = WebClient.builder()
                .baseUri(downstreamUrl)
                .connectTimeout(TIMEOUT)
                .readTimeout(TIMEOUT)
                .keepAlive(true)
                .followRedirects(false)
                .build();
        Handlers handlers = new Handlers(downstream);
        // /db (arena's database study): Helidon's DB Client over JDBC on a HikariCP pool of at most
        // DB_POOL connections; none when DB_URL is unset (/db then answers 502). The pool connects
        // in the background, so the server starts and is ready without the database.
        DbPool pool = DbPool.fromEnv();
        DbHandlers db = DbHandlers.create(pool);
        ChatRooms rooms = new ChatRooms();
        boolean backpressure = backpressure(System.getenv("BACKPRESSURE"));
        StreamStats streams = new StreamStats();

        WebServer server = WebServer.builder()
                .host(host)
                .port(port)
                .directHandlers(JsonErrors.direct())
                // Helidon leaves Nagle on; a chat writes several small frames to one member in
                // a row, and each then waited for the last one's ACK (about 10 ms a delivery).
                .connectionOptions(socket -> socket.tcpNoDelay(true))
                .routing(routing -> routing(routing, handlers, db, streams))
                // /chat (study 000): Helidon's WebSocket routing beside the HTTP routing, one
                // ChatListener per connection; frames over 64 KiB are refused by the server
                // itself, which closes with 1009.
                // /stream (study 003): one StreamListener per connection, which rejects a bad
                // rate or size before the upgrade (the HTTP route GET /stream then answers 400).
                .addRouting(WsRouting.builder()
                        .endpoint("/chat", () -> new ChatListener(rooms))
                        .endpoint("/stream", () -> new StreamListener(backpressure, streams)))
                .addProtocol(WsConfig.builder().maxFrameLength(ChatListener.MAX_FRAME).build())
                .build()
                .start();
        System.out.println("helidon listening on http://" + host + ":" + server.port()
                + " (Helidon SE 4.3.1, virtual threads, BACKPRESSURE=" + (backpressure ? "on" : "off")
                + (pool == null ? ", no database" : ", database " + pool.jdbcUrl() + " pool " + pool.maximumPoolSize())
                + ")");
    }

    /** BACKPRESSURE: on (the default, also when empty) or off. */
    private static boolean backpressure(String value) {
        if (value == null || value.isBlank() || value.equalsIgnoreCase("on")) {
            return true;
        }
        if (value.equalsIgnoreCase("off")) {
            return false;
        }
        throw new IllegalArgumentException("BACKPRESSURE must be on or off, got '" + value + "'");
    }

    /**
     * Transfer-Encoding, or any Content-Length but one single 0: Helidon's own WebClient sends
     * "Content-Length: 0" on every GET, and closing on it made each /data/{id} call through the
     * server itself open a new connection (0.35x its stack's example, issue 10).
     */
    static boolean hasBody(Headers headers) {
        if (headers.contains(HeaderNames.TRANSFER_ENCODING)) {
            return true;
        }
        if (!headers.contains(HeaderNames.CONTENT_LENGTH)) {
            return false;
        }
        List<String> lengths = headers.get(HeaderNames.CONTENT_LENGTH).allValues();
        return lengths.size() != 1 || !lengths.get(0).trim().equals("0");
    }

    private static void routing(HttpRouting.Builder routing, Handlers handlers, DbHandlers db,
            StreamStats streams) {
        routing
                // A request that comes with a body is answered and the connection closed. No
                // route here takes a body, and Helidon reads a body framed both ways (or by two
                // Content-Lengths) one way, then would read what follows as a next request, which
                // a proxy reading it the other way took for body: RFC 9112 6.1 and 6.3 ask for
                // the close.
                .addFilter((chain, req, res) -> {
                    if (hasBody(req.headers())) {
                        res.header(HeaderValues.CONNECTION_CLOSE);
                    }
                    chain.proceed();
                })
                .get("/actuator/health/liveness", (req, res) -> Json.up(res))
                .get("/actuator/health/readiness", (req, res) -> Json.up(res))
                .get("/instant", handlers::instant)
                .get("/delayed", handlers::delayed)
                .get("/sleep", handlers::sleep)
                .get("/data/{id}", handlers::data)
                // Routes match in order: /db/slow before /db/{id}.
                .get("/db/slow", db::slow)
                .get("/db/{id}", db::row)
                // /stream without a WebSocket upgrade, or with a bad rate or size (the listener
                // rejected the upgrade): 400 for a bad value, 426 otherwise.
                .get("/stream", Handlers::streamWithoutUpgrade)
                .get("/stream/stats", (req, res) -> Json.send(res, Status.OK_200, streams.json()))
                // The study's two documents: Helidon's static content, from the classpath
                // (public/resources/), both kept in memory.
                .register("/resources", StaticContentFeature.createService(ClasspathHandlerConfig.builder()
                        .location("public/resources")
                        .addCachedFile("data1.json")
                        .addCachedFile("data2.json")
                        .build()))
                .error(HttpException.class, JsonErrors::httpException)
                .error(Exception.class, JsonErrors::unexpected);
    }
}
