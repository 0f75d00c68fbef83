package arena.contenders.quarkuscommon;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;

/**
 * {@code /stream?rate=R&size=B}: R an integer 0..1000000 (default 0), B an integer 16..65536
 * (default 250); anything else, an empty value too, is an {@link ApiError} 400. Read from the
 * raw query string, as both the upgrade filter and the endpoint's handshake request have it.
 */
public record StreamParams(int rate, int size) {

    public static final int MAX_RATE = 1_000_000;
    public static final int MIN_SIZE = 16;
    public static final int MAX_SIZE = 65_536;
    public static final int DEFAULT_SIZE = 250;

    public static StreamParams parse(String query) {
        String rate = null;
        String size = null;
        if (query != null && !query.isEmpty()) {
            for (String pair : query.split("&")) {
                int eq = pair.indexOf('=');
                String name = decode(eq < 0 ? pair : pair.substring(0, eq));
                String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
                // The first of a repeated parameter counts, as Quarkus REST binds it.
                if (name.equals("rate") && rate == null) {
                    rate = value;
                } else if (name.equals("size") && size == null) {
                    size = value;
                }
            }
        }
        return new StreamParams(bounded("rate", rate, 0, 0, MAX_RATE), bounded("size", size, DEFAULT_SIZE, MIN_SIZE, MAX_SIZE));
    }

    private static int bounded(String name, String raw, int dflt, int min, int max) {
        if (raw == null) {
            return dflt;
        }
        try {
            int v = Integer.parseInt(raw);
            if (v >= min && v <= max) {
                return v;
            }
        } catch (NumberFormatException ignored) {
            // falls through to the 400
        }
        throw new ApiError(400, name + " must be an integer in " + min + ".." + max + ", got '" + raw + "'");
    }

    private static String decode(String raw) {
        try {
            return URLDecoder.decode(raw, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return raw; // a broken escape: left as it is, and refused as a value
        }
    }
}
