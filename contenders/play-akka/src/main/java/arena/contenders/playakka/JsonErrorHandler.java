package arena.contenders.playakka;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import play.Logger;
import play.http.HttpErrorHandler;
import play.mvc.Http.RequestHeader;
import play.mvc.Http.Status;
import play.mvc.Result;

/**
 * Play's HttpErrorHandler for everything the routes do not answer themselves: an unknown path or
 * method (the router finds no handler: 404), a request the server cannot parse (400), and any
 * exception an action throws (500). Every answer is {@code {"error":"..."}}, never Play's HTML
 * error page.
 */
final class JsonErrorHandler implements HttpErrorHandler {

    private static final Logger.ALogger log = Logger.of(JsonErrorHandler.class);

    @Override
    public CompletionStage<Result> onClientError(RequestHeader request, int statusCode, String message) {
        String error;
        if (statusCode == Status.NOT_FOUND) {
            error = "no such path: " + request.method() + " " + request.path();
        } else if (message != null && !message.isBlank()) {
            error = message;
        } else {
            error = "client error " + statusCode;
        }
        return CompletableFuture.completedFuture(Errors.json(statusCode, error));
    }

    @Override
    public CompletionStage<Result> onServerError(RequestHeader request, Throwable exception) {
        // Not one of the contract's cases: a bug, so it is worth a log line.
        log.error("Unhandled error on " + request.method() + " " + request.path(), exception);
        return CompletableFuture.completedFuture(Errors.json(Status.INTERNAL_SERVER_ERROR, "internal error"));
    }
}
