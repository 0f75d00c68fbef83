package arena.netty;

import java.nio.charset.StandardCharsets;
import java.time.Instant;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * Study 003's messages: {@code {"seq":n,"ts":µs,"pad":"…"}}, members in that order, no spaces,
 * padded with ASCII letters to exactly the requested size (or with an empty pad when the bare
 * frame is already longer). Each one is written whole into its own buffer from the channel's
 * allocator (Netty's pooled direct buffers) when it is generated: the client's queue and the
 * channel's outbound buffer hold these buffers.
 */
final class Frames {

    static final int MAX_RATE = 1_000_000;
    static final int MIN_SIZE = 16;
    static final int MAX_SIZE = 65_536;
    static final int DEFAULT_SIZE = 250;

    private static final byte[] SEQ = "{\"seq\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] TS = ",\"ts\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] PAD = ",\"pad\":\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] END = "\"}".getBytes(StandardCharsets.US_ASCII);
    private static final int BARE = SEQ.length + TS.length + PAD.length + END.length;
    private static final byte[] LETTERS = new byte[MAX_SIZE];

    static {
        String abc = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
        for (int i = 0; i < LETTERS.length; i++) {
            LETTERS[i] = (byte) abc.charAt(i % abc.length());
        }
    }

    /** Microseconds since the Unix epoch, from the system clock. */
    static long nowMicros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    /** One whole message of exactly {@code size} bytes (more only when even an empty pad does not fit). */
    static ByteBuf frame(ByteBufAllocator alloc, long seq, long ts, int size) {
        int seqDigits = digits(seq);
        int tsDigits = digits(ts);
        int bare = BARE + seqDigits + tsDigits;
        int pad = Math.max(0, size - bare);
        ByteBuf out = alloc.buffer(bare + pad, bare + pad);
        out.writeBytes(SEQ);
        putLong(out, seq, seqDigits);
        out.writeBytes(TS);
        putLong(out, ts, tsDigits);
        out.writeBytes(PAD);
        out.writeBytes(LETTERS, 0, pad);
        out.writeBytes(END);
        return out;
    }

    /**
     * A query parameter that must be an integer in min..max: its value, the default when it is
     * absent, or -1 when it is anything else (signs, spaces, out of range).
     */
    static int param(String value, int dflt, int min, int max) {
        if (value == null) {
            return dflt;
        }
        if (value.isEmpty() || value.length() > 9) {
            return -1;
        }
        int n = 0;
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            n = n * 10 + (c - '0');
        }
        return n >= min && n <= max ? n : -1;
    }

    private static void putLong(ByteBuf out, long value, int digits) {
        int at = out.writerIndex();
        for (int i = at + digits - 1; i >= at; i--) {
            out.setByte(i, (int) ('0' + value % 10));
            value /= 10;
        }
        out.writerIndex(at + digits);
    }

    private static int digits(long value) { // value >= 0
        int n = 1;
        while (value >= 10) {
            value /= 10;
            n++;
        }
        return n;
    }

    private Frames() {
    }
}
