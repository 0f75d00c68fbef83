package arena.undertow;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Deque;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import io.undertow.Handlers;
import io.undertow.server.HttpHandler;
import io.undertow.server.HttpServerExchange;
import io.undertow.util.AttachmentKey;
import io.undertow.util.StatusCodes;
import io.undertow.websockets.WebSocketConnectionCallback;
import io.undertow.websockets.core.AbstractReceiveListener;
import io.undertow.websockets.core.BufferedBinaryMessage;
import io.undertow.websockets.core.BufferedTextMessage;
import io.undertow.websockets.core.WebSocketCallback;
import io.undertow.websockets.core.WebSocketChannel;
import io.undertow.websockets.core.WebSockets;
import io.undertow.websockets.spi.WebSocketHttpExchange;
import org.xnio.XnioExecutor;

/**
 * Study 003's {@code /stream}, done the way the study did it on Undertow: a sender actor per
 * client. The generator puts each message, built whole when it is made, into the client's
 * concurrent queue and asks for the actor to run; the actor runner schedules the actor on an
 * executor (Undertow's XNIO worker pool) only when there is something to send and it is not
 * scheduled already. The actor sends with the async {@link WebSockets#sendText} and a
 * {@link WebSocketCallback}: each send uses one unit of demand (at most {@value #MAX_IN_FLIGHT}
 * in flight), each completion gives it back and re-schedules the actor. Up to
 * {@value #MAX_WAITING} messages wait in the queue; past that the oldest is dropped.
 *
 * <p>With {@code BACKPRESSURE=off} there is no actor and no queue: every generated message goes
 * straight to {@link WebSockets#sendText}, and Undertow's own queue of frames for the
 * connection grows without bound while the client does not read.
 */
final class Stream implements WebSocketConnectionCallback {

    static final int MAX_IN_FLIGHT = 100;
    static final int MAX_WAITING = 5_000;
    /** At rate 0 the generator makes this many messages, then yields to the IO thread's select. */
    static final int BATCH = 100;
    static final long TICK_MS = 10;
    /** At rate 0 a batch is due again this soon: the next pass of the IO thread's loop, when it is busy. */
    static final long BATCH_MS = 1;

    private record Params(int rate, int size) {
    }

    private static final AttachmentKey<Params> PARAMS = AttachmentKey.create(Params.class);

    private final boolean backpressure;
    private final HttpHandler upgrade = Handlers.websocket(this);

    private final AtomicInteger clients = new AtomicInteger();
    private final LongAdder generated = new LongAdder();
    private final LongAdder sent = new LongAdder();
    private final LongAdder dropped = new LongAdder();

    Stream(boolean backpressure) {
        this.backpressure = backpressure;
    }

    /** GET /stream: rate and size are checked on the IO thread, before any upgrade. */
    HttpHandler handshake() {
        return exchange -> {
            String rawRate = query(exchange, "rate");
            String rawSize = query(exchange, "size");
            int rate = Frames.param(rawRate, 0, 0, Frames.MAX_RATE);
            int size = Frames.param(rawSize, Frames.DEFAULT_SIZE, Frames.MIN_SIZE, Frames.MAX_SIZE);
            if (rate < 0) {
                Endpoints.error(exchange, StatusCodes.BAD_REQUEST,
                        "rate must be an integer in 0.." + Frames.MAX_RATE + ", got '" + rawRate + "'");
            } else if (size < 0) {
                Endpoints.error(exchange, StatusCodes.BAD_REQUEST,
                        "size must be an integer in " + Frames.MIN_SIZE + ".." + Frames.MAX_SIZE + ", got '" + rawSize + "'");
            } else {
                exchange.putAttachment(PARAMS, new Params(rate, size));
                upgrade.handleRequest(exchange);
            }
        };
    }

    /** GET /stream/stats, on the IO thread. */
    void stats(HttpServerExchange exchange) {
        String body = "{\"clients\":" + clients.get() + ",\"generated\":" + generated.sum()
                + ",\"sent\":" + sent.sum() + ",\"dropped\":" + dropped.sum() + "}";
        Endpoints.json(exchange, StatusCodes.OK, body.getBytes(StandardCharsets.US_ASCII));
    }

    @Override
    public void onConnect(WebSocketHttpExchange exchange, WebSocketChannel channel) {
        Params params = exchange.getAttachment(PARAMS);
        Client client = new Client(channel, params.rate(), params.size());
        clients.incrementAndGet();
        channel.getReceiveSetter().set(client);
        channel.addCloseTask(closed -> client.close());
        channel.resumeReceives();
        client.start();
    }

    private static String query(HttpServerExchange exchange, String name) {
        Deque<String> values = exchange.getQueryParameters().get(name);
        return values == null ? null : values.peekFirst();
    }

    /**
     * One client: its generator, its sender actor and the receive listener that ignores what
     * the client sends (and answers its close).
     */
    private final class Client extends AbstractReceiveListener implements Runnable, WebSocketCallback<Void> {

        private final WebSocketChannel channel;
        private final Executor executor;
        private final int rate;
        private final int size;

        /** The actor's mailbox: messages made and not yet sent, oldest first. */
        private final ConcurrentLinkedDeque<byte[]> queue = new ConcurrentLinkedDeque<>();
        private final AtomicInteger waiting = new AtomicInteger();
        /** Sends handed to Undertow whose callback has not come yet; MAX_IN_FLIGHT minus it is the demand. */
        private final AtomicInteger inFlight = new AtomicInteger();
        private final AtomicBoolean scheduled = new AtomicBoolean();
        private final AtomicBoolean closed = new AtomicBoolean();

