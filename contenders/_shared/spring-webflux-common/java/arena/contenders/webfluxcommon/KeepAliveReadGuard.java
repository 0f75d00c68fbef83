package arena.contenders.webfluxcommon;

import org.springframework.boot.web.embedded.netty.NettyServerCustomizer;
import org.springframework.stereotype.Component;

import io.netty.channel.Channel;
import reactor.netty.Connection;
import reactor.netty.ConnectionObserver;
import reactor.netty.channel.ChannelOperations;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;

/**
 * Asks Reactor Netty's server for the next read of a keep-alive connection once each exchange
 * has ended, a workaround for the other half of reactor/reactor-netty#4361 that
 * {@link WebfluxMain#LAST_FLUSH_WHEN_NO_READ} does not close.
 *
 * <p>Reactor Netty 1.2.18 queues a request that arrives while the previous response is still
 * pending ("Buffering pipelined HTTP request"), for a keep-alive client too when it sends its
 * next request as soon as it has read the whole previous body, before the server has written
 * the response's end (seen with /resources/, whose body is streamed). If the queued request is
 * answered at once (a 404, say), its end schedules a second drain of the queue, the first drain
 * takes the request's trailing content, and the second finds the queue empty and returns
 * without asking for a read: the server never reads that connection again. The WebClient's
 * pooled connection to this very server (/data/{id} without DOWNSTREAM_URL) then waits out its
 * 2-s response timeout and /data answers 502.
 *
 * <p>The guard runs after Reactor Netty's own drain tasks (it is queued behind them on the
 * connection's event loop) and asks for a read only when no exchange holds the connection;
 * when one does, that exchange's end asks again. A read asked for while one is already pending
 * changes nothing, so on the usual path it costs one event-loop task per exchange.
 */
@Component
public class KeepAliveReadGuard implements NettyServerCustomizer {

    @Override
    public HttpServer apply(HttpServer server) {
        return server.childObserve(KeepAliveReadGuard::afterExchange);
    }

    /** On an exchange's end (its operations disconnecting), queue the check of its connection. */
    static void afterExchange(Connection connection, ConnectionObserver.State state) {
        if (state == ConnectionObserver.State.DISCONNECTING && connection instanceof HttpServerRequest) {
            Channel channel = connection.channel();
            channel.eventLoop().execute(() -> resumeIfIdle(channel));
        }
    }

    /**
     * A read for a connection that is open and between exchanges; not for one where the next
     * exchange (HTTP or a WebSocket, whose reads follow its own demand) is already running.
     */
    static void resumeIfIdle(Channel channel) {
        if (channel.isActive() && ChannelOperations.get(channel) == null) {
            channel.read();
        }
    }
}
