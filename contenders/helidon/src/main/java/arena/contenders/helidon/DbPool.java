package arena.contenders.helidon;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;

/**
 * The database's connection pool for /db: one HikariCP pool of at most DB_POOL connections to
 * DB_URL, 30 s to wait for a connection, started without the database (initializationFailTimeout
 * -1: the pool connects in the background, and the server is ready whether or not it can).
 *
 * <p>HikariCP waits the whole connection timeout for a connection even when it cannot open one
 * (the database refuses or is gone), while the contract wants a 502 within 10 s then. So a
 * request waits for a connection in slices of {@link #SLICE_MS} of HikariCP's own wait: a slice
 * that runs out while HikariCP's last attempt to open a connection failed (the timeout's cause,
 * which HikariCP clears when an attempt succeeds) ends the wait at once; a slice that runs out
 * because every connection is taken and none failed is waited again, 30 s in all.
 */
final class DbPool implements AutoCloseable {

    /** The contract's pool acquire timeout. */
    static final long ACQUIRE_TIMEOUT_MS = 30_000;
    private static final long SLICE_MS = 2_000;

    private final HikariDataSource dataSource;
    private final HikariPool pool;

    private DbPool(Target target, int size) {
        HikariConfig config = new HikariConfig();
        config.setPoolName("helidon-db");
        config.setJdbcUrl(target.url());
        config.setUsername(target.user());
        config.setPassword(target.password());
        config.setMaximumPoolSize(size);
        config.setConnectionTimeout(ACQUIRE_TIMEOUT_MS);
        config.setInitializationFailTimeout(-1);
        this.dataSource = new HikariDataSource(config);
        // HikariDataSource(config) starts its pool at once; the pool is also its MXBean.
        this.pool = (HikariPool) dataSource.getHikariPoolMXBean();
    }

    /** The pool for $DB_URL with $DB_POOL connections at most, or null when DB_URL is unset. */
    static DbPool fromEnv() {
        String url = System.getenv("DB_URL");
        if (url == null || url.isBlank()) {
            return null;
        }
        String rawSize = System.getenv("DB_POOL");
        int size = rawSize == null || rawSize.isBlank() ? 10 : Integer.parseInt(rawSize.trim());
        if (size < 1 || size > 256) {
            throw new IllegalArgumentException("DB_POOL must be an integer in 1..256, got '" + rawSize + "'");
        }
        return new DbPool(Target.parse(url), size);
    }

    /**
     * A pooled connection (close() gives it back), waiting up to 30 s for one; fails early when
     * the pool cannot open connections to the database.
     */
    Connection connection() throws SQLException {
        long deadline = System.nanoTime() + ACQUIRE_TIMEOUT_MS * 1_000_000L;
        while (true) {
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            try {
                return pool.getConnection(Math.max(1, Math.min(left, SLICE_MS)));
            } catch (SQLTransientConnectionException e) {
                if (e.getCause() != null || left <= SLICE_MS) {
                    throw e;
                }
            }
        }
    }

    int maximumPoolSize() {
        return dataSource.getMaximumPoolSize();
    }

    String jdbcUrl() {
        return dataSource.getJdbcUrl();
    }

    @Override
    public void close() {
        dataSource.close();
    }

    /**
     * DB_URL, a libpq URI (postgres://user:password@host:port/database?params), as the JDBC URL
     * jdbc:postgresql://host:port/database?params with the user and password apart.
     */
    record Target(String url, String user, String password) {

        static Target parse(String dbUrl) {
            URI uri = URI.create(dbUrl.trim());
            String scheme = uri.getScheme();
            if (!"postgres".equals(scheme) && !"postgresql".equals(scheme)) {
                throw new IllegalArgumentException("DB_URL must be postgres://user:password@host:port/database");
            }
            String user = null;
            String password = null;
            String userInfo = uri.getRawUserInfo();
            if (userInfo != null) {
                int colon = userInfo.indexOf(':');
                user = decode(colon < 0 ? userInfo : userInfo.substring(0, colon));
                password = colon < 0 ? null : decode(userInfo.substring(colon + 1));
            }
            StringBuilder url = new StringBuilder("jdbc:postgresql://").append(uri.getHost());
            if (uri.getPort() > 0) {
                url.append(':').append(uri.getPort());
            }
            String path = uri.getRawPath();
            url.append(path == null || path.isEmpty() ? "/" : path);
            if (uri.getRawQuery() != null) {
                url.append('?').append(uri.getRawQuery());
            }
            return new Target(url.toString(), user, password);
        }

        /** Percent-decoding as in a URI ('+' stays a plus, unlike form decoding). */
        private static String decode(String raw) {
            return URLDecoder.decode(raw.replace("+", "%2B"), StandardCharsets.UTF_8);
        }
    }
}
