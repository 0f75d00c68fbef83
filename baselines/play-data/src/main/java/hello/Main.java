package hello;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;

import play.Application;
import play.ApplicationLoader;
import play.BuiltInComponentsFromContext;
import play.Environment;
import play.LoggerConfigurator;
import play.Mode;
import play.api.Play;
import play.core.server.AkkaHttpServer;
import play.core.server.ServerConfig;
import play.libs.Json;
import play.libs.ws.WSClient;
import play.libs.ws.ahc.AhcWSComponents;
import play.mvc.EssentialFilter;
import play.mvc.Http;
import play.mvc.Result;
import play.mvc.Results;
import play.routing.Router;
import play.routing.RoutingDsl;
import scala.Option;

/**
 * Play's minimal embedded Java server (play-hello) plus study 002's path, the floor of play-akka
 * on /data/{id}: /data/{id} fetches /resources/data{id}.json from the server itself with one Play
 * WS client on its defaults and maps it through Play's Json (Jackson) into a record and back.
 */
public final class Main {

    public record Data(int id, String value, boolean active, List<String> props) {
    }

    public static void main(String[] args) {
        int port = Integer.parseInt(System.getenv("PORT"));
        ClassLoader classLoader = Main.class.getClassLoader();
        Environment environment = new Environment(new File("."), classLoader, Mode.PROD);
        ApplicationLoader.Context context = ApplicationLoader.create(environment);
        LoggerConfigurator.apply(classLoader).ifPresent(
                logging -> logging.configure(environment, context.initialConfig(), Map.of()));

        Application application = new Components(context, port).application();
        Play.start(application.asScala());
        ServerConfig config = ServerConfig.apply(classLoader, new File("."), Option.apply(port),
                Option.empty(), "127.0.0.1", Mode.PROD.asScala(), System.getProperties());
        AkkaHttpServer.fromApplication(application.asScala(), config);
    }

    /** Play's built-ins and Play WS, the router (built once), no HTTP filters. */
    static final class Components extends BuiltInComponentsFromContext implements AhcWSComponents {

        /** The two documents, read once from the classpath and answered from memory. */
        private static final Map<String, byte[]> RESOURCES = Map.of(
                "data1.json", classpath("public/resources/data1.json"),
                "data2.json", classpath("public/resources/data2.json"));

        private final String origin;
        private final WSClient ws = wsClient();
        private final Router router = RoutingDsl.fromComponents(this)
                .GET("/instant").routingTo(request -> Results.ok("INSTANT"))
                .GET("/resources/:file").routingTo(this::resource)
                .GET("/data/:id").routingAsync(this::data)
                .build();

        Components(ApplicationLoader.Context context, int port) {
            super(context);
            this.origin = "http://127.0.0.1:" + port;
        }

        private Result resource(Http.Request request, String file) {
            byte[] body = RESOURCES.get(file);
            return body == null ? Results.notFound() : Results.ok(body).as(Http.MimeTypes.JSON);
        }

        private CompletionStage<Result> data(Http.Request request, Integer id) {
            return ws.url(origin + "/resources/data" + id + ".json").get()
                    .thenApply(response -> Results.ok(Json.toJson(Json.fromJson(response.asJson(), Data.class))))
                    .exceptionally(failure -> Results.status(Http.Status.BAD_GATEWAY));
        }

        @Override
        public Router router() {
            return router;
        }

        @Override
        public List<EssentialFilter> httpFilters() {
            return List.of();
        }

        private static byte[] classpath(String name) {
            try (InputStream in = Main.class.getClassLoader().getResourceAsStream(name)) {
                return in.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
