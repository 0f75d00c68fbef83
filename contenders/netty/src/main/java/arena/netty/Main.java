package arena.netty;

import java.net.InetSocketAddress;
import java.net.URI;
import java.util.concurrent.TimeUnit;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerKeepAliveHandler;

/**
 * A plain Netty 4.2 HTTP server: one acceptor loop, a worker group of Netty's default size
 * (2 × cores), and a pipeline of HttpServerCodec, HttpServerKeepAliveHandler, an aggregator and
 * {@link Routes}; a request for /chat turns its connection into a WebSocket ({@link ChatUpgrade},
 * {@link Chat}), and so does one for /stream ({@link StreamUpgrade}, {@link Stream}). Nothing in
 * it ever blocks a loop: /db's blocking JDBC runs on the {@link Database}'s own executor.
 */
public final class Main {

    /** Maximum request body; the contract's requests have none. */
    static final int MAX_CONTENT = 64 * 1024;

    public static void main(String[] args) throws InterruptedException {
        // BIND_ADDRESS only in a multi-host run, where load agents on other hosts must reach it.
        String host = env("BIND_ADDRESS", "127.0.0.1");
        int port = Integer.parseInt(env("PORT", "8080"));
        // Unset: itself, on the address it listens on (127.0.0.1 does not answer once moved).
        URI downstreamUrl = URI.create(env("DOWNSTREAM_URL", "http://" + host + ":" + port));
        boolean backpressure = backpressure(env("BACKPRESSURE", "on"));
        // /db: the lab's PostgreSQL when DB_URL is set; unset, the server runs as ever and /db answers 502.
        Database database = Database.fromEnv(env("DB_URL", null), env("DB_POOL", null));

        // The native transport when it loads (Linux x86_64), NIO otherwise.
        boolean epoll = Epoll.isAvailable();
        IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        Class<? extends ServerChannel> serverChannel = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
        Class<? extends Channel> clientChannel = epoll ? EpollSocketChannel.class : NioSocketChannel.class;

        MultiThreadIoEventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, io);
        MultiThreadIoEventLoopGroup workers = new MultiThreadIoEventLoopGroup(io); // Netty's default: 2 × cores

        Downstream downstream = new Downstream(downstreamUrl, clientChannel);
        StreamStats streamStats = new StreamStats();
        Routes routes = new Routes(downstream, streamStats, database);
        ChatUpgrade chat = new ChatUpgrade(new Chat());
        StreamUpgrade stream = new StreamUpgrade(streamStats, backpressure);

        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(boss, workers)
                .channel(serverChannel)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ChannelPipeline p = ch.pipeline();
                        p.addLast("codec", new HttpServerCodec());
                        p.addLast("keep-alive", new HttpServerKeepAliveHandler());
                        p.addLast("aggregator", new JsonAggregator(MAX_CONTENT));
                        p.addLast("chat-upgrade", chat); // /chat only: swaps in the WebSocket handlers
                        p.addLast("stream-upgrade", stream); // /stream only: checks rate and size, then the same
                        p.addLast("routes", routes);
                    }
                });

        Channel server = bootstrap.bind(new InetSocketAddress(host, port)).sync().channel();

        // SIGTERM: stop accepting, then let the loops go after a short quiet period. Pending
        // /delayed timers are cancelled by the shutdown, so the process is gone within ~2 s.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close().awaitUninterruptibly(1, TimeUnit.SECONDS);
            boss.shutdownGracefully(100, 2_000, TimeUnit.MILLISECONDS);
            workers.shutdownGracefully(100, 2_000, TimeUnit.MILLISECONDS);
            boss.terminationFuture().awaitUninterruptibly(3, TimeUnit.SECONDS);
            workers.terminationFuture().awaitUninterruptibly(3, TimeUnit.SECONDS);
            database.close(); // at most 2 s more
        }, "shutdown"));

        System.out.printf("netty listening on %s:%d (%s transport, %d event loops), downstream %s, back-pressure %s, %s%n",
                host, port, epoll ? "epoll" : "nio", workers.executorCount(), downstreamUrl, backpressure ? "on" : "off",
                database.describe());
        server.closeFuture().sync();
    }

    private static boolean backpressure(String value) {
        return switch (value.toLowerCase(java.util.Locale.ROOT)) {
            case "on" -> true;
            case "off" -> false;
            default -> throw new IllegalArgumentException("BACKPRESSURE must be on or off, got " + value);
        };
    }

    private static String env(String name, String dflt) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? dflt : value.trim();
    }

    private Main() {
    }
}
