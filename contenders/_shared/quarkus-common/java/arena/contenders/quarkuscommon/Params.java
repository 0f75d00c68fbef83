package arena.contenders.quarkuscommon;

import io.vertx.core.http.HttpServerRequest;

/**
 * The contract's checks of what a request names: {@code ?ms=} (an integer in 0..60000) and
 * {@code {id}} (a 32-bit integer). Each takes the raw text (a String, so
 * that a bad value is this contract's 400 with its JSON body, not the framework's 404).
 */
public final class Params {

    public static final long MAX_MS = 60_000;

    private Params() {
    }

    /**
     * The raw {@code ms} of the query, as Vert.x parsed it: {@code ""} for {@code ?ms=}, null when
     * absent. Not {@code @QueryParam}: Quarkus REST binds an empty value as absent, which would
     * make {@code ?ms=} the default wait rather than the contract's 400 (verify caught it).
     */
    public static String ms(HttpServerRequest request) {
        return request.getParam("ms");
    }

    /** {@code ?ms=}: absent is {@code dflt}; anything but an integer in 0..60000 (empty too) is a 400. */
    public static long millis(String raw, long dflt) {
        if (raw == null) {
            return dflt;
        }
        try {
            long ms = Long.parseLong(raw);
            if (ms >= 0 && ms <= MAX_MS) {
                return ms;
            }
        } catch (NumberFormatException ignored) {
            // falls through to the 400
        }
        throw new ApiError(400, "ms must be an integer in 0.." + MAX_MS + ", got '" + raw + "'");
    }

    /** {@code ?ms=} where it is required (/db/slow): absent is a 400 too. */
    public static long requiredMillis(String raw) {
        if (raw == null) {
            throw new ApiError(400, "ms is required: an integer in 0.." + MAX_MS);
        }
        return millis(raw, 0);
    }

    /** {@code {id}} of /data/{id} and /db/{id}: anything but a 32-bit integer is a 400. */
    public static int id(String raw) {
        try {
            return Integer.parseInt(raw);
        } catch (NumberFormatException e) {
            throw new ApiError(400, "id must be an integer, got '" + raw + "'");
        }
    }
}
