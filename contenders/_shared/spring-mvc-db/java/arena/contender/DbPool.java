package arena.contender;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;

import com.zaxxer.hikari.HikariDataSource;
import org.springframework.jdbc.datasource.AbstractDataSource;
import org.springframework.lang.Nullable;

/**
 * The DataSource /db queries through: Boot's HikariCP pool (see {@link DbConfig}) with the
 * contract's wait for a connection, which Hikari alone cannot give.
 *
 * <p>The contract asks two things of the pool: a request that finds every connection taken
 * waits for one, up to 30 s; and when the database is down, /db answers 502 within 10 s. Hikari
 * has one timeout for both (connectionTimeout): while the database refuses connections, a
 * borrower waits the whole of it, by design (HikariCP issue 2254: "it is not the pool's
 * responsibility to determine if the database is never coming back"). So Hikari's
 * connectionTimeout is one attempt of {@link #ATTEMPT} (5 s), and {@link #getConnection()} tells
 * the two cases apart the way Hikari reports them: its timeout carries as its cause the last
 * failure to connect to the database or to validate a connection (none when every connection is
 * merely in use; Hikari clears it when a new connection succeeds). With a cause the database is
 * failing, and the request fails now (a 502); without one the pool is only busy, and the request
 * waits again, {@link #ACQUIRE} (30 s) in all (a waiter whose attempt ends joins Hikari's
 * queue again, behind those that came meanwhile).
 *
 * <p>Without DB_URL there is no pool, and every connection asked for is refused at once.
 */
final class DbPool extends AbstractDataSource implements AutoCloseable {

    /** The longest a request waits for a pooled connection (the contract's 30 s). */
    static final Duration ACQUIRE = Duration.ofSeconds(30);

    /** One wait in Hikari's queue (its connectionTimeout): within it, a database that is down shows. */
    static final Duration ATTEMPT = Duration.ofSeconds(5);

    private static final int ATTEMPTS = (int) (ACQUIRE.toMillis() / ATTEMPT.toMillis());

    @Nullable
    private final HikariDataSource hikari;

    private final int maximumPoolSize;

    DbPool(@Nullable HikariDataSource hikari, int maximumPoolSize) {
        this.hikari = hikari;
        this.maximumPoolSize = maximumPoolSize;
    }

    /** At most this many connections are open, and so at most this many queries run, at once. */
    int maximumPoolSize() {
        return maximumPoolSize;
    }

    @Override
    public Connection getConnection() throws SQLException {
        if (hikari == null) {
            throw new SQLNonTransientConnectionException("no database: DB_URL is not set", "08001");
        }
        for (int attempt = 1;; attempt++) {
            try {
                return hikari.getConnection();
            } catch (SQLTransientConnectionException timedOut) { // Hikari's only: no connection within ATTEMPT
                if (timedOut.getCause() != null) {
                    throw timedOut; // the database refused, or a connection of it died: it is failing
                }
                if (attempt == ATTEMPTS) {
                    throw new SQLTransientConnectionException("no pooled connection within " + ACQUIRE.toSeconds()
                            + " s: all " + maximumPoolSize + " are in use", "08001");
                }
            }
        }
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        throw new SQLNonTransientConnectionException("the pool connects as DB_URL's user only", "08004");
    }

    /** Hikari itself to those that look for it (Boot's pool metadata); this pool otherwise. */
    @Override
    @SuppressWarnings("unchecked")
    public <T> T unwrap(Class<T> type) throws SQLException {
        if (type.isInstance(this)) {
            return (T) this;
        }
        if (hikari != null) {
            return type.isInstance(hikari) ? (T) hikari : hikari.unwrap(type);
        }
        throw new SQLException("DbPool does not wrap a " + type.getName());
    }

    @Override
    public boolean isWrapperFor(Class<?> type) throws SQLException {
        return type.isInstance(this) || (hikari != null && (type.isInstance(hikari) || hikari.isWrapperFor(type)));
    }

    /** Closes Hikari's connections with the context (a request still holding one gets an error). */
    @Override
    public void close() {
        if (hikari != null) {
            hikari.close();
        }
    }
}
