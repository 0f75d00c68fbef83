package arena.contenders.webfluxdb;

import java.time.Duration;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.util.StringUtils;

import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import reactor.netty.http.HttpResources;

/**
 * /db's R2DBC set-up, the same for both WebFlux contenders: r2dbc-postgresql's connection factory
 * behind r2dbc-pool's {@link ConnectionPool}, and Spring's {@link DatabaseClient} on it. The pool
 * and the client exist only when {@code DB_URL} is set; without it {@link Db} answers every /db
 * request with a 502 and nothing connects anywhere. Nothing connects at start either: the pool
 * starts empty and opens connections as requests ask for them (the lab warms it before measuring).
 *
 * <p>Boot's own R2DBC auto-configuration is excluded in each contender's application.properties:
 * it builds a pool from {@code spring.r2dbc.url}, which the lab does not give (DB_URL is a libpq
 * URI), and would stop the start when DB_URL is unset. Its health indicator is off too, so that
 * readiness never depends on the database.
 */
@Configuration(proxyBeanMethods = false)
public class DbConfiguration {

    /** How long a request waits for a pooled connection before it is a 502 (the contract's 30 s). */
    static final Duration MAX_ACQUIRE_TIME = Duration.ofSeconds(30);

    /** How long a new connection may take to connect, so a database that is gone fails well within 10 s. */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);

    /**
     * The pool: at most DB_POOL connections (10, r2dbc-pool's default, when unset; anything but
     * 1..256 stops the start), none opened before a request asks (initial size 0), and a request
     * that finds them all taken waits in the pool's queue, up to 30 s. A connection is checked on
     * the way out (r2dbc-pool's default local validation: is its socket still open), so one that
     * the database closed is dropped, and that request answered 502, rather than used.
     *
     * <p>acquireRetry is 0: r2dbc-pool's default of one retry would start a second 30-s wait
     * after the first timed out, so a request could wait 60 s. The connections live on Reactor Netty's global event loops
     * ({@link HttpResources}), the very loops the server and /data's WebClient use, one per CPU
     * (see WebfluxMain): a query is written and its rows decoded on a loop thread, as the server's
     * requests are, without a second set of loops (r2dbc-postgresql's default, TcpResources)
     * to hand over to and back.
     */
    @Bean(destroyMethod = "dispose")
    @Conditional(DbUrlSet.class)
    ConnectionPool dbConnectionPool(@Value("${DB_URL}") String url, @Value("${DB_POOL:10}") int maxSize) {
        if (maxSize < 1 || maxSize > 256) {
            throw new IllegalArgumentException("DB_POOL must be an integer in 1..256, got " + maxSize);
        }
        PostgresqlConnectionFactory connections = new PostgresqlConnectionFactory(PostgresUrl.parse(url)
                .connectTimeout(CONNECT_TIMEOUT)
                .loopResources(HttpResources.get())
                .build());
        return new ConnectionPool(ConnectionPoolConfiguration.builder(connections)
                .name("db")
                .initialSize(0)
                .maxSize(maxSize)
                .maxAcquireTime(MAX_ACQUIRE_TIME)
                .acquireRetry(0)
                .build());
    }

    /** Spring's reactive SQL client on the pool: it takes a connection per statement and gives it back. */
    @Bean
    @Conditional(DbUrlSet.class)
    DatabaseClient dbClient(ConnectionPool pool) {
        return DatabaseClient.create(pool);
    }

    /** The queries /db runs, for both contenders' endpoints; without DB_URL, a 502 each. */
    @Bean
    Db db(ObjectProvider<DatabaseClient> client) {
        return new Db(client.getIfAvailable());
    }

    /** DB_URL is set and not empty. */
    static final class DbUrlSet implements Condition {

        @Override
        public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
            return StringUtils.hasText(context.getEnvironment().getProperty("DB_URL"));
        }
    }
}
