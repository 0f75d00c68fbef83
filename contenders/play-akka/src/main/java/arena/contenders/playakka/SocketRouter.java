package arena.contenders.playakka;

import java.util.List;
import java.util.Optional;

import play.api.mvc.Handler;
import play.api.routing.HandlerDef;
import play.core.routing.HandlerInvokerFactory$;
import play.libs.Scala;
import play.mvc.Http;
import play.mvc.WebSocket;
import play.routing.Router;

/**
 * A router for one WebSocket path ({@code GET /chat}, {@code GET /stream}), to be composed after
 * the RoutingDsl router by {@code Router.orElse}: Play's Java RoutingDsl routes only actions.
 */
record SocketRouter(String path, String method, Handler handler, String prefix) implements Router {

    /** The router of GET path for socket, whose handler is named owner.method in the docs. */
    static SocketRouter of(String path, Class<?> owner, String method, WebSocket socket) {
        return new SocketRouter(path, owner.getName() + "." + method, handler(path, owner, method, socket), "");
    }

    /**
     * A Java WebSocket as a routable handler: the same adapter the routes compiler uses for a
     * Java action that returns a WebSocket (it maps Play's Java messages to Scala ones, and the
     * request handler gives it the Java components).
     */
    private static Handler handler(String path, Class<?> owner, String method, WebSocket socket) {
        HandlerDef def = new HandlerDef(owner.getClassLoader(), owner.getPackageName(),
                owner.getName(), method, Scala.toSeq(List.of()), "GET", path, "", Scala.toSeq(List.of()));
        return HandlerInvokerFactory$.MODULE$.javaWebSocket()
                .createInvoker(Scala.asScala(() -> socket), def)
                .call(Scala.asScala(() -> socket));
    }

    @Override
    public List<RouteDocumentation> documentation() {
        return List.of(new RouteDocumentation("GET", prefix + path, method));
    }

    @Override
    public Optional<Handler> route(Http.RequestHeader request) {
        return "GET".equals(request.method()) && (prefix + path).equals(request.path())
                ? Optional.of(handler)
                : Optional.empty();
    }

    @Override
    public Router withPrefix(String newPrefix) {
        return new SocketRouter(path, method, handler, newPrefix.replaceAll("/+$", "") + prefix);
    }
}
