package arena.contenders.vertxstream;

import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * One /stream connection's messages, each built in full when it is generated, as the text of
 * one frame: {@code {"seq":<n>,"ts":<µs since the epoch>,"pad":"<letters>"}}, exactly
 * {@code size} bytes (or the bare frame, with an empty pad, when that is longer). Used on its
 * generator's event loop only. Shared by the vertx and vertx-eventbus contenders.
 */
public final class Frames {

    /** The largest {@code size} a stream may ask for (64 KiB): the longest pad. */
    public static final int MAX_SIZE = 64 * 1024;

    private static final byte[] SEQ = "{\"seq\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] TS = ",\"ts\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] PAD = ",\"pad\":\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] END = "\"}".getBytes(StandardCharsets.US_ASCII);
    private static final int FIXED = SEQ.length + TS.length + PAD.length + END.length;

    /** ASCII letters to copy pads from, as long as the longest pad. */
    private static final byte[] LETTERS = new byte[MAX_SIZE];

    static {
        for (int i = 0; i < LETTERS.length; i++) {
            LETTERS[i] = (byte) ('a' + i % 26);
        }
    }

    private final int size;
    private long seq;

    public Frames(int size) {
        this.size = size;
    }

    /** Microseconds since the epoch: the messages' {@code ts}. */
    public static long nowMicros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    /** How many messages this connection has generated. */
    public long count() {
        return seq;
    }

    /** The next message, stamped now: a Latin-1 string, one byte per character. */
    public String next() {
        long ts = nowMicros();
        long n = seq++;
        int seqDigits = digits(n);
        int tsDigits = digits(ts);
        int bare = FIXED + seqDigits + tsDigits;
        int pad = Math.max(0, size - bare);
        byte[] frame = new byte[bare + pad];
        int at = put(frame, 0, SEQ);
        at = putDigits(frame, at, n, seqDigits);
        at = put(frame, at, TS);
        at = putDigits(frame, at, ts, tsDigits);
        at = put(frame, at, PAD);
        System.arraycopy(LETTERS, 0, frame, at, pad);
        put(frame, at + pad, END);
        return new String(frame, StandardCharsets.ISO_8859_1);
    }

    private static int put(byte[] frame, int at, byte[] part) {
        System.arraycopy(part, 0, frame, at, part.length);
        return at + part.length;
    }

    private static int putDigits(byte[] frame, int at, long value, int digits) {
        for (int i = at + digits - 1; i >= at; i--) {
            frame[i] = (byte) ('0' + value % 10);
            value /= 10;
        }
        return at + digits;
    }

    private static int digits(long value) {
        int digits = 1;
        while (value >= 10) {
            value /= 10;
            digits++;
        }
        return digits;
    }
}
