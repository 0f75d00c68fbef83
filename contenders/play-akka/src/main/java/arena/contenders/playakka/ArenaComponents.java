package arena.contenders.playakka;

import java.util.List;

import play.ApplicationLoader;
import play.BuiltInComponentsFromContext;
import play.db.DBComponents;
import play.db.HikariCPComponents;
import play.http.HttpErrorHandler;
import play.libs.ws.ahc.AhcWSComponents;
import play.mvc.EssentialFilter;
import play.routing.Router;
import play.routing.RoutingDsl;

/**
 * Play's compile-time components (what Server.forRouter builds internally), plus the two things
 * forRouter cannot take: the JSON error handler and Play WS. Like forRouter, no HTTP filters. The
 * router is the RoutingDsl routes, then the /chat and /stream WebSockets. /db uses Play's JDBC
 * components (DBComponents with HikariCPComponents, as Play's docs for compile-time DI show).
 */
final class ArenaComponents extends BuiltInComponentsFromContext
        implements AhcWSComponents, DBComponents, HikariCPComponents {

    private final HttpErrorHandler errorHandler = new JsonErrorHandler();
    private final Router router;

    ArenaComponents(ApplicationLoader.Context context, String downstream, boolean backpressure) {
        super(context);
        // Built once, here: Play asks router() for every request. The routes share one Play WS
        // client (AsyncHttpClient: pooled keep-alive connections, timeouts from play.ws.* in
        // application.conf); AhcWSComponents.wsClient() builds a new client on every call, and
        // Play's lifecycle closes it on shutdown.
        // Play's Java RoutingDsl routes only actions; the /chat WebSocket is a router of its own,
        // asked when no RoutingDsl route matches.
        // /stream (study 003) is one more WebSocket router; /stream/stats is a RoutingDsl route.
        StreamStats streams = new StreamStats();
        // /db: Play's Database "default" (db.default in application.conf, its url from DB_URL),
        // and the database dispatcher its queries run on. Without DB_URL there is no database
        // (db.default has no url, so it is never built) and /db answers 502.
        DbRoutes db = config().hasPath("db.default.url")
                ? new DbRoutes(database("default"), new DatabaseExecutionContext(actorSystem()))
                : new DbRoutes(null, null);
        this.router = new Routes(actorSystem(), wsClient(), downstream, streams, db)
                .build(RoutingDsl.fromComponents(this))
                .orElse(ChatSocket.router(actorSystem(), materializer()))
                .orElse(StreamSocket.router(actorSystem(), backpressure, streams));
    }

    @Override
    public Router router() {
        return router;
    }

    @Override
    public HttpErrorHandler httpErrorHandler() {
        return errorHandler;
    }

    @Override
    public List<EssentialFilter> httpFilters() {
        return List.of();
    }
}
