package arena.contender;

import com.zaxxer.hikari.HikariDataSource;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.jdbc.DataSourceBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * /db's DataSource, the same in all five Spring MVC contenders: Boot's HikariCP pool over
 * pgjdbc, built from DB_URL and DB_POOL (the lab gives a libpq URI, not spring.datasource.url,
 * so this is Boot's "configure a custom DataSource" way rather than its properties). Being a
 * DataSource bean, it makes Boot's own DataSource auto-configuration back off; Boot's JdbcClient
 * and JdbcTemplate are built on it as usual.
 *
 * <p>Nothing connects at start: Hikari's pool starts with the first request that asks for a
 * connection, and initializationFailTimeout -1 lets it start even when the database is down
 * then. Readiness never asks the database: Boot's DataSource health indicator is off
 * (management.health.db.enabled=false) and so is SQL initialisation (spring.sql.init.mode=never),
 * in each contender's application.properties.
 */
@Configuration(proxyBeanMethods = false)
class DbConfig {

    /**
     * maximumPoolSize = DB_POOL (Hikari's 10 when unset; below 1 stops the start); minimumIdle is
     * Hikari's default (the maximum: a fixed-size pool, as Hikari advises; the lab warms it before
     * measuring); connectionTimeout is one {@link DbPool#ATTEMPT}, and {@link DbPool} makes up the
     * contract's 30 s of them. Everything else is Hikari's and pgjdbc's default (maxLifetime 30
     * min, validation by Connection.isValid, autocommit; pgjdbc prepares a statement on the
     * server from its fifth run on a connection).
     */
    @Bean
    DbPool dataSource(@Value("${DB_URL:}") String url, @Value("${DB_POOL:10}") int maximumPoolSize) {
        if (maximumPoolSize < 1) {
            throw new IllegalArgumentException("DB_POOL must be at least 1, got " + maximumPoolSize);
        }
        if (url.isBlank()) {
            return new DbPool(null, maximumPoolSize);
        }
        DbUrl db = DbUrl.parse(url);
        HikariDataSource hikari = DataSourceBuilder.create()
                .type(HikariDataSource.class)
                .driverClassName("org.postgresql.Driver")
                .url(db.jdbcUrl())
                .username(db.user())
                .password(db.password())
                .build();
        hikari.setPoolName("db");
        hikari.setMaximumPoolSize(maximumPoolSize);
        hikari.setConnectionTimeout(DbPool.ATTEMPT.toMillis());
        hikari.setInitializationFailTimeout(-1);
        return new DbPool(hikari, maximumPoolSize);
    }
}
