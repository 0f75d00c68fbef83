package arena.contenders.vertx;

import arena.contenders.vertxcommon.Launch;

/**
 * Starts Vert.x (the shared {@link Launch}) and deploys {@link HttpVerticle} once per event loop,
 * the way Vert.x scales a server over cores: every instance listens on the same port and Vert.x
 * spreads the connections over them.
 */
public final class Main {

    private Main() {
    }

    public static void main(String[] args) {
        Launch launch = Launch.start("vertx");
        launch.report(launch.vertx().deployVerticle(HttpVerticle.class, launch.deployment()),
                launch.instances() + " verticle instances (one per event loop)");
    }
}
