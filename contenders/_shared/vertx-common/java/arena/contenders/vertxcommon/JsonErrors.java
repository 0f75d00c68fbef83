package arena.contenders.vertxcommon;

import io.netty.handler.codec.http.HttpResponseStatus;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.HttpException;

/**
 * The Router's error handlers: every failure answers {@code {"error":"..."}} with the contract's
 * status, including the ones no route sees (an unknown path is the Router's 404, a path served
 * for another method its 405). Handlers fail a request with {@link HttpException}, whose status
 * picks the error handler and whose payload is the message. Shared by both Vert.x contenders.
 */
public final class JsonErrors {

    /** Every status this server fails with, plus the Router's own 404 and 405. */
    private static final int[] STATUSES = {400, 404, 405, 500, 502, 503};

    private JsonErrors() {
    }

    /** {@code server} names the contender in the log line of an unexpected error. */
    public static void install(Router router, String server) {
        for (int status : STATUSES) {
            router.errorHandler(status, ctx -> handle(ctx, server));
        }
    }

    private static void handle(RoutingContext ctx, String server) {
        HttpServerResponse response = ctx.response();
        if (response.headWritten() || response.closed()) {
            // Too late for a body (or nobody to read it): drop the connection.
            if (!response.closed()) {
                response.close();
            }
            return;
        }
        int status = ctx.statusCode() > 0 ? ctx.statusCode() : 500;
        String message = message(ctx, status, server);
        if (status == 405) {
            response.putHeader(HttpHeaders.ALLOW, "GET");
        }
        response.setStatusCode(status)
                .putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
                .end(new JsonObject().put("error", message).encode());
    }

    private static String message(RoutingContext ctx, int status, String server) {
        Throwable failure = ctx.failure();
        if (failure instanceof HttpException http && http.getPayload() != null && !http.getPayload().isBlank()) {
            return http.getPayload();
        }
        switch (status) {
            case 404:
                return "no such path: " + ctx.request().path();
            case 405:
                return "method " + ctx.request().method() + " not allowed on " + ctx.request().path();
            case 500:
                // Not one of the contract's cases: a bug, so it is worth a log line.
                if (failure != null) {
                    System.err.println(server + ": unhandled error on " + ctx.request().path());
                    failure.printStackTrace();
                }
                return "internal error";
            default:
                return HttpResponseStatus.valueOf(status).reasonPhrase();
        }
    }
}
