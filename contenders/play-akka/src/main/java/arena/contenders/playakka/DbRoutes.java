package arena.contenders.playakka;

import static java.util.concurrent.CompletableFuture.completedFuture;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;

import play.db.Database;
import play.libs.Json;
import play.mvc.Http;
import play.mvc.Result;
import play.mvc.Results;

/**
 * /db/{id} and /db/slow (arena's database study) on Play's JDBC {@link Database} (play-jdbc's
 * HikariCP pool, db.default in application.conf), the way Play's docs do blocking JDBC: the
 * query runs on the database execution context (a dispatcher of DB_POOL threads, one per pooled
 * connection) and the action returns a CompletionStage, so Akka's default dispatcher never
 * blocks.
 *
 * <p>A request waits for the database up to 30 s in all, the contract's pool acquire timeout:
 * first in the dispatcher's queue (every thread holds a connection), then in HikariCP's pool.
 * HikariCP waits its whole connection timeout even when it cannot open a connection (the
 * database refuses or is gone), while the contract wants a 502 within 10 s then; so the wait
 * for a connection is HikariCP's own wait in slices of {@link #SLICE_MS}, and a slice that runs
 * out while HikariCP's last attempt to open a connection failed (the timeout's cause, which it
 * clears when an attempt succeeds) ends it at once.
 */
final class DbRoutes {

    static final String FIND = "SELECT id, value, active, props FROM data WHERE id = ?";
    static final String SLEEP = "SELECT pg_sleep(?)";
    static final long ACQUIRE_TIMEOUT_MS = 30_000;
    private static final long SLICE_MS = 2_000;

    /** Null when DB_URL is unset: /db then answers 502. */
    private final Database db;
    private final HikariPool pool;
    private final Executor dbContext;

    DbRoutes(Database db, Executor dbContext) {
        this.db = db;
        this.dbContext = dbContext;
        this.pool = db == null ? null : hikariPool(db);
    }

    /** The HikariCP pool behind Play's Database (play-jdbc gives its HikariDataSource itself). */
    private static HikariPool hikariPool(Database db) {
        try {
            HikariDataSource dataSource = db.getDataSource().unwrap(HikariDataSource.class);
            return (HikariPool) dataSource.getHikariPoolMXBean();
        } catch (SQLException e) {
            throw new IllegalStateException("database " + db.getName() + " is not a HikariCP pool", e);
        }
    }

    /** GET /db/{id}: the row as the typed record, encoded as /data/{id} encodes it. */
    CompletionStage<Result> row(Http.Request request, String rawId) {
        int id;
        try {
            id = Integer.parseInt(rawId);
        } catch (NumberFormatException e) {
            return completedFuture(Errors.json(Http.Status.BAD_REQUEST,
                    "id must be a 32-bit integer, got '" + rawId + "'"));
        }
        if (db == null) {
            return completedFuture(Errors.json(Http.Status.BAD_GATEWAY, "no database: DB_URL is not set"));
        }
        long queued = System.nanoTime();
        return CompletableFuture.supplyAsync(() -> find(id, queued), dbContext)
                .handle((data, failure) -> {
                    if (failure != null) {
                        return Errors.json(Http.Status.BAD_GATEWAY, "database failed: " + describe(failure));
                    }
                    if (data.isEmpty()) {
                        return Errors.json(Http.Status.NOT_FOUND, "no row with id " + id);
                    }
                    return Results.ok(Json.toJson(data.get()));
                });
    }

    /** GET /db/slow?ms=N: pg_sleep(N / 1000.0) holding one pooled connection, then SLEPT. */
    CompletionStage<Result> slow(Http.Request request) {
        Optional<String> raw = request.queryString("ms");
        long ms;
        try {
            ms = raw.map(Long::parseLong).orElse(-1L);
        } catch (NumberFormatException e) {
            ms = -1;
        }
        if (ms < 0 || ms > Routes.MAX_MS) {
            return completedFuture(Errors.json(Http.Status.BAD_REQUEST, raw.isEmpty()
                    ? "ms is required: an integer in 0.." + Routes.MAX_MS
                    : "ms must be an integer in 0.." + Routes.MAX_MS + ", got '" + raw.get() + "'"));
        }
        if (db == null) {
            return completedFuture(Errors.json(Http.Status.BAD_GATEWAY, "no database: DB_URL is not set"));
        }
        double seconds = ms / 1000.0;
        long queued = System.nanoTime();
        return CompletableFuture.runAsync(() -> sleep(seconds, queued), dbContext)
                .handle((done, failure) -> failure != null
                        ? Errors.json(Http.Status.BAD_GATEWAY, "database failed: " + describe(failure))
                        : Results.ok("SLEPT"));
    }

    /** On the database dispatcher: the parameterised query on a pooled connection. */
    private Optional<Data> find(int id, long queued) {
        try (Connection connection = connection(queued);
                PreparedStatement statement = connection.prepareStatement(FIND)) {
            statement.setInt(1, id);
            try (ResultSet rs = statement.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                Array props = rs.getArray(4);
                List<String> list = props == null ? null : Arrays.asList((String[]) props.getArray());
                return Optional.of(new Data(rs.getInt(1), rs.getString(2), rs.getBoolean(3), list));
            }
        } catch (SQLException e) {
            throw new CompletionException(e);
        }
    }

    /** On the database dispatcher: pg_sleep holding a pooled connection. */
    private void sleep(double seconds, long queued) {
        try (Connection connection = connection(queued);
                PreparedStatement statement = connection.prepareStatement(SLEEP)) {
            statement.setDouble(1, seconds);
            statement.execute();
        } catch (SQLException e) {
            throw new CompletionException(e);
        }
    }

    /**
     * A pooled connection within 30 s of the request (its time in the dispatcher's queue
     * included), failing early when HikariCP cannot open connections to the database.
     */
    private Connection connection(long queued) throws SQLException {
        long deadline = queued + ACQUIRE_TIMEOUT_MS * 1_000_000L;
        while (true) {
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                throw new SQLTransientConnectionException("no pooled connection within "
                        + ACQUIRE_TIMEOUT_MS / 1000 + " s");
            }
            try {
                return pool.getConnection(Math.min(left, SLICE_MS));
            } catch (SQLTransientConnectionException e) {
                if (e.getCause() != null || left <= SLICE_MS) {
                    throw e;
                }
            }
        }
    }

    /** The innermost message: the driver's or the pool's reason, without the wrappers. */
    private static String describe(Throwable failure) {
        Throwable t = failure;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        String message = t.getMessage();
        return message == null || message.isBlank() ? t.getClass().getSimpleName() : message;
    }
}
