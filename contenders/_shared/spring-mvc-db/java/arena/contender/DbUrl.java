package arena.contender;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;

/**
 * {@code DB_URL}, a libpq URI ({@code postgres://user:password@host:port/database}), as JDBC
 * wants it: pgjdbc's URL ({@code jdbc:postgresql://host:port/database}) beside the user and the
 * password, which pgjdbc does not take from the URL's user-info part. A query string (libpq's
 * {@code ?sslmode=…} and the like) is passed on to pgjdbc, which takes the same names for the
 * common ones.
 */
record DbUrl(String jdbcUrl, String user, String password) {

    static DbUrl parse(String url) {
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
        String user = null;
        String password = null;
        String userInfo = uri.getRawUserInfo();
        if (userInfo != null) {
            int colon = userInfo.indexOf(':');
            user = decode(colon < 0 ? userInfo : userInfo.substring(0, colon));
            password = colon < 0 ? null : decode(userInfo.substring(colon + 1));
        }
        StringBuilder jdbc = new StringBuilder("jdbc:postgresql://")
                .append(uri.getHost() == null ? "localhost" : uri.getHost()) // an IPv6 literal keeps its brackets
                .append(':').append(uri.getPort() < 0 ? 5432 : uri.getPort())
                .append('/');
        String path = uri.getRawPath();
        if (path != null && path.length() > 1) {
            jdbc.append(path.substring(1)); // still percent-escaped, as pgjdbc's URL wants it
        }
        if (uri.getRawQuery() != null) {
            jdbc.append('?').append(uri.getRawQuery());
        }
        return new DbUrl(jdbc.toString(), user, password);
    }

    /** Percent-decoding as URIs use it ('+' stays a plus, unlike in a form). */
    private static String decode(String raw) {
        return URLDecoder.decode(raw.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    /** Never the password: this may end up in a log. */
    @Override
    public String toString() {
        return jdbcUrl + " as " + user;
    }
}
