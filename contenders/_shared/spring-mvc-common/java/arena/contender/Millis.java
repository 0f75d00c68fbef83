package arena.contender;

import org.springframework.http.HttpStatus;
import org.springframework.web.server.ResponseStatusException;

/** The {@code ?ms=N} of /delayed, /sleep and /db/slow, checked the same way by all five Spring MVC contenders. */
final class Millis {

    private Millis() {
    }

    /** Parsed by hand so that anything but an integer in 0..60000 (even "?ms=") is a 400. */
    static long parse(String ms, long dflt) {
        if (ms == null) {
            return dflt;
        }
        try {
            int value = Integer.parseInt(ms);
            if (value >= 0 && value <= 60_000) {
                return value;
            }
        } catch (NumberFormatException ignored) {
            // falls through to the 400
        }
        throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "ms must be an integer in 0..60000, got '" + ms + "'");
    }

    /** {@code ?ms=N} where it is required (/db/slow): absent is a 400 too. */
    static long required(String ms) {
        if (ms == null) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "ms is required: an integer in 0..60000");
        }
        return parse(ms, 0);
    }
}
