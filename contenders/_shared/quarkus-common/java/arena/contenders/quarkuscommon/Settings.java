package arena.contenders.quarkuscommon;

import java.util.Optional;

import jakarta.annotation.PostConstruct;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.inject.ConfigProperty;

import io.quarkus.runtime.Startup;

/**
 * The contract's variables that no Quarkus property holds, checked once at start: a bad value
 * stops the start (exit 1) rather than running with a guess. BACKPRESSURE ({@code on}, the
 * default, or {@code off}) and DB_POOL (1..256) reach this through Quarkus' environment
 * variable names ({@code backpressure}, {@code db.pool}); PORT, BIND_ADDRESS, DOWNSTREAM_URL
 * and DB_POOL's use as the pool size are expressions in application.properties.
 */
@Singleton
@Startup
public class Settings {

    @ConfigProperty(name = "backpressure", defaultValue = "on")
    String backpressure;

    @ConfigProperty(name = "db.pool")
    Optional<String> dbPool;

    private boolean bounded;

    @PostConstruct
    void check() {
        bounded = switch (backpressure.trim().toLowerCase()) {
            case "on" -> true;
            case "off" -> false;
            default -> throw new IllegalArgumentException("BACKPRESSURE must be on or off, got '" + backpressure + "'");
        };
        dbPool.ifPresent(raw -> {
            int size;
            try {
                size = Integer.parseInt(raw.trim());
            } catch (NumberFormatException e) {
                size = 0;
            }
            if (size < 1 || size > 256) {
                throw new IllegalArgumentException("DB_POOL must be an integer in 1..256, got '" + raw + "'");
            }
        });
    }

    /** BACKPRESSURE=on: /stream's queue is bounded and its sends in flight counted. */
    public boolean backpressure() {
        return bounded;
    }
}
