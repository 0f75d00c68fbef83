package arena.contenders.vertxbus;

/**
 * The EventBus addresses between {@link HttpVerticle} and {@link ServiceVerticle}. Requests are
 * {@code JsonObject}s, replies are the response body (a {@code String} for the text answers, a
 * {@code Buffer} holding the encoded JSON for /data), both with Vert.x's built-in codecs. A
 * failed request is a {@code ReplyException} whose failure code is the HTTP status.
 */
final class Addresses {

    /** No body; replies "INSTANT". */
    static final String INSTANT = "arena.instant";
    /** {@code {"ms": N}}; replies "DELAYED" after N ms. */
    static final String DELAYED = "arena.delayed";
    /** {@code {"ms": N}}; replies "SLEPT" after N ms. */
    static final String SLEEP = "arena.sleep";
    /** {@code {"id": N}}; replies the downstream's data{N}.json, decoded into Data and encoded again. */
    static final String DATA = "arena.data";
    /** {@code {"id": N}}; replies row N of the database's table data, decoded into Data and encoded (/db/{id}). */
    static final String DB = "arena.db";
    /** {@code {"ms": N}}; replies "SLEPT" once {@code pg_sleep(N / 1000.0)} has held a pooled connection N ms. */
    static final String DB_SLOW = "arena.db.slow";
    /**
     * {@code {"address","rate","size"}}: starts a /stream generator that sends its messages
     * (Strings) to that address, the last of each batch as a request; replies nothing.
     */
    static final String STREAM_OPEN = "arena.stream.open";
    /** No body; replies the /stream/stats counters as a JsonObject. */
    static final String STREAM_STATS = "arena.stream.stats";

    private Addresses() {
    }
}
