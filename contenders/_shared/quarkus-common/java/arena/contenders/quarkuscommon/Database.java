package arena.contenders.quarkuscommon;

/**
 * What /db shares between the two drivers: the two statements, the check that DB_URL was given
 * at all, and how a failure answers (no row a 404; the database or the pool failing, or no
 * pooled connection within 30 s, a 502 with the driver's or the pool's own message).
 */
public final class Database {

    /** /db/{id}: a parameterised query on a pooled connection. */
    public static final String ROW_PG = "SELECT id, value, active, props FROM data WHERE id = $1";
    public static final String ROW_JDBC = "SELECT id, value, active, props FROM data WHERE id = ?";
    /** /db/slow: holds one pooled connection {@code ms} milliseconds. */
    public static final String SLEEP_PG = "SELECT pg_sleep($1)";
    public static final String SLEEP_JDBC = "SELECT pg_sleep(?)";

    private Database() {
    }

    /** Without DB_URL the server still runs and every /db request is a 502. */
    public static void requireUrl() {
        if (!DbUrlConfigSource.given()) {
            throw new ApiError(502, "no database: DB_URL is not set");
        }
    }

    public static ApiError noRow(int id) {
        return new ApiError(404, "no row with id " + id);
    }

    public static ApiError failure(Throwable t) {
        if (t instanceof ApiError e) {
            return e;
        }
        return new ApiError(502, "database failed: " + Downstream.describe(t));
    }

    /** pg_sleep's argument: seconds. */
    public static double seconds(long ms) {
        return ms / 1000.0;
    }
}
