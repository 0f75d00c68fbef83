package arena.contenders.quarkuscommon;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;

import org.eclipse.microprofile.config.spi.ConfigSource;

/**
 * The lab's DB_URL, a libpq URI ({@code postgres://user:password@host:port/database}), taken
 * apart into what Quarkus' datasource configuration wants: a JDBC URL for Agroal, a Vert.x URL
 * for the reactive client, the user and the password (percent-escapes decoded). Registered
 * with the ServiceLoader (META-INF/services), as Quarkus documents for a custom config source.
 * It gives {@code arena.db.jdbc-url}, {@code arena.db.reactive-url}, {@code arena.db.user} and
 * {@code arena.db.password}; each contender's own configuration maps them onto its datasource,
 * with defaults for when DB_URL is unset (then {@link Database#requireUrl()} answers 502
 * before any pool is asked).
 */
public final class DbUrlConfigSource implements ConfigSource {

    private final Map<String, String> values = parse(System.getenv("DB_URL"));

    /** Whether the lab gave a DB_URL. */
    public static boolean given() {
        String url = System.getenv("DB_URL");
        return url != null && !url.isBlank();
    }

    static Map<String, String> parse(String url) {
        if (url == null || url.isBlank()) {
            return Map.of();
        }
        URI uri;
        try {
            uri = new URI(url.trim());
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("DB_URL is not a URI: " + e.getMessage());
        }
        if (!"postgres".equals(uri.getScheme()) && !"postgresql".equals(uri.getScheme()) || uri.getHost() == null) {
            throw new IllegalArgumentException("DB_URL must be postgres://user:password@host:port/database");
        }
        String where = uri.getHost() + ":" + (uri.getPort() == -1 ? 5432 : uri.getPort())
                + (uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath());
        String user = "";
        String password = "";
        if (uri.getRawUserInfo() != null) {
            String[] parts = uri.getRawUserInfo().split(":", 2);
            user = decode(parts[0]);
            password = parts.length > 1 ? decode(parts[1]) : "";
        }
        return Map.of(
                "arena.db.jdbc-url", "jdbc:postgresql://" + where,
                "arena.db.reactive-url", "postgresql://" + where,
                "arena.db.user", user,
                "arena.db.password", password);
    }

    /** Percent-escapes only: a '+' in a URI's user info is a plus, not a space. */
    private static String decode(String raw) {
        return URLDecoder.decode(raw.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    @Override
    public Set<String> getPropertyNames() {
        return values.keySet();
    }

    @Override
    public String getValue(String name) {
        return values.get(name);
    }

    @Override
    public String getName() {
        return "arena DB_URL";
    }
}
