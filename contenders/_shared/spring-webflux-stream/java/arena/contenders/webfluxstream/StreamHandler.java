package arena.contenders.webfluxstream;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import org.springframework.http.HttpStatus;
import org.springframework.util.MultiValueMap;
import org.springframework.web.reactive.socket.WebSocketMessage;
import org.springframework.web.reactive.socket.WebSocketSession;
import org.springframework.web.reactive.socket.server.WebSocketService;
import org.springframework.web.reactive.socket.server.support.HandshakeWebSocketService;
import org.springframework.web.reactive.socket.server.upgrade.ReactorNettyRequestUpgradeStrategy;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebHandler;

import reactor.core.publisher.BufferOverflowStrategy;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * {@code GET /stream?rate=R&size=B} (study 003). A plain {@link WebHandler} rather than a
 * {@code WebSocketHandler}: it checks the query first and answers 400 without upgrading, and
 * only a valid request goes on to the {@link WebSocketService}'s handshake, with a
 * {@code WebSocketHandler} that already knows its rate and size.
 *
 * <p>Each connection is one {@link Flux}: a generator that ignores demand ({@code Flux.push},
 * fed from a worker of Reactor's parallel scheduler), then with back-pressure on a buffer of
 * {@link #QUEUE} messages that drops the oldest, which Reactor Netty's {@code send} drains on
 * demand: it requests {@code reactor.netty.send.maxPrefetchSize} (100 here) frames and asks for
 * more only as their writes complete, so at most 100 are in flight. With back-pressure off, the
 * buffer is unbounded.
 */
public final class StreamHandler implements WebHandler {

    static final int MAX_RATE = 1_000_000;
    static final int MIN_SIZE = 16;
    static final int MAX_SIZE = 64 * 1024;
    /** Generated messages a connection may have waiting; one more drops the oldest. */
    static final int QUEUE = 5_000;
    /** rate 0: messages per batch, each batch a task of its own. */
    static final int BATCH = 100;
    /** rate > 0: the generator's tick. */
    static final long TICK_MS = 10;

    private final WebSocketService handshake =
            new HandshakeWebSocketService(new ReactorNettyRequestUpgradeStrategy());
    private final StreamStats stats;
    private final boolean backpressure;

    StreamHandler(StreamStats stats, boolean backpressure) {
        this.stats = stats;
        this.backpressure = backpressure;
    }

    @Override
    public Mono<Void> handle(ServerWebExchange exchange) {
        MultiValueMap<String, String> query = exchange.getRequest().getQueryParams();
        int rate;
        int size;
        try {
            rate = param(query, "rate", 0, 0, MAX_RATE);
            size = param(query, "size", 250, MIN_SIZE, MAX_SIZE);
        }
        catch (ResponseStatusException e) {
            return Mono.error(e); // the JsonErrorHandler's 400, no upgrade
        }
        // A GET without the upgrade headers is refused here by the handshake (400, or 405).
        return handshake.handleRequest(exchange, session -> stream(session, rate, size));
    }

    /** One connection: its messages out, and whatever the client sends read and ignored. */
    private Mono<Void> stream(WebSocketSession session, int rate, int size) {
        Flux<byte[]> generated = generate(rate, size);
        Flux<byte[]> outbound = backpressure
                ? generated
                        .onBackpressureBuffer(QUEUE, dropped -> stats.dropped(), BufferOverflowStrategy.DROP_OLDEST)
                        .doOnNext(taken -> stats.sent())
                : generated // counted as sent when generated (emit): every message is handed over
                        .onBackpressureBuffer(); // unbounded: what the client does not read piles up
        Mono<Void> output = session.send(outbound
                .map(bytes -> new WebSocketMessage(WebSocketMessage.Type.TEXT, session.bufferFactory().wrap(bytes))));
        Mono<Void> input = session.receive().then();
        // Ends when the connection does (close frame, reset): send() cancels the generator, and
        // the buffer's messages are discarded.
        return Mono.zip(input, output).then();
    }

    /**
     * The connection's messages, made on one worker of Reactor's parallel scheduler whatever the
     * demand ({@code Flux.push} with {@code IGNORE}: the next operator's buffer deals with it).
     * rate > 0: a periodic task every {@link #TICK_MS} ms makes what the clock says is due.
     * rate 0: a task makes {@link #BATCH} messages and schedules the next one, so other
     * connections' batches run in between. The connection counts as a client from the start of
     * its generator until the generator has stopped: cancelling queues a last task on the
     * worker, after any batch still running, that disposes it.
     */
    private Flux<byte[]> generate(int rate, int size) {
        return Flux.push(sink -> {
            Frames frames = new Frames(size);
            Scheduler.Worker worker = Schedulers.parallel().createWorker();
            stats.opened();
            sink.onDispose(() -> {
                try {
                    worker.schedule(() -> stop(worker));
                }
                catch (RejectedExecutionException shuttingDown) {
                    stop(worker);
                }
            });
            if (rate > 0) {
                long start = System.nanoTime();
                worker.schedulePeriodically(() -> {
                    long due = (System.nanoTime() - start) / 1_000 * rate / 1_000_000;
                    while (frames.count() < due && !sink.isCancelled()) {
                        emit(sink, frames);
                    }
                }, TICK_MS, TICK_MS, TimeUnit.MILLISECONDS);
            }
            else {
                worker.schedule(new Runnable() {
                    @Override
                    public void run() {
                        for (int i = 0; i < BATCH && !sink.isCancelled(); i++) {
                            emit(sink, frames);
                        }
                        if (!sink.isCancelled()) {
                            worker.schedule(this);
                        }
                    }
                });
            }
        }, FluxSink.OverflowStrategy.IGNORE);
    }

    private void stop(Scheduler.Worker worker) {
        worker.dispose();
        stats.closed();
    }

    /** Makes one message, counted as generated before anything downstream can count it. */
    private void emit(FluxSink<byte[]> sink, Frames frames) {
        byte[] message = frames.next();
        stats.generated();
        if (!backpressure) {
            // Without back-pressure every generated message is handed to the connection, so it
            // is sent as it is made: counted later, one generated as the client closed would be
            // neither sent nor dropped (verify checks generated = sent + dropped).
            stats.sent();
        }
        sink.next(message);
    }

    /** An integer in min..max, the default when absent; anything else is a 400. */
    private static int param(MultiValueMap<String, String> query, String name, int dflt, int min, int max) {
        if (!query.containsKey(name)) {
            return dflt;
        }
        String raw = query.getFirst(name); // null for a bare ?name
        try {
            int value = Integer.parseInt(raw);
            if (value >= min && value <= max) {
                return value;
            }
        }
        catch (NumberFormatException ignored) {
            // falls through to the 400
        }
        throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
                name + " must be an integer in " + min + ".." + max + ", got '" + raw + "'");
    }
}
