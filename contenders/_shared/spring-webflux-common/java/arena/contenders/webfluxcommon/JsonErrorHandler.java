package arena.contenders.webfluxcommon;

import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.TypeMismatchException;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.resource.NoResourceFoundException;
import org.springframework.web.server.MethodNotAllowedException;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebInputException;
import org.springframework.web.server.WebExceptionHandler;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import reactor.core.publisher.Mono;

/**
 * Every error answers {@code {"error":"..."}} with the contract's status, in both WebFlux
 * contenders. A WebExceptionHandler rather than a @ControllerAdvice or a filter on the router
 * function, because an unknown path or a wrong method never reaches a controller or a route;
 * ordered before Boot's DefaultErrorWebExceptionHandler (-1) so Boot's own error body never shows.
 */
@Component
@Order(-2)
public class JsonErrorHandler implements WebExceptionHandler {

    private static final Log log = LogFactory.getLog(JsonErrorHandler.class);

    private final ObjectMapper json;

    public JsonErrorHandler(ObjectMapper json) {
        this.json = json;
    }

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
        ServerHttpResponse response = exchange.getResponse();
        if (response.isCommitted()) {
            // Too late for a body; let the server close the connection.
            return Mono.error(ex);
        }
        HttpStatusCode status = HttpStatus.INTERNAL_SERVER_ERROR;
        String message;
        if (ex instanceof ResponseStatusException rse) {
            status = rse.getStatusCode();
            message = message(exchange, rse);
            response.getHeaders().addAll(rse.getHeaders()); // e.g. Allow on a 405
        } else {
            // Not one of the contract's cases: a bug, so it is worth a log line.
            log.error("Unhandled error on " + exchange.getRequest().getPath(), ex);
            message = "internal error";
        }
        response.setStatusCode(status);
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        byte[] body;
        try {
            body = json.writeValueAsBytes(Map.of("error", message));
        } catch (JsonProcessingException e) {
            body = "{\"error\":\"internal error\"}".getBytes();
        }
        response.getHeaders().setContentLength(body.length);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }

    private static String message(ServerWebExchange exchange, ResponseStatusException ex) {
        var request = exchange.getRequest();
        if (ex instanceof NoResourceFoundException) {
            // No controller or route and no static resource matched: an unknown path.
            return "no such path: " + request.getPath().value();
        }
        if (ex instanceof MethodNotAllowedException) {
            return "method " + request.getMethod() + " not allowed on " + request.getPath().value();
        }
        if (ex instanceof ServerWebInputException input && input.getMethodParameter() != null
                && input.getCause() instanceof TypeMismatchException mismatch) {
            // e.g. /data/x on the annotated controller: {id} did not bind to an int (the
            // functional handler parses it itself, with the same message).
            return input.getMethodParameter().getParameterName() + " must be an integer, got '"
                    + mismatch.getValue() + "'";
        }
        String reason = ex.getReason();
        if (reason != null && !reason.isBlank()) {
            return reason;
        }
        HttpStatus known = HttpStatus.resolve(ex.getStatusCode().value());
        return known != null ? known.getReasonPhrase() : "error " + ex.getStatusCode().value();
    }
}
