package arena.contenders.quarkuscommon;

import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.MediaType;

import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.RestResponse;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/**
 * Every error Quarkus REST answers, as the contract's JSON: the contenders' own
 * {@link ApiError}s, and the statuses Quarkus REST raises itself (404 for a path no resource
 * matches, 405 for another method, 415, …), which it answers as HTML or empty otherwise.
 * Quarkus' own not-found mapper (the dev-mode page) has a lower priority than these.
 */
public class ErrorMappers {

    private static final Logger LOG = Logger.getLogger(ErrorMappers.class);

    @ServerExceptionMapper
    public RestResponse<ErrorBody> api(ApiError e) {
        return body(e.status(), e.getMessage());
    }

    @ServerExceptionMapper
    public RestResponse<ErrorBody> web(WebApplicationException e) {
        int status = e.getResponse() == null ? 500 : e.getResponse().getStatus();
        String message = e.getMessage() == null || e.getMessage().isBlank() ? "HTTP " + status : e.getMessage();
        return body(status, message);
    }

    /** A fault of the contender's own: logged, and a 500 with the JSON body. */
    @ServerExceptionMapper
    public RestResponse<ErrorBody> other(RuntimeException e) {
        LOG.error("unexpected failure", e);
        return body(500, "internal error: " + e);
    }

    static RestResponse<ErrorBody> body(int status, String message) {
        return RestResponse.ResponseBuilder.<ErrorBody>create(status)
                .entity(new ErrorBody(message))
                .type(MediaType.APPLICATION_JSON_TYPE)
                .build();
    }
}
