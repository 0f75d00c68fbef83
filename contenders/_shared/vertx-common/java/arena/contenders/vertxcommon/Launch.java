package arena.contenders.vertxcommon;

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
 * {@code backpressure} and {@code instances} as their config.
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
        deployed.onSuccess(id -> System.out.printf("%s: listening on %s:%d, %s, downstream %s, back-pressure %s%n",
                        server, config.getString("host"), config.getInteger("port"), what, config.getString("downstream"),
                        config.getBoolean("backpressure") ? "on" : "off"))
                .onFailure(e -> {
                    System.err.println(server + ": failed to start: " + e);
                    e.printStackTrace();
                    System.exit(1);
                });
    }

    private static String env(String name, String dflt) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? dflt : value.trim();
    }
}
