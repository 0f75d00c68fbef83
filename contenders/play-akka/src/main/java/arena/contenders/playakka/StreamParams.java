package arena.contenders.playakka;

import java.util.Optional;

import play.mvc.Http;

/**
 * /stream's query (study 003): {@code rate} 0..1000000 messages per second (0: as fast as the
 * server can, the default) and {@code size} 16..65536 bytes per frame (250 by default).
 */
record StreamParams(int rate, int size) {

    static final int MAX_RATE = 1_000_000;
    static final int MIN_SIZE = 16;
    static final int MAX_SIZE = 65_536;

    /** A bad rate or size, with the message of the 400's error body. */
    static final class Invalid extends Exception {
        Invalid(String message) {
            super(message, null, false, false);
        }
    }

    static StreamParams parse(Http.RequestHeader request) throws Invalid {
        int rate = integer(request.queryString("rate"), "rate", 0, 0, MAX_RATE);
        int size = integer(request.queryString("size"), "size", 250, MIN_SIZE, MAX_SIZE);
        return new StreamParams(rate, size);
    }

    private static int integer(Optional<String> raw, String name, int dflt, int min, int max) throws Invalid {
        if (raw.isEmpty()) {
            return dflt;
        }
        int value;
        try {
            value = Integer.parseInt(raw.get());
        } catch (NumberFormatException e) {
            value = min - 1;
        }
        if (value < min || value > max) {
            throw new Invalid(name + " must be an integer in " + min + ".." + max + ", got '" + raw.get() + "'");
        }
        return value;
    }
}
