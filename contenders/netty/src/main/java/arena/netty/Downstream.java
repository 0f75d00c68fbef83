package arena.netty;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.pool.AbstractChannelPoolHandler;
import io.netty.channel.pool.AbstractChannelPoolMap;
import io.netty.channel.pool.ChannelHealthChecker;
import io.netty.channel.pool.ChannelPoolMap;
import io.netty.channel.pool.FixedChannelPool;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;

/**
 * The non-blocking HTTP/1.1 client behind /data/{id}: Netty's own channel pool of keep-alive
 * connections. Each worker event loop has its own {@link FixedChannelPool}, whose connections
 * live on that loop, so a request, its downstream call and the answer never leave the thread
 * that read the request. Connect and response each have 2 s.
 */
final class Downstream {

    /** One downstream answer, its body already copied out of Netty's buffer. */
    record Answer(int status, byte[] body) {
    }

    static final int TIMEOUT_MS = 2_000;
    /** Connections per event loop; more requests wait in the pool for one (at most TIMEOUT_MS). */
    private static final int MAX_CONNECTIONS = 256;
    private static final int MAX_PENDING_ACQUIRES = 10_000;
    private static final int MAX_BODY = 1024 * 1024;

    private static final AttributeKey<Exchange> EXCHANGE = AttributeKey.valueOf("arena.downstream.exchange");

    private final String basePath;
    private final String hostHeader;
    private final ChannelPoolMap<EventLoop, FixedChannelPool> pools;

    Downstream(URI base, Class<? extends Channel> channelClass) {
        if (!"http".equals(base.getScheme()) || base.getHost() == null) {
            throw new IllegalArgumentException("DOWNSTREAM_URL must be http://host[:port][/path], got " + base);
        }
        int port = base.getPort() == -1 ? 80 : base.getPort();
        String path = base.getRawPath() == null ? "" : base.getRawPath();
        this.basePath = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        this.hostHeader = base.getPort() == -1 ? base.getHost() : base.getHost() + ":" + port;
        // Resolved once here, so no connect ever waits on a name lookup on an event loop.
        InetSocketAddress address = new InetSocketAddress(base.getHost(), port);
        Bootstrap bootstrap = new Bootstrap()
                .channel(channelClass)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, TIMEOUT_MS)
                .remoteAddress(address);
        PoolHandler handler = new PoolHandler();
        this.pools = new AbstractChannelPoolMap<>() {
            @Override
            protected FixedChannelPool newPool(EventLoop loop) {
                return new FixedChannelPool(bootstrap.clone(loop), handler, ChannelHealthChecker.ACTIVE,
                        FixedChannelPool.AcquireTimeoutAction.FAIL, TIMEOUT_MS, MAX_CONNECTIONS, MAX_PENDING_ACQUIRES);
            }
        };
    }

    /** GET basePath + path on a pooled connection of {@code loop}; completes on that loop. */
    Future<Answer> get(EventLoop loop, String path) {
        Promise<Answer> promise = loop.newPromise();
        FixedChannelPool pool = pools.get(loop);
        pool.acquire().addListener((Future<Channel> acquired) -> {
            if (!acquired.isSuccess()) {
                promise.tryFailure(acquired.cause());
                return;
            }
            new Exchange(pool, acquired.getNow(), promise).send(basePath + path);
        });
        return promise;
    }

    /** One request on one borrowed connection, until it is answered, fails or times out. */
    private final class Exchange {
        private final FixedChannelPool pool;
        private final Channel channel;
        private final Promise<Answer> promise;
        private ScheduledFuture<?> timeout;

        Exchange(FixedChannelPool pool, Channel channel, Promise<Answer> promise) {
            this.pool = pool;
            this.channel = channel;
            this.promise = promise;
        }

        void send(String uri) {
            channel.attr(EXCHANGE).set(this);
            timeout = channel.eventLoop().schedule(
                    () -> fail(new TimeoutException("no answer within " + TIMEOUT_MS + " ms")),
                    TIMEOUT_MS, TimeUnit.MILLISECONDS);
            FullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, uri, Unpooled.EMPTY_BUFFER);
            request.headers()
                    .set(HttpHeaderNames.HOST, hostHeader)
                    .set(HttpHeaderNames.ACCEPT, HttpHeaderValues.APPLICATION_JSON);
            channel.writeAndFlush(request).addListener(written -> {
                if (!written.isSuccess()) {
                    fail(written.cause());
                }
            });
        }

        void answered(FullHttpResponse response) {
            Answer answer = new Answer(response.status().code(), ByteBufUtil.getBytes(response.content()));
            finish(!HttpUtil.isKeepAlive(response));
            promise.trySuccess(answer);
        }

        void fail(Throwable cause) {
            // A connection whose request failed or timed out may still get a late answer: never reuse it.
            finish(true);
            promise.tryFailure(cause);
        }

        /** Hands the connection back to the pool (closed first when it is not reusable). */
        private void finish(boolean close) {
            if (channel.attr(EXCHANGE).compareAndSet(this, null)) {
                timeout.cancel(false);
                if (close) {
                    channel.close();
                }
                pool.release(channel); // the pool's health check drops a closed channel
            }
        }
    }

    /** Sets up each new pooled connection: codec, aggregator, then the answer handler. */
    private static final class PoolHandler extends AbstractChannelPoolHandler {
        private final AnswerHandler answers = new AnswerHandler();

        @Override
        public void channelCreated(Channel ch) {
            ch.pipeline()
                    .addLast("codec", new HttpClientCodec())
                    .addLast("aggregator", new HttpObjectAggregator(MAX_BODY))
                    .addLast("answers", answers);
        }
    }

    @Sharable
    private static final class AnswerHandler extends SimpleChannelInboundHandler<FullHttpResponse> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse response) {
            Exchange exchange = ctx.channel().attr(EXCHANGE).get();
            if (exchange == null) { // nobody asked: the connection is out of step, drop it
                ctx.close();
                return;
            }
            exchange.answered(response);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            Exchange exchange = ctx.channel().attr(EXCHANGE).get();
            if (exchange != null) {
                exchange.fail(new IOException("downstream closed the connection before answering"));
            }
            super.channelInactive(ctx);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            Exchange exchange = ctx.channel().attr(EXCHANGE).get();
            if (exchange != null) {
                exchange.fail(cause);
            } else {
                ctx.close();
            }
        }
    }
}
