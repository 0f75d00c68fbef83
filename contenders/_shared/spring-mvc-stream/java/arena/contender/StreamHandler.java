package arena.contender;

import jakarta.websocket.Session;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.thread.Threading;
import org.springframework.core.env.Environment;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;
import org.springframework.stereotype.Component;
import org.springframework.web.socket.CloseStatus;
import org.springframework.web.socket.adapter.NativeWebSocketSession;
import org.springframework.web.socket.WebSocketSession;
import org.springframework.web.socket.handler.AbstractWebSocketHandler;

/**
 * One handler for every /stream connection: it starts a ClientStream when the connection opens
 * and stops it when the connection closes. What the client sends is ignored
 * (AbstractWebSocketHandler's handlers do nothing, binary frames included).
 *
 * <p>The generators run as the contender's model runs work, decided as Spring Boot decides it
 * (spring.threads.virtual.enabled):
 * <ul>
 * <li>platform threads (spring-mvc, -async, -async-all, -jetty): a ThreadPoolTaskScheduler of
 * its own, one thread per CPU, runs every client's 10-ms ticks and rate-0 batches;
 * <li>virtual threads (spring-mvc-virtual): each client's generator is a virtual thread of its
 * own (a SimpleAsyncTaskExecutor with virtual threads starts one per client), which sleeps
 * between ticks, and between rate-0 batches (see ClientStream.YIELD_NANOS).
 * </ul>
 * Neither is a bean, so that neither displaces Boot's own TaskScheduler or task executor,
 * which the async contenders' endpoints use.
 *
 * <p>BACKPRESSURE (on, the default, or off) and stream.container-queues-sends (true where the
 * container's RemoteEndpoint.Async accepts more than one outstanding send: Jetty) set the
 * limits, see ClientStream.
 */
@Component
class StreamHandler extends AbstractWebSocketHandler implements DisposableBean {

    private static final String STREAM = "stream.client";

    private final StreamStats stats;
    private final boolean backPressure;
    private final boolean containerQueuesSends;
    private final ThreadPoolTaskScheduler pool; // platform threads, else null
    private final SimpleAsyncTaskExecutor virtualThreads; // virtual threads, else null

    StreamHandler(StreamStats stats, Environment environment,
            @Value("${BACKPRESSURE:on}") String backPressure,
            @Value("${stream.container-queues-sends:false}") boolean containerQueuesSends) {
        this.stats = stats;
        this.backPressure = switch (backPressure.trim()) {
            case "on", "" -> true;
            case "off" -> false;
            default -> throw new IllegalArgumentException("BACKPRESSURE must be on or off, got '" + backPressure + "'");
        };
        this.containerQueuesSends = containerQueuesSends;
        if (Threading.VIRTUAL.isActive(environment)) {
            this.pool = null;
            this.virtualThreads = new SimpleAsyncTaskExecutor("stream-");
            this.virtualThreads.setVirtualThreads(true);
        } else {
            this.virtualThreads = null;
            this.pool = new ThreadPoolTaskScheduler();
            this.pool.setPoolSize(Runtime.getRuntime().availableProcessors());
            this.pool.setThreadNamePrefix("stream-");
            this.pool.setRemoveOnCancelPolicy(true); // a closed client's tick leaves the queue at once
            this.pool.initialize();
        }
    }

    @Override
    public void afterConnectionEstablished(WebSocketSession session) {
        Session ws = ((NativeWebSocketSession) session).getNativeSession(Session.class);
        int rate = (Integer) session.getAttributes().get(StreamParams.RATE);
        int size = (Integer) session.getAttributes().get(StreamParams.SIZE);
        ClientStream client = new ClientStream(ws, stats, rate, size, backPressure, containerQueuesSends);
        session.getAttributes().put(STREAM, client);
        stats.clients.incrementAndGet();
        if (pool != null) {
            client.startOn(pool, pool);
        } else {
            client.startOnOwnThread(virtualThreads);
        }
    }

    @Override
    public void afterConnectionClosed(WebSocketSession session, CloseStatus status) {
        if (session.getAttributes().remove(STREAM) instanceof ClientStream client) {
            client.stop();
        }
    }

    @Override
    public void destroy() {
        if (pool != null) {
            pool.shutdown();
        } else {
            virtualThreads.close();
        }
    }
}
