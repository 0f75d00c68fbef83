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
 * Gives every error the contract's body, {"error": "..."}. Spring's handler already maps its
 * exceptions (unknown path, bad path variable, wrong method, ResponseStatusException) to the
 * right status and headers; only the body is replaced, in place of its ProblemDetail.
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
            return null; // response already committed: nothing left to say
        }
        String message = entity.getBody() instanceof ProblemDetail problem && problem.getDetail() != null
                ? problem.getDetail()
                : status.toString();
        // A preset content type skips negotiation, so the error is JSON whatever the handler produces.
        return ResponseEntity.status(entity.getStatusCode())
                .headers(entity.getHeaders())
                .contentType(MediaType.APPLICATION_JSON)
                .body(new ErrorBody(message));
    }
}
