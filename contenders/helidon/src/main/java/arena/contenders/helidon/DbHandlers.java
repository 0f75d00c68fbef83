package arena.contenders.helidon;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.List;

import io.helidon.common.uri.UriQuery;
import io.helidon.http.HeaderValues;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

/**
 * /db/{id} and /db/slow (arena's database study) with plain JDBC on the HikariCP pool of
 * {@link DbPool}: a blocking call on the request's virtual thread, which parks (and frees its
 * carrier) while it waits for a pooled connection and for PostgreSQL's answer.
 */
final class DbHandlers {

    static final String FIND = "SELECT id, value, active, props FROM data WHERE id = ?";
    static final String SLEEP = "SELECT pg_sleep(?)";

    /** Null when DB_URL is unset: /db then answers 502. */
    private final DbPool pool;

    private DbHandlers(DbPool pool) {
        this.pool = pool;
    }

    static DbHandlers create(DbPool pool) {
        return new DbHandlers(pool);
    }

    /** GET /db/{id}: the row as the typed record, encoded as /data/{id} encodes it. */
    void row(ServerRequest req, ServerResponse res) {
        String raw = req.path().pathParameters().get("id");
        int id;
        try {
            id = Integer.parseInt(raw);
        } catch (NumberFormatException e) {
            Json.error(res, Status.BAD_REQUEST_400, "id must be a 32-bit integer, got '" + raw + "'");
            return;
        }
        if (pool == null) {
            Json.error(res, Status.BAD_GATEWAY_502, "no database: DB_URL is not set");
            return;
        }
        Data data;
        try (Connection connection = pool.connection();
                PreparedStatement statement = connection.prepareStatement(FIND)) {
            statement.setInt(1, id);
            try (ResultSet rs = statement.executeQuery()) {
                if (!rs.next()) {
                    Json.error(res, Status.NOT_FOUND_404, "no row with id " + id);
                    return;
                }
                Array props = rs.getArray(4);
                List<String> list = props == null ? null : Arrays.asList((String[]) props.getArray());
                data = new Data(rs.getInt(1), rs.getString(2), rs.getBoolean(3), list);
            }
        } catch (SQLException e) {
            Json.error(res, Status.BAD_GATEWAY_502, "database failed: " + describe(e));
            return;
        }
        Json.send(res, Status.OK_200, Json.bytes(data));
    }

    /** GET /db/slow?ms=N: pg_sleep(N / 1000.0) holding one pooled connection, then SLEPT. */
    void slow(ServerRequest req, ServerResponse res) {
        UriQuery query = req.query();
        String raw = query.contains("ms") ? query.get("ms") : null;
        long ms;
        try {
            ms = raw == null ? -1 : Long.parseLong(raw);
        } catch (NumberFormatException e) {
            ms = -1;
        }
        if (ms < 0 || ms > Handlers.MAX_MS) {
            Json.error(res, Status.BAD_REQUEST_400, raw == null
                    ? "ms is required: an integer in 0.." + Handlers.MAX_MS
                    : "ms must be an integer in 0.." + Handlers.MAX_MS + ", got '" + raw + "'");
            return;
        }
        if (pool == null) {
            Json.error(res, Status.BAD_GATEWAY_502, "no database: DB_URL is not set");
            return;
        }
        try (Connection connection = pool.connection();
                PreparedStatement statement = connection.prepareStatement(SLEEP)) {
            statement.setDouble(1, ms / 1000.0);
            statement.execute();
        } catch (SQLException e) {
            Json.error(res, Status.BAD_GATEWAY_502, "database failed: " + describe(e));
            return;
        }
        res.header(HeaderValues.CONTENT_TYPE_TEXT_PLAIN);
        res.send("SLEPT");
    }

    /** The innermost message: the driver's or the pool's reason, without the wrappers. */
    private static String describe(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        String message = t.getMessage();
        return message == null || message.isBlank() ? t.getClass().getSimpleName() : message;
    }
}
