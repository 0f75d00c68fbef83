package arena.contenders.quarkuscommon;

import jakarta.ws.rs.WebApplicationException;

/**
 * How a failed /data/{id} call answers, the same for the Uni of one contender and the
 * exception of the other: the downstream's 404 is a 404, anything else (another error status,
 * a refused connection, no answer within the REST client's 2-s read timeout, a body Jackson
 * cannot read as {@link Data}) a 502. The REST client raises the status as a
 * {@link WebApplicationException} (its default response mapper); everything else arrives as a
 * ProcessingException or the cause itself.
 */
public final class Downstream {

    private Downstream() {
    }

    public static ApiError failure(Throwable t) {
        if (t instanceof ApiError e) {
            return e;
        }
        if (t instanceof WebApplicationException w && w.getResponse() != null && w.getResponse().getStatus() == 404) {
            return new ApiError(404, "downstream: no such resource");
        }
        return new ApiError(502, "downstream failed: " + describe(t));
    }

    /** The deepest cause's class and message: what actually went wrong. */
    static String describe(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = root.getMessage();
        return root.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }
}
