package arena.contenders.vertxcommon;

import java.net.URI;
import java.util.concurrent.TimeUnit;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;

/**
 * What both Vert.x contenders' main() does around its deployment, which is theirs: read the
 * contract's variables, start Vert.x with its default options, close it on SIGTERM, and report
 * the deployment. The verticles get {@code host}, {@code port}, {@code downstream},
 * {@code backpressure}, {@code instances} and, when DB_URL is set, {@code db}
 * ({@code {"url","pool"}}: DB_URL, and DB_POOL when set) as their config.
 */
public final class Launch {

    private final String server;
    private final Vertx vertx;
    private final int instances;
    private final JsonObject config;

    private Launch(String server, Vertx vertx, int instances, JsonObject config) {
        this.server = server;
        this.vertx = vertx;
        this.instances = instances;
        this.config = config;
    }

    /** {@code server} names the contender in the log lines. */
    public static Launch start(String server) {
        // BIND_ADDRESS only in a multi-host run, where load agents on other hosts must reach it.
        String host = env("BIND_ADDRESS", "127.0.0.1");
        int port = Integer.parseInt(env("PORT", "8080"));
        // Unset: itself, on the address it listens on (127.0.0.1 does not answer once moved).
        String downstream = env("DOWNSTREAM_URL", "http://" + host + ":" + port);
        boolean backpressure = switch (env("BACKPRESSURE", "on").toLowerCase()) {
            case "on" -> true;
            case "off" -> false;
            default -> throw new IllegalArgumentException("BACKPRESSURE must be on or off, got '"
                    + System.getenv("BACKPRESSURE") + "'");
        };
        // /db: unset, the server runs without a database and /db answers 502.
        JsonObject db = database(env("DB_URL", ""), env("DB_POOL", ""));

        // Default options: 2 × available processors event loops (under taskset, the pinned CPUs).
        VertxOptions options = new VertxOptions();
        Vertx vertx = Vertx.vertx(options);
        int instances = options.getEventLoopPoolSize();

        // Vert.x installs no signal handling of its own: close it on SIGTERM so the servers,
        // consumers, timers and clients stop at once even with 10-s /delayed requests pending.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                vertx.close().toCompletionStage().toCompletableFuture().get(8, TimeUnit.SECONDS);
            } catch (Exception e) {
                System.err.println(server + ": close did not finish: " + e);
            }
        }, "vertx-shutdown"));

        JsonObject config = new JsonObject()
                .put("host", host)
                .put("port", port)
                .put("downstream", downstream)
                .put("backpressure", backpressure)
                .put("instances", instances);
        if (db != null) {
            config.put("db", db);
        }
        return new Launch(server, vertx, instances, config);
    }

    public Vertx vertx() {
        return vertx;
    }

    /** Event loops, and so the instances of each verticle: one per loop. */
    public int instances() {
        return instances;
    }

    /** One instance per event loop, each with the config. */
    public DeploymentOptions deployment() {
        return new DeploymentOptions().setInstances(instances).setConfig(config);
    }

    /** Logs the start once {@code deployed} succeeds ({@code what} says what runs); exits 1 if it fails. */
    public void report(Future<?> deployed, String what) {
        deployed.onSuccess(id -> System.out.printf("%s: listening on %s:%d, %s, downstream %s, back-pressure %s, %s%n",
                        server, config.getString("host"), config.getInteger("port"), what, config.getString("downstream"),
                        config.getBoolean("backpressure") ? "on" : "off", describeDb(config.getJsonObject("db"))))
                .onFailure(e -> {
                    System.err.println(server + ": failed to start: " + e);
                    e.printStackTrace();
                    System.exit(1);
                });
    }

    /**
     * The {@code db} config: DB_URL as given (a libpq URI, parsed by the PostgreSQL client) and
     * DB_POOL, an integer 1..256 (anything else stops the start); null when DB_URL is unset.
     * Without DB_POOL the pool keeps the client's default size.
     */
    private static JsonObject database(String url, String pool) {
        if (url.isEmpty()) {
            return null;
        }
        JsonObject db = new JsonObject().put("url", url);
        if (!pool.isEmpty()) {
            int size;
            try {
                size = Integer.parseInt(pool);
            } catch (NumberFormatException e) {
                size = 0;
            }
            if (size < 1 || size > 256) {
                throw new IllegalArgumentException("DB_POOL must be an integer in 1..256, got '" + pool + "'");
            }
            db.put("pool", size);
        }
        return db;
    }

    /** The start-up line's word on the database: where (no password) and the pool's size. */
    private static String describeDb(JsonObject db) {
        if (db == null) {
            return "no database (DB_URL unset)";
        }
        String where;
        try {
            URI uri = URI.create(db.getString("url"));
            where = uri.getHost() + (uri.getPort() == -1 ? "" : ":" + uri.getPort()) + uri.getPath();
        } catch (IllegalArgumentException e) {
            where = "DB_URL";
        }
        return "database " + where + " (pool " + (db.containsKey("pool") ? db.getInteger("pool") : "default") + ")";
    }

    private static String env(String name, String dflt) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? dflt : value.trim();
    }
}
