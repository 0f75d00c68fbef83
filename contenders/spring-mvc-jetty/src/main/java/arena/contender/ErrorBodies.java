package arena.contender;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;

/**
 * Every error gets the contract's body, {"error": "..."}. Spring's own handler already maps its
 * exceptions (unknown path, unconvertible path variable, wrong method, ResponseStatusException)
 * to the right status and headers; only its ProblemDetail body is swapped for ours.
 */
@RestControllerAdvice
class ErrorBodies extends ResponseEntityExceptionHandler {

    record ErrorBody(String error) {
    }

    @Override
    protected ResponseEntity<Object> handleExceptionInternal(Exception ex, Object body, HttpHeaders headers,
            HttpStatusCode status, WebRequest request) {
        ResponseEntity<Object> entity = super.handleExceptionInternal(ex, body, headers, status, request);
        if (entity == null) {
            return null; // the response is already committed: too late for a body
        }
        String message = entity.getBody() instanceof ProblemDetail problem && problem.getDetail() != null
                ? problem.getDetail()
                : status.toString();
        // Setting the content type here skips content negotiation, so the error is JSON even on
        // a handler that produces text/plain.
        return ResponseEntity.status(entity.getStatusCode())
                .headers(entity.getHeaders())
                .contentType(MediaType.APPLICATION_JSON)
                .body(new ErrorBody(message));
    }
}
