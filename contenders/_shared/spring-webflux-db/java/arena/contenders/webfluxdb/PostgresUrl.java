package arena.contenders.webfluxdb;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;

import io.r2dbc.postgresql.PostgresqlConnectionConfiguration;

/**
 * {@code DB_URL}, a libpq URI ({@code postgres://user:password@host:port/database}), as
 * r2dbc-postgresql's connection options: host, port, user, password and database. R2DBC's own
 * URL form is {@code r2dbc:postgresql://…}; the lab gives the libpq one, so it is taken apart
 * here rather than rewritten as a string.
 */
final class PostgresUrl {

    private PostgresUrl() {
    }

    /** A builder holding the URL's parts; the caller adds the rest (timeouts, loops). */
    static PostgresqlConnectionConfiguration.Builder parse(String url) {
        URI uri;
        try {
            uri = new URI(url.trim());
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("DB_URL is not a URI: " + e.getMessage(), e);
        }
        String scheme = uri.getScheme();
        if (!"postgres".equalsIgnoreCase(scheme) && !"postgresql".equalsIgnoreCase(scheme)) {
            throw new IllegalArgumentException("DB_URL must be postgres://user:password@host:port/database, got scheme "
                    + scheme);
        }
        PostgresqlConnectionConfiguration.Builder builder = PostgresqlConnectionConfiguration.builder()
                .host(uri.getHost() == null ? "localhost" : uri.getHost())
                .port(uri.getPort() < 0 ? 5432 : uri.getPort());
        String userInfo = uri.getRawUserInfo();
        if (userInfo != null) {
            int colon = userInfo.indexOf(':');
            builder.username(decode(colon < 0 ? userInfo : userInfo.substring(0, colon)));
            if (colon >= 0) {
                builder.password(decode(userInfo.substring(colon + 1)));
            }
        }
        String path = uri.getRawPath();
        if (path != null && path.length() > 1) {
            builder.database(decode(path.substring(1)));
        }
        return builder;
    }

    /** Percent-decoding as URIs use it ('+' stays a plus, unlike in a form). */
    private static String decode(String raw) {
        return URLDecoder.decode(raw.replace("+", "%2B"), StandardCharsets.UTF_8);
    }
}
