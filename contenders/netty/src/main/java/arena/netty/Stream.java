package arena.netty;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.util.concurrent.ScheduledFuture;

/**
 * Study 003's {@code /stream} for one client, entirely on its channel's event loop: the
 * generator, the queue and the writes never leave that thread, so nothing here is shared or
 * locked.
 *
 * <p>With back-pressure on, each message is built (a pooled buffer) and put into an
 * {@link ArrayDeque} of at most {@value #MAX_WAITING}; when it is full the oldest is released
 * and counted as dropped. Messages leave the queue only while the channel is writable (Netty's
 * write-buffer water mark, default 32/64 KiB of unsent bytes) and fewer than
 * {@value #MAX_IN_FLIGHT} writes are in flight, counted by their write promises: a write's
 * listener gives its slot back once Netty has written the frame to the socket, and
 * {@link #channelWritabilityChanged} resumes when the outbound buffer has drained below the low
 * water mark.
 *
 * <p>With back-pressure off every message is written and flushed at once whatever the
 * writability: the channel's {@code ChannelOutboundBuffer} grows without bound while the client
 * does not read.
 */
final class Stream extends SimpleChannelInboundHandler<WebSocketFrame> implements ChannelFutureListener {

    static final int MAX_IN_FLIGHT = 100;
    static final int MAX_WAITING = 5_000;
    /** At rate 0 the generator makes this many messages, then yields: a new task on the loop, after its IO. */
    static final int BATCH = 100;
    static final long TICK_MS = 10;

    private final StreamStats stats;
    private final boolean backpressure;
    private final int rate;
    private final int size;

    private final ArrayDeque<TextWebSocketFrame> queue = new ArrayDeque<>();
    private ChannelHandlerContext ctx;
    private int inFlight;
    private boolean drainPending;
    private boolean started;
    private boolean closed;
    private long seq;
    private long startNanos;
    private ScheduledFuture<?> tick;

    private final Runnable batch = this::batch;
    private final Runnable drain = () -> {
        drainPending = false;
        drain();
    };

    Stream(StreamStats stats, boolean backpressure, int rate, int size) {
        this.stats = stats;
        this.backpressure = backpressure;
        this.rate = rate;
        this.size = size;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof WebSocketServerProtocolHandler.HandshakeComplete && !started && !closed) {
            this.ctx = ctx;
            started = true;
            stats.clients.incrementAndGet();
            if (rate == 0) {
                yieldThen(batch);
            } else {
                startNanos = System.nanoTime();
                tick = ctx.executor().scheduleAtFixedRate(this::tick, TICK_MS, TICK_MS, TimeUnit.MILLISECONDS);
            }
        }
        super.userEventTriggered(ctx, evt);
    }

    /** rate 0: a batch of messages, then the generator yields by queueing itself on the loop again. */
    private void batch() {
        if (closed) {
            return;
        }
        generate(BATCH);
        yieldThen(batch);
    }

    /**
     * Queues the next batch as a task that runs after the loop's next IO pass. Not execute():
     * Netty 4.2's loop runs its queued tasks for up to a second (io.netty.eventLoop.
     * maxTaskProcessingQuantumMs) before it goes back to IO, including tasks queued while they
     * run, so a generator that re-queued itself with execute() would hold the loop, and every
     * socket on it, for that second. A task scheduled with no delay is taken from the scheduled
     * queue once per loop turn, so sends, completions and other channels get their turn between
     * two batches.
     */
    private void yieldThen(Runnable task) {
        ctx.executor().schedule(task, 0, TimeUnit.NANOSECONDS);
    }

    /** rate > 0: the messages due by now, so that a second holds rate messages. */
    private void tick() {
        if (closed) {
            return;
        }
        long elapsedMicros = (System.nanoTime() - startNanos) / 1_000;
        long due = elapsedMicros * rate / 1_000_000 - seq;
        if (due > 0) {
            generate((int) Math.min(due, Integer.MAX_VALUE));
        }
    }

    private void generate(int n) {
        if (!backpressure) {
            // Written at once, whatever the writability: the outbound buffer takes everything.
            for (int i = 0; i < n; i++) {
                ctx.write(message(), ctx.voidPromise());
            }
            ctx.flush();
            stats.generated.add(n);
            stats.sent.add(n);
            return;
        }
        int lost = 0;
        for (int i = 0; i < n; i++) {
            if (queue.size() == MAX_WAITING) {
                queue.pollFirst().release(); // the oldest waiting message makes room
                lost++;
            }
            queue.addLast(message());
        }
        stats.generated.add(n);
        if (lost > 0) {
            stats.dropped.add(lost);
        }
        drain();
    }

    private TextWebSocketFrame message() {
        return new TextWebSocketFrame(Frames.frame(ctx.alloc(), seq++, Frames.nowMicros(), size));
    }

    /** Hands waiting messages to the channel while it is writable and fewer than MAX_IN_FLIGHT are in flight. */
    private void drain() {
        int n = 0;
        while (!closed && inFlight < MAX_IN_FLIGHT && ctx.channel().isWritable()) {
            TextWebSocketFrame message = queue.pollFirst();
            if (message == null) {
                break;
            }
            inFlight++;
            n++;
            ctx.write(message).addListener(this);
        }
        if (n > 0) {
            ctx.flush();
            stats.sent.add(n);
        }
    }

    /** A write is done (on the socket, or failed): its slot comes back; one drain per loop turn. */
    @Override
    public void operationComplete(ChannelFuture future) {
        inFlight--;
        if (!drainPending && !closed && !queue.isEmpty()) {
            drainPending = true;
            ctx.executor().execute(drain);
        }
    }

    /** The outbound buffer fell below the low water mark: resume. */
    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        if (backpressure && started && ctx.channel().isWritable()) {
            drain();
        }
        super.channelWritabilityChanged(ctx);
    }

    /** The client's frames are ignored (Netty's protocol handler answers pings and close). */
    @Override
    protected void channelRead0(ChannelHandlerContext ctx, WebSocketFrame frame) {
    }

    /** Closed: stop the generator and free what waits (not counted as dropped, which is what a full queue pushed out). */
    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        stop();
        super.channelInactive(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        stop();
    }

    private void stop() {
        if (closed) {
            return;
        }
        closed = true;
        if (tick != null) {
            tick.cancel(false);
        }
        TextWebSocketFrame message;
        while ((message = queue.pollFirst()) != null) {
            message.release();
        }
        if (started) {
            stats.clients.decrementAndGet();
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof CorruptedWebSocketFrameException) {
            return; // Netty's decoder has sent the close frame; the protocol handler closes the channel
        }
        if (!(cause instanceof IOException)) { // a reset connection is ordinary; anything else is worth a line
            System.err.println("netty stream: closing " + ctx.channel() + " after " + cause);
        }
        ctx.close();
    }
}