        /** Generator state: one generator step runs at a time (the IO thread's timer). */
        private long seq;
        private long startNanos;
        private volatile XnioExecutor.Key tick;

        Client(WebSocketChannel channel, int rate, int size) {
            this.channel = channel;
            // The actor runs on Undertow's XNIO worker pool, the study's "regular executor service".
            this.executor = channel.getWorker();
            this.rate = rate;
            this.size = size;
        }

        void start() {
            // Both generators are timers on the connection's IO thread, so generating takes turns
            // with that thread's selects and writes. At rate 0 a batch of 100 is due every
            // millisecond: XNIO runs an expired timer once per pass of its loop, so a busy loop
            // makes one batch per pass (a task re-queued with execute() would run again before the
            // loop selects, and never let it write). A generator on the worker pool instead ran
            // beside the IO threads as one of 16 runnable threads on the server's core, and made
            // 60 messages for every one the IO threads could write (22,178 msg/s delivered).
            startNanos = System.nanoTime();
            tick = rate == 0
                    ? channel.getIoThread().executeAtInterval(this::batch, BATCH_MS, TimeUnit.MILLISECONDS)
                    : channel.getIoThread().executeAtInterval(this::tick, TICK_MS, TimeUnit.MILLISECONDS);
            if (closed.get()) {
                tick.remove();
            }
            if (!channel.isOpen()) { // closed before the close task was in place
                close();
            }
        }

        /** rate 0: a batch of messages; the timer brings the next after the loop's next select. */
        private void batch() {
            if (closed.get()) {
                return;
            }
            generate(BATCH);
        }

        /** rate > 0: the messages due by now, so that a second holds rate messages. */
        private void tick() {
            if (closed.get()) {
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
                // Straight to Undertow: the frame joins the connection's unbounded send queue.
                for (int i = 0; i < n; i++) {
                    WebSockets.sendText(ByteBuffer.wrap(Frames.frame(seq++, Frames.nowMicros(), size)), channel, null);
                }
                generated.add(n);
                sent.add(n);
                return;
            }
            int lost = 0;
            for (int i = 0; i < n; i++) {
                queue.offer(Frames.frame(seq++, Frames.nowMicros(), size));
                if (waiting.incrementAndGet() > MAX_WAITING && queue.pollFirst() != null) {
                    waiting.decrementAndGet(); // the oldest waiting message makes room
                    lost++;
                }
            }
            generated.add(n);
            dropped.add(lost);
            if (closed.get()) {
                discard(); // close() may have emptied the queue while this batch was filling it
            } else {
                schedule();
            }
        }

        /** The actor runner: the actor goes to the executor only when it is not scheduled already. */
        private void schedule() {
            if (!queue.isEmpty() && inFlight.get() < MAX_IN_FLIGHT && scheduled.compareAndSet(false, true)) {
                if (!submit(this)) {
                    scheduled.set(false);
                }
            }
        }

        /** The actor: sends while there is demand and something to send. */
        @Override
        public void run() {
            int n = 0;
            try {
                for (;;) {
                    while (!closed.get() && inFlight.get() < MAX_IN_FLIGHT) {
                        byte[] message = queue.pollFirst();
                        if (message == null) {
                            break;
                        }
                        waiting.decrementAndGet();
                        inFlight.incrementAndGet();
                        n++;
                        WebSockets.sendText(ByteBuffer.wrap(message), channel, this, null);
                    }
                    scheduled.set(false);
                    // A message or demand that came after the loop looked: run again unless another run took it.
                    if (closed.get() || queue.isEmpty() || inFlight.get() >= MAX_IN_FLIGHT
                            || !scheduled.compareAndSet(false, true)) {
                        break;
                    }
                }
            } finally {
                sent.add(n);
            }
        }

        /** The send is done (written to the socket): its demand comes back. */
        @Override
        public void complete(WebSocketChannel channel, Void context) {
            inFlight.decrementAndGet();
            schedule();
        }

        @Override
        public void onError(WebSocketChannel channel, Void context, Throwable throwable) {
            inFlight.decrementAndGet(); // the connection is failing; its close task stops the rest
        }

        /** The connection is closed: stop the generator and free what waits. */
        void close() {
            if (!closed.compareAndSet(false, true)) {
                return;
            }
            XnioExecutor.Key key = tick;
            if (key != null) {
                key.remove();
            }
            clients.decrementAndGet();
            discard();
        }

        /** Frees the waiting messages; not counted as dropped, which is what a full queue pushed out (the contract). */
        private void discard() {
            while (queue.pollFirst() != null) {
                waiting.decrementAndGet();
            }
        }

        private boolean submit(Runnable task) {
            try {
                executor.execute(task);
                return true;
            } catch (RejectedExecutionException e) { // the worker is shutting down
                return false;
            }
        }

        // The client's own messages are read (so that its close is seen and answered) and ignored.

        @Override
        protected void onFullTextMessage(WebSocketChannel channel, BufferedTextMessage message) {
        }

        @Override
        protected void onFullBinaryMessage(WebSocketChannel channel, BufferedBinaryMessage message) {
            message.getData().free();
        }

        @Override
        protected long getMaxTextBufferSize() {
            return Chat.MAX_MESSAGE;
        }

        @Override
        protected long getMaxBinaryBufferSize() {
            return Chat.MAX_MESSAGE;
        }
    }
}
