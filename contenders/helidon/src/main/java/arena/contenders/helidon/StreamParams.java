package arena.contenders.helidon;

import io.helidon.common.uri.UriQuery;

/**
 * /stream's query (study 003): {@code rate} 0..1000000 messages per second (0: as fast as the
 * server can, the default) and {@code size} 16..65536 bytes per frame (250 by default). Checked
 * twice with the same code: by the WebSocket listener before the upgrade (a bad value rejects
 * the upgrade) and by the plain HTTP route that then answers the request with the 400.
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

    static StreamParams parse(UriQuery query) throws Invalid {
        int rate = integer(query, "rate", 0, 0, MAX_RATE);
        int size = integer(query, "size", 250, MIN_SIZE, MAX_SIZE);
        return new StreamParams(rate, size);
    }

    private static int integer(UriQuery query, String name, int dflt, int min, int max) throws Invalid {
        if (!query.contains(name)) {
            return dflt;
        }
        String raw = query.get(name);
        int value;
        try {
            value = Integer.parseInt(raw);
        } catch (NumberFormatException e) {
            value = min - 1;
        }
        if (value < min || value > max) {
            throw new Invalid(name + " must be an integer in " + min + ".." + max + ", got '" + raw + "'");
        }
        return value;
    }
}
