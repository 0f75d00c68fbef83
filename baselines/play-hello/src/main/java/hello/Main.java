package hello;

import java.io.File;
import java.util.List;
import java.util.Map;

import play.Application;
import play.ApplicationLoader;
import play.BuiltInComponentsFromContext;
import play.Environment;
import play.LoggerConfigurator;
import play.Mode;
import play.api.Play;
import play.core.server.AkkaHttpServer;
import play.core.server.ServerConfig;
import play.mvc.EssentialFilter;
import play.mvc.Results;
import play.routing.Router;
import play.routing.RoutingDsl;
import scala.Option;

/**
 * Play's minimal embedded Java server, the floor of play-akka on /instant: what the docs'
 * {@code Server.forRouter(components -> RoutingDsl...build())} builds (Play's built-in components,
 * one RoutingDsl route, no filters) spelled out, because forRouter always binds 0.0.0.0.
 */
public final class Main {

    public static void main(String[] args) {
        int port = Integer.parseInt(System.getenv("PORT"));
        ClassLoader classLoader = Main.class.getClassLoader();
        Environment environment = new Environment(new File("."), classLoader, Mode.PROD);
        ApplicationLoader.Context context = ApplicationLoader.create(environment);
        LoggerConfigurator.apply(classLoader).ifPresent(
                logging -> logging.configure(environment, context.initialConfig(), Map.of()));

        Application application = new Components(context).application();
        Play.start(application.asScala());
        ServerConfig config = ServerConfig.apply(classLoader, new File("."), Option.apply(port),
                Option.empty(), "127.0.0.1", Mode.PROD.asScala(), System.getProperties());
        AkkaHttpServer.fromApplication(application.asScala(), config);
    }

    /** forRouter's components: Play's built-ins, the router (built once), no HTTP filters. */
    static final class Components extends BuiltInComponentsFromContext {

        private final Router router = RoutingDsl.fromComponents(this)
                .GET("/instant").routingTo(request -> Results.ok("INSTANT"))
                .build();

        Components(ApplicationLoader.Context context) {
            super(context);
        }

        @Override
        public Router router() {
            return router;
        }

        @Override
        public List<EssentialFilter> httpFilters() {
            return List.of();
        }
    }
}
