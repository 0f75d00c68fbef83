package arena.netty;

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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;

/**
 * /db: blocking JDBC (the PostgreSQL driver) on a HikariCP pool of DB_POOL connections, run on
 * a dedicated executor of DB_POOL threads, never on an event loop. Netty has no database client:
 * its users hand blocking work to an executor and write the answer back on the channel, and
 * {@code ctx.writeAndFlush} from the executor's thread is queued onto the channel's own loop.
 * One thread per pooled connection (HikariCP's sizing advice): a request that finds every
 * connection busy waits in the executor's queue, its 30 s counted from the moment it was queued.
 */
final class Database {

    /** The longest a request waits for a pooled connection (HikariCP's connectionTimeout). */
    static final long ACQUIRE_TIMEOUT_MS = 30_000;
    /** How often a request waiting on the pool looks whether the database refuses connections. */
    private static final long SLICE_MS = 1_000;
    private static final String ROW = "SELECT id, value, active, props FROM data WHERE id = ?";
    private static final String SLEEP = "SELECT pg_sleep(?)";

    /** One query on a borrowed connection, turned into the whole answer. */
    interface Query {
        FullHttpResponse run(Connection connection) throws SQLException;
    }

    private final HikariDataSource dataSource; // null when DB_URL is unset
    private final HikariPool pool;
    private final ExecutorService executor;
    private final int size;
    /** Set when HikariCP's last attempt to open a connection failed; cleared by a borrow that works. */
    private volatile boolean refusing;

    private Database(HikariDataSource dataSource, int size) {
        this.dataSource = dataSource;
        this.size = size;
        // HikariDataSource is a thin facade over HikariPool; the pool's own getConnection(timeout)
        // lets a waiting request look up between slices (see acquire).
        this.pool = dataSource == null ? null : (HikariPool) dataSource.getHikariPoolMXBean();
        this.executor = dataSource == null ? null : Executors.newFixedThreadPool(size, new DbThreads());
    }

    /**
     * The database of DB_URL ({@code postgres://user:password@host:port/db}, libpq's URI) with a
     * pool of DB_POOL connections, or none when DB_URL is unset. The pool starts without the
     * database (initializationFailTimeout -1): it connects in the background, and /db answers 502
     * until it can.
     */
    static Database fromEnv(String url, String poolSize) {
        if (url == null) {
            return new Database(null, 0);
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
        return new Database(new HikariDataSource(config), size);
    }

    /** What start-up prints about it. */
    String describe() {
        return dataSource == null ? "no database (DB_URL unset)"
                : "database " + dataSource.getJdbcUrl() + " (HikariCP pool and executor of " + size + ")";
    }

    /** GET /db/{id}: the row as the record, encoded as /data/{id} encodes it. */
    void row(ChannelHandlerContext ctx, int id) {
        submit(ctx, connection -> {
            try (PreparedStatement statement = connection.prepareStatement(ROW)) {
                statement.setInt(1, id);
                try (ResultSet rs = statement.executeQuery()) {
                    if (!rs.next()) {
                        return Responses.error(HttpResponseStatus.NOT_FOUND, "no row " + id);
                    }
                    Data data = new Data(rs.getInt(1), rs.getString(2), rs.getBoolean(3), props(rs.getArray(4)));
                    return Responses.json(HttpResponseStatus.OK, encode(data));
                }
            }
        });
    }

    /** GET /db/slow?ms=N: one pooled connection held N ms by the database. */
    void slow(ChannelHandlerContext ctx, int millis) {
        submit(ctx, connection -> {
            try (PreparedStatement statement = connection.prepareStatement(SLEEP)) {
                statement.setDouble(1, millis / 1000.0);
                statement.execute();
            }
            return Responses.text("SLEPT");
        });
    }

    /**
     * Runs the query on the executor and writes its answer: ctx.writeAndFlush from another thread
     * becomes a task on the channel's event loop, which writes it in order with the rest.
     */
    private void submit(ChannelHandlerContext ctx, Query query) {
        if (dataSource == null) {
            ctx.writeAndFlush(Responses.error(HttpResponseStatus.BAD_GATEWAY, "no database: DB_URL is not set"));
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ACQUIRE_TIMEOUT_MS);
        try {
            executor.execute(() -> ctx.writeAndFlush(answer(query, deadline)));
        } catch (RejectedExecutionException e) { // shutting down
            ctx.writeAndFlush(Responses.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "shutting down"));
        }
    }

    /** On an executor thread: borrow, query, give the connection back. */
    private FullHttpResponse answer(Query query, long deadline) {
        try (Connection connection = acquire(deadline)) {
            return query.run(connection);
        } catch (SQLException e) {
            return Responses.error(HttpResponseStatus.BAD_GATEWAY, "database failed: " + message(e));
        } catch (RuntimeException e) {
            e.printStackTrace();
            return Responses.error(HttpResponseStatus.INTERNAL_SERVER_ERROR, "internal error: " + e);
        }
    }

    /**
     * A pooled connection before the deadline. HikariCP waits its whole timeout even while the
     * database refuses every new connection (its maintainer's choice: the database may come back),
     * and the contract wants 502 within 10 s when the database is down. So the wait is taken in
     * slices of 1 s: a slice that times out with a cause attached (HikariCP's last attempt to
     * connect failed) ends it with that failure; one without (every connection merely busy) waits
     * on. While the database refuses, a request does not wait at all.
     */
    private Connection acquire(long deadline) throws SQLException {
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
            return Responses.MAPPER.writeValueAsBytes(data);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e); // a record of strings and numbers always serializes
        }
    }

    /** SIGTERM: no new queries, then close the pool; bounded, so the process still exits at once. */
    void close() {
        if (dataSource == null) {
            return;
        }
        executor.shutdownNow();
        Thread closer = new Thread(dataSource::close, "db-close");
        closer.setDaemon(true);
        closer.start();
        try {
            closer.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static final class DbThreads implements ThreadFactory {
        private final AtomicInteger count = new AtomicInteger();

        @Override
        public Thread newThread(Runnable task) {
            Thread thread = new Thread(task, "db-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
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
