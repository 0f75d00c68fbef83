import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordingFile;

/**
 * Folds a JFR recording's execution samples (Java threads caught running Java code) into
 * collapsed stacks, root first, keeping those stamped inside [from, to] (epoch ms). Prints
 * "stack count" lines, then "# outside N" and "# truncated N" for the samples left out and
 * the stacks JFR cut. arena runs it with the contender's own JDK, by its jdk.jfr.consumer API.
 *
 * Usage: java Fold.java recording.jfr fromEpochMs toEpochMs
 */
public class Fold {
    public static void main(String[] args) throws IOException {
        Path file = Path.of(args[0]);
        Instant from = Instant.ofEpochMilli(Long.parseLong(args[1]));
        Instant to = Instant.ofEpochMilli(Long.parseLong(args[2]));
        Map<String, Long> stacks = new HashMap<>();
        long outside = 0, truncated = 0;
        try (RecordingFile recording = new RecordingFile(file)) {
            while (recording.hasMoreEvents()) {
                RecordedEvent e = recording.readEvent();
                if (!e.getEventType().getName().equals("jdk.ExecutionSample") || e.getStackTrace() == null) {
                    continue;
                }
                Instant t = e.getStartTime();
                if (t.isBefore(from) || t.isAfter(to)) {
                    outside++;
                    continue;
                }
                if (e.getStackTrace().isTruncated()) {
                    truncated++;
                }
                stacks.merge(fold(e.getStackTrace().getFrames()), 1L, Long::sum);
            }
        }
        StringBuilder out = new StringBuilder();
        stacks.forEach((stack, n) -> out.append(stack).append(' ').append(n).append('\n'));
        out.append("# outside ").append(outside).append('\n');
        out.append("# truncated ").append(truncated).append('\n');
        System.out.print(out);
    }

    /** The frames root first (JFR lists the top frame first), as Class.method. */
    private static String fold(List<RecordedFrame> frames) {
        StringBuilder b = new StringBuilder();
        for (int i = frames.size() - 1; i >= 0; i--) {
            RecordedMethod m = frames.get(i).getMethod();
            String name = m == null ? "?" : m.getType().getName() + "." + m.getName();
            if (b.length() > 0) {
                b.append(';');
            }
            b.append(name.replace(';', ':').replace(' ', '_'));
        }
        return b.toString();
    }
}
