package arena.contenders.playakka;

import java.io.File;
import java.util.Map;

import play.Application;
import play.ApplicationLoader;
import play.Environment;
import play.LoggerConfigurator;
import play.Mode;
import play.core.server.AkkaHttpServer;
import play.core.server.ServerConfig;
import play.server.Server;
import scala.Option;

/**
 * Play 2.9 embedded in a plain Java main, on its Akka HTTP server, in production mode.
 *
 * <p>Play's Java embedding API is {@code play.server.Server}. Its {@code forRouter} factory cannot
 * take an error handler or a bind address (it always binds 0.0.0.0 with Play's HTML error
 * pages), so the same steps are done here by hand, as Play's own {@code AkkaHttpServerComponents}
 * does: build the application from {@link ArenaComponents}, start it, and serve it with
 * {@link AkkaHttpServer} on 127.0.0.1:$PORT (or $BIND_ADDRESS:$PORT). The result is wrapped in
 * {@code play.server.Server}.
 *
 * <p>On SIGTERM, a JVM shutdown hook (as in Play's ProdServerStart) stops the server through Akka's
 * CoordinatedShutdown: unbind, give open requests Play's termination timeout, stop the application.
 */
public final class PlayAkkaContender {

    private PlayAkkaContender() {
    }

    public static void main(String[] args) {
        // BIND_ADDRESS only in a multi-host run, where load agents on other hosts must reach it.
        String host = System.getenv().getOrDefault("BIND_ADDRESS", "127.0.0.1");
        int port = Integer.parseInt(System.getenv().getOrDefault("PORT", "9000"));
        // Unset: itself, on the address it listens on (127.0.0.1 does not answer once moved).
        String downstream = System.getenv().getOrDefault("DOWNSTREAM_URL", "http://" + host + ":" + port);
        boolean backpressure = backpressure(System.getenv("BACKPRESSURE"));

        ClassLoader classLoader = PlayAkkaContender.class.getClassLoader();
        Environment environment = new Environment(new File("."), classLoader, Mode.PROD);
        ApplicationLoader.Context context = ApplicationLoader.create(environment);

        // What Play's application loaders do first: Logback through Play's configurator
        // (logback-play-default.xml: Play at INFO, everything else at WARN).
        LoggerConfigurator.apply(classLoader).ifPresent(
                logging -> logging.configure(environment, context.initialConfig(), Map.of()));

        Application application = new ArenaComponents(context, downstream, backpressure).application();
        play.api.Play.start(application.asScala());

        ServerConfig config = ServerConfig.apply(classLoader, new File("."), Option.apply(port),
                Option.empty(), host, Mode.PROD.asScala(), System.getProperties());
        Server server = new Server(AkkaHttpServer.fromApplication(application.asScala(), config));

        // As Play's ProdServerStart does: Play turns Akka's own JVM shutdown hook off, so SIGTERM
        // reaches the server through this hook; stop() runs Akka's CoordinatedShutdown (unbind,
        // let open requests finish within play.server.terminationTimeout, stop the application).
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (application.asScala().coordinatedShutdown().shutdownReason().isEmpty()) {
                server.stop();
            }
        }, "play-shutdown"));
        System.out.println("play-akka listening on http://" + server.mainAddress().getHostString()
                + ":" + server.httpPort() + " (Play 2.9.11, Akka 2.6.21, prod mode, BACKPRESSURE="
                + (backpressure ? "on" : "off") + ")");
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
}
