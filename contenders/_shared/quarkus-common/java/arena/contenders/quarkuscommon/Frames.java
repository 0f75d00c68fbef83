package arena.contenders.quarkuscommon;

import java.time.Instant;

/**
 * One /stream connection's messages, each built in full when it is generated:
 * {@code {"seq":<n>,"ts":<µs since the epoch>,"pad":"<letters>"}}, exactly {@code size} bytes
 * (all ASCII), or the bare message with an empty pad when that is already longer. Not
 * thread-safe: one generator uses it.
 */
public final class Frames {

    private static final String LETTERS;

    static {
        StringBuilder b = new StringBuilder(StreamParams.MAX_SIZE);
        for (int i = 0; i < StreamParams.MAX_SIZE; i++) {
            b.append((char) ('a' + i % 26));
        }
        LETTERS = b.toString();
    }

    private final int size;
    private long seq;

    public Frames(int size) {
        this.size = size;
    }

    /** The next message, with the next seq and the time now. */
    public String next() {
        String head = "{\"seq\":" + seq++ + ",\"ts\":" + nowMicros() + ",\"pad\":\"";
        int pad = Math.max(0, size - head.length() - 2);
        return head + LETTERS.substring(0, pad) + "\"}";
    }

    public static long nowMicros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }
}
