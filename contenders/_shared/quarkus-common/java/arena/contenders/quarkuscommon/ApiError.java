package arena.contenders.quarkuscommon;

/**
 * A request the contract answers with an error status and {@code {"error": …}}: thrown by the
 * checks, the downstream call and the database, answered by {@link ErrorMappers}.
 */
public final class ApiError extends RuntimeException {

    private final int status;

    public ApiError(int status, String message) {
        super(message, null, false, false); // no stack trace: it is an answer, not a fault
        this.status = status;
    }

    public int status() {
        return status;
    }
}
