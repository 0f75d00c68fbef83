package arena.contenders.quarkuscommon;

/** The contract's error body, {@code {"error":"<what was wrong>"}}. */
public record ErrorBody(String error) {
}
