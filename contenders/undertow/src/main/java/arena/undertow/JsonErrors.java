package arena.undertow;

import io.undertow.server.HttpHandler;
import io.undertow.server.HttpServerExchange;
import io.undertow.util.StatusCodes;

/**
 * The root handler. Undertow answers an exchange that ended with no response (a handler that
 * threw, a worker interrupted at shutdown) with an empty body; this default-response listener,
 * Undertow's hook for error pages, gives those answers the contract's {"error": "..."} body.
 * Every error the routes know about is written by the routes themselves.
 */
final class JsonErrors implements HttpHandler {

    private final HttpHandler next;

    JsonErrors(HttpHandler next) {
        this.next = next;
    }

    @Override
    public void handleRequest(HttpServerExchange exchange) throws Exception {
        exchange.addDefaultResponseListener(ended -> {
            if (!ended.isResponseChannelAvailable() || ended.getStatusCode() < 400) {
                return false;
            }
            Endpoints.error(ended, ended.getStatusCode(), StatusCodes.getReason(ended.getStatusCode()));
            return true;
        });
        next.handleRequest(exchange);
    }
}
