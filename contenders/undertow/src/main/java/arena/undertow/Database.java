package arena.undertow;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;

import io.undertow.server.HttpServerExchange;
import io.undertow.util.PathTemplateMatch;
import io.undertow.util.StatusCodes;

/**
 * /db/{id} and /db/slow: the request is checked on the IO thread, then dispatched
 * (exchange.dispatch) to Undertow's XNIO worker pool, where blocking JDBC (the PostgreSQL
 * driver) borrows a connection from a HikariCP pool of DB_POOL connections and runs the query,
 * as /sleep and /data/{id} block there. A worker that finds every connection busy waits in
 * HikariCP for one, up to 30 s.
 */
final class Database {

    /** The longest a request waits for a pooled connection (HikariCP's connectionTimeout). */
    static final long ACQUIRE_TIMEOUT_MS = 30_000;
    /** How often a request waiting on the pool looks whether the database refuses connections. */
    private static final long SLICE_MS = 1_000;
    private static final String ROW = "SELECT id, value, active, props FROM data WHERE id = ?";
    private static final String SLEEP = "SELECT pg_sleep(?)";

    private final HikariDataSource dataSource; // null when DB_URL is unset
    private final HikariPool pool;
    /** Set when HikariCP's last attempt to open a connection failed; cleared by a borrow that works. */
    private volatile boolean refusing;

    private Database(HikariDataSource dataSource) {
        this.dataSource = dataSource;
        // HikariDataSource is a thin facade over HikariPool; the pool's own getConnection(timeout)
        // lets a waiting request look up between slices (see acquire).
        this.pool = dataSource == null ? null : (HikariPool) dataSource.getHikariPoolMXBean();
    }

    /**
     * The database of DB_URL ({@code postgres://user:password@host:port/db}, libpq's URI) with a
     * pool of DB_POOL connections, or none when DB_URL is unset. The pool starts without the
     * database (initializationFailTimeout -1): it connects in the background, and /db answers 502
     * until it can.
     */
    static Database fromEnv(String url, String poolSize) {
        if (url == null) {
            return new Database(null);
        }
        int size = poolSize == null ? 10 : Integer.parseInt(poolSize); // unset: HikariCP's default, 10
        if (size < 1 || size > 256) {
            throw new IllegalArgumentException("DB_POOL must be in 1..256, got " + size);
        }
        Jdbc jdbc = Jdbc.of(url);
        HikariConfig config = new HikariConfig();
        config.setPoolName("arena-db");
        config.setJdbcUrl(jdbc.url());
        config.setUsername(jdbc.user());
        config.setPassword(jdbc.password());
        config.setMaximumPoolSize(size); // minimumIdle left to HikariCP: the same, a fixed-size pool
        config.setConnectionTimeout(ACQUIRE_TIMEOUT_MS);
        config.setInitializationFailTimeout(-1);
        return new Database(new HikariDataSource(config));
    }

    /** What start-up prints about it. */
    String describe() {
        return dataSource == null ? "no database (DB_URL unset)"
                : "database " + dataSource.getJdbcUrl() + " (HikariCP pool of " + dataSource.getMaximumPoolSize() + ")";
    }

    /** GET /db/{id}: id checked on the IO thread, the query on a worker. */
    void row(HttpServerExchange exchange) {
        String raw = exchange.getAttachment(PathTemplateMatch.ATTACHMENT_KEY).getParameters().get("id");
        if (raw == null || raw.isEmpty()) { // "/db/": no id at all, so no such route
            Endpoints.error(exchange, StatusCodes.NOT_FOUND, "no such path: " + exchange.getRequestPath());
            return;
        }
        if ("slow".equals(raw)) { // /db/slow is its own route; this keeps it so whatever the matcher prefers
            slow(exchange);
            return;
        }
        int id;
        try {
            id = Integer.parseInt(raw);
        } catch (NumberFormatException e) { // not an integer, or outside 32 bits
            Endpoints.error(exchange, StatusCodes.BAD_REQUEST, "id must be a 32-bit integer, got '" + raw + "'");
            return;
        }
        dispatch(exchange, (worker, connection) -> queryRow(worker, connection, id));
    }

    /** GET /db/slow?ms=N (ms required): checked on the IO thread, the sleep held on a worker. */
    void slow(HttpServerExchange exchange) {
        String ms = exchange.getQueryParameters().containsKey("ms")
                ? exchange.getQueryParameters().get("ms").peekFirst() : null;
        int millis = ms == null ? -1 : Endpoints.parseMillis(ms);
        if (millis < 0) {
            Endpoints.error(exchange, StatusCodes.BAD_REQUEST,
                    ms == null ? "ms is required" : "ms must be an integer in 0..60000, got '" + ms + "'");
            return;
        }
        dispatch(exchange, (worker, connection) -> {
            try (PreparedStatement statement = connection.prepareStatement(SLEEP)) {
                statement.setDouble(1, millis / 1000.0);
                statement.execute();
            }
            Endpoints.text(worker, "SLEPT");
        });
    }

