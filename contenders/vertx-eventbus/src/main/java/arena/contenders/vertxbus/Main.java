package arena.contenders.vertxbus;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

import arena.contenders.vertxcommon.Launch;

/**
 * Starts Vert.x (the shared {@link Launch}: default options, a local, non-clustered EventBus)
 * and deploys, once per event loop each, the {@link ServiceVerticle} that does the work and the
 * {@link HttpVerticle} that hands it every request over the EventBus.
 */
public final class Main {

    private Main() {
    }

    public static void main(String[] args) {
        Launch launch = Launch.start("vertx-eventbus");
        Vertx vertx = launch.vertx();
        DeploymentOptions deployment = launch.deployment();
        // The services first, so the consumers are registered before the server takes requests.
        Future<String> deployed = vertx.deployVerticle(ServiceVerticle.class, deployment)
                .compose(services -> vertx.deployVerticle(HttpVerticle.class, deployment));
        int n = launch.instances();
        launch.report(deployed, n + " HTTP and " + n + " service verticle instances (one each per event loop)");
    }
}
