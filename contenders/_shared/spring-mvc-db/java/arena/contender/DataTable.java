package arena.contender;

import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.Optional;

import org.springframework.dao.DataAccessException;
import org.springframework.http.HttpStatus;
import org.springframework.jdbc.core.RowCallbackHandler;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ResponseStatusException;

/**
 * What /db runs, the same in all five Spring MVC contenders: each contender's endpoints only bind
 * {id} or ?ms and call this, on the thread their model waits on (the request's thread, a virtual
 * thread, or the async contenders' DbExecutor).
 *
 * <p>Blocking JDBC through Boot's {@link JdbcClient}: it takes a connection from {@link DbPool}
 * (waiting for one if all are in use), runs the statement, maps the row and gives the connection
 * back. Failures are a {@link ResponseStatusException}, as /data/{id}'s are: 404 when there is no
 * row; 502 when the database fails, is down, or gives no connection within 30 s.
 */
@Component
class DataTable {

    /** A parameterised query: pgjdbc binds {@code id} as an int4 (and prepares it on the server from its fifth run). */
    static final String ROW = "SELECT id, value, active, props FROM data WHERE id = ?";

    /** pg_sleep takes seconds as a double precision. */
    static final String SLEEP = "SELECT pg_sleep(?)";

    private final JdbcClient jdbc;

    DataTable(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    /** Row {@code id} as study 002's record, a 404 when there is none, a 502 when the database fails. */
    Data row(int id) {
        Optional<Data> row;
        try {
            row = jdbc.sql(ROW).param(id).query(DataTable::data).optional();
        } catch (DataAccessException e) {
            throw failed(e);
        }
        return row.orElseThrow(() -> new ResponseStatusException(HttpStatus.NOT_FOUND, "no row with id " + id));
    }

    /** {@code SELECT pg_sleep(ms / 1000.0)}, holding one pooled connection that long. */
    void sleep(long ms) {
        try {
            jdbc.sql(SLEEP).param(ms / 1000.0).query((RowCallbackHandler) rs -> {
                // pg_sleep's one row is void: nothing to read
            });
        } catch (DataAccessException e) {
            throw failed(e);
        }
    }

    /** The row decoded into the record /data/{id} uses; props, a text[], arrives as a String[]. */
    private static Data data(ResultSet rs, int rowNum) throws SQLException {
        Array props = rs.getArray(4);
        try {
            return new Data(rs.getInt(1), rs.getString(2), rs.getBoolean(3),
                    props == null ? null : Arrays.asList((String[]) props.getArray()));
        } finally {
            if (props != null) {
                props.free();
            }
        }
    }

    /**
     * A 502 whose body says what failed in the driver's or the pool's words (e.g. "Connection to
     * 127.0.0.1:5432 refused. …", "no pooled connection within 30 s: …"): the message of the
     * deepest SQLException under Spring's wrapper ("Failed to obtain JDBC Connection"), which is
     * pgjdbc's own under Hikari's timeout.
     */
    private static ResponseStatusException failed(DataAccessException e) {
        String reason = e.getMessage();
        for (Throwable t = e.getCause(); t != null; t = t.getCause()) {
            if (t instanceof SQLException && t.getMessage() != null && !t.getMessage().isBlank()) {
                reason = t.getMessage();
            }
        }
        return new ResponseStatusException(HttpStatus.BAD_GATEWAY, "database failed: " + reason, e);
    }
}
