package arena.contenders.vertx;

import java.util.concurrent.TimeUnit;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;

/**
 * Starts Vert.x with its default options and deploys {@link HttpVerticle} once per event loop,
 * the way Vert.x scales a server over cores: every instance listens on the same port and Vert.x
 * spreads the connections over them.
 */
public final class Main {

    private Main() {
    }

    public static void main(String[] args) {
        int port = Integer.parseInt(env("PORT", "8080"));
        String downstream = env("DOWNSTREAM_URL", "http://127.0.0.1:" + port);
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
        // timers and clients stop at once even with 10-s /delayed requests pending.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                vertx.close().toCompletionStage().toCompletableFuture().get(8, TimeUnit.SECONDS);
            } catch (Exception e) {
                System.err.println("vertx: close did not finish: " + e);
            }
        }, "vertx-shutdown"));

        JsonObject config = new JsonObject()
                .put("port", port)
                .put("downstream", downstream)
                .put("backpressure", backpressure);
        vertx.deployVerticle(HttpVerticle.class, new DeploymentOptions().setInstances(instances).setConfig(config))
                .onSuccess(id -> System.out.printf("vertx: listening on 127.0.0.1:%d, %d verticle instances "
                        + "(one per event loop), downstream %s, back-pressure %s%n", port, instances, downstream,
                        backpressure ? "on" : "off"))
                .onFailure(e -> {
                    System.err.println("vertx: failed to start: " + e);
                    e.printStackTrace();
                    System.exit(1);
                });
    }

    private static String env(String name, String dflt) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? dflt : value.trim();
    }
}
