package arena.contenders.helidon;

import io.helidon.http.DirectHandler;
import io.helidon.http.HeaderValues;
import io.helidon.http.HttpException;
import io.helidon.http.NotFoundException;
import io.helidon.http.Status;
import io.helidon.webserver.http.DirectHandlers;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

/**
 * Every error answers {@code {"error":"..."}}. Two of Helidon's error paths:
 * <ul>
 * <li>routing error handlers, for what a handler or service throws: an HttpException with its
 * status (e.g. the static content service's 404), and any other exception (500, logged);</li>
 * <li>direct handlers, for what Helidon answers itself, outside any handler: no route matched
 * (404), a request it cannot parse (400), too large headers, ... which would otherwise get
 * Helidon's plain-text answer.</li>
 * </ul>
 */
final class JsonErrors {

    private static final System.Logger LOG = System.getLogger(JsonErrors.class.getName());

    private JsonErrors() {
    }

    static void httpException(ServerRequest req, ServerResponse res, HttpException e) {
        e.headers().forEach(res::header);
        String message = e instanceof NotFoundException
                ? "no such path: " + req.prologue().method().text() + " " + req.path().absolute().path()
                : nonBlank(e.getMessage(), e.status().reasonPhrase());
        Json.error(res, e.status(), message);
    }

    static void unexpected(ServerRequest req, ServerResponse res, Exception e) {
        // Not one of the contract's cases: a bug, so it is worth a log line.
        LOG.log(System.Logger.Level.ERROR, "Unhandled error on " + req.prologue().method().text() + " "
                + req.path().absolute().path(), e);
        Json.error(res, Status.INTERNAL_SERVER_ERROR_500, "internal error");
    }

    /** The same JSON body for every event Helidon answers without routing. */
    static DirectHandlers direct() {
        DirectHandler json = (request, eventType, status, headers, message) ->
                DirectHandler.TransportResponse.builder()
                        .status(status)
                        .headers(headers)
                        .header(HeaderValues.CONTENT_TYPE_JSON)
                        .entity(Json.errorBody(status.code() == Status.NOT_FOUND_404.code()
                                ? "no such path: " + request.method() + " " + request.path()
                                : nonBlank(message, status.reasonPhrase())))
                        .build();
        DirectHandlers.Builder builder = DirectHandlers.builder();
        for (DirectHandler.EventType type : DirectHandler.EventType.values()) {
            builder.addHandler(type, json);
        }
        return builder.build();
    }

    private static String nonBlank(String message, String fallback) {
        return message == null || message.isBlank() ? fallback : message;
    }
}