    /** One query on a borrowed connection, which writes the answer itself. */
    private interface Query {
        void run(HttpServerExchange exchange, Connection connection) throws SQLException;
    }

    /** To the worker pool; there: borrow, query, answer, give the connection back. */
    private void dispatch(HttpServerExchange exchange, Query query) {
        if (dataSource == null) {
            Endpoints.error(exchange, StatusCodes.BAD_GATEWAY, "no database: DB_URL is not set");
            return;
        }
        exchange.dispatch(worker -> {
            try (Connection connection = acquire()) {
                query.run(worker, connection);
            } catch (SQLException e) {
                if (!worker.isResponseStarted()) { // not when only giving the connection back failed
                    Endpoints.error(worker, StatusCodes.BAD_GATEWAY, "database failed: " + message(e));
                }
            }
        });
    }

    private static void queryRow(HttpServerExchange exchange, Connection connection, int id) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(ROW)) {
            statement.setInt(1, id);
            try (ResultSet rs = statement.executeQuery()) {
                if (!rs.next()) {
                    Endpoints.error(exchange, StatusCodes.NOT_FOUND, "no row " + id);
                    return;
                }
                Data data = new Data(rs.getInt(1), rs.getString(2), rs.getBoolean(3), props(rs.getArray(4)));
                Endpoints.json(exchange, StatusCodes.OK, encode(data));
            }
        }
    }

    /**
     * A pooled connection within 30 s. HikariCP waits its whole timeout even while the database
     * refuses every new connection (its maintainer's choice: the database may come back), and the
     * contract wants 502 within 10 s when the database is down. So the wait is taken in slices of
     * 1 s: a slice that times out with a cause attached (HikariCP's last attempt to connect
     * failed) ends it with that failure; one without (every connection merely busy) waits on.
     * While the database refuses, a request does not wait at all.
     */
    private Connection acquire() throws SQLException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ACQUIRE_TIMEOUT_MS);
        while (true) {
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (left <= 0) {
                throw new SQLTransientConnectionException("no pooled connection within " + ACQUIRE_TIMEOUT_MS + " ms");
            }
            try {
                Connection connection = pool.getConnection(refusing ? 0 : Math.min(left, SLICE_MS));
                refusing = false;
                return connection;
            } catch (SQLTransientConnectionException timedOut) {
                if (timedOut.getCause() != null) {
                    refusing = true;
                    throw timedOut;
                }
                refusing = false;
            }
        }
    }

    private static String message(SQLException e) {
        Throwable cause = e.getCause();
        return cause == null || cause.getMessage() == null ? e.getMessage() : e.getMessage() + ": " + cause.getMessage();
    }

    private static List<String> props(Array array) throws SQLException {
        if (array == null) {
            return null;
        }
        try {
            return Arrays.asList((String[]) array.getArray());
        } finally {
            array.free();
        }
    }

    private static byte[] encode(Data data) {
        try {
            return Endpoints.MAPPER.writeValueAsBytes(data);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e); // a record of strings and numbers always serializes
        }
    }

    /** SIGTERM, after Undertow stopped: close the pool, bounded so the process still exits at once. */
    void close() {
        if (dataSource == null) {
            return;
        }
        Thread closer = new Thread(dataSource::close, "db-close");
        closer.setDaemon(true);
        closer.start();
        try {
            closer.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** DB_URL as the JDBC driver takes it: URL, user and password apart. */
    record Jdbc(String url, String user, String password) {
        static Jdbc of(String libpq) {
            URI uri;
            try {
                uri = new URI(libpq);
            } catch (URISyntaxException e) {
                throw new IllegalArgumentException("DB_URL is not a URI: " + e.getMessage());
            }
            if (!"postgres".equals(uri.getScheme()) && !"postgresql".equals(uri.getScheme()) || uri.getHost() == null) {
                throw new IllegalArgumentException("DB_URL must be postgres://user:password@host:port/database");
            }
            String user = null;
            String password = null;
            String info = uri.getRawUserInfo();
            if (info != null) {
                int colon = info.indexOf(':');
                user = decode(colon < 0 ? info : info.substring(0, colon));
                password = colon < 0 ? null : decode(info.substring(colon + 1));
            }
            String database = uri.getRawPath() == null || uri.getRawPath().length() <= 1 ? "" : uri.getRawPath().substring(1);
            String url = "jdbc:postgresql://" + uri.getHost() + ":" + (uri.getPort() == -1 ? 5432 : uri.getPort())
                    + "/" + database + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
            return new Jdbc(url, user, password);
        }

        private static String decode(String s) {
            return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8); // '+' is literal in a URI
        }
    }
}
