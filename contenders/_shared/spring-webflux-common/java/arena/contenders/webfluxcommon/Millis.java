package arena.contenders.webfluxcommon;

import org.springframework.http.HttpStatus;
import org.springframework.web.server.ResponseStatusException;

/**
 * The {@code ?ms=N} of /delayed, /sleep and /db/slow, checked the same way by both WebFlux
 * contenders.
 */
public final class Millis {

    public static final long MAX_MS = 60_000;

    private Millis() {
    }

    /**
     * The raw value (null when absent) as a number of ms, or a 400 for anything that is not an
     * integer in 0..60000 (an empty value included). Parsed by hand rather than bound to a
     * {@code long}: Spring's binding would turn an empty {@code ?ms=} into the default.
     */
    public static long parse(String raw, long dflt) {
        if (raw == null) {
            return dflt;
        }
        try {
            long ms = Long.parseLong(raw);
            if (ms >= 0 && ms <= MAX_MS) {
                return ms;
            }
        } catch (NumberFormatException ignored) {
            // falls through to the 400 below
        }
        throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
                "ms must be an integer in 0.." + MAX_MS + ", got '" + raw + "'");
    }

    /**
     * {@code ?ms=N} where it is required (/db/slow): a 400 when it is absent, otherwise as
     * {@link #parse(String, long)}.
     */
    public static long required(String raw) {
        if (raw == null) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
                    "ms is required: an integer in 0.." + MAX_MS);
        }
        return parse(raw, 0);
    }
}
