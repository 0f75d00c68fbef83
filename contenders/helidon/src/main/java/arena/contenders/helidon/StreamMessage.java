package arena.contenders.helidon;

import java.time.Instant;

/**
 * One /stream message (study 003), built when it is generated:
 * {@code {"seq":n,"ts":µs,"pad":"…"}}, members in that order, no spaces, padded with ASCII letters
 * to exactly the requested size (the pad is empty when the frame is longer without it).
 */
final class StreamMessage {

    private static final char[] PAD = new char[StreamParams.MAX_SIZE];

    static {
        for (int i = 0; i < PAD.length; i++) {
            PAD[i] = (char) ('a' + i % 26);
        }
    }

    private StreamMessage() {
    }

    /** Microseconds since the Unix epoch, now. */
    static long micros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    static String build(long seq, long ts, int size) {
        StringBuilder frame = new StringBuilder(size + 48)
                .append("{\"seq\":").append(seq)
                .append(",\"ts\":").append(ts)
                .append(",\"pad\":\"");
        int pad = size - frame.length() - 2;
        if (pad > 0) {
            frame.append(PAD, 0, pad);
        }
        return frame.append("\"}").toString();
    }
}
