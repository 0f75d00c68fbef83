package hello;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.pool.AbstractChannelPoolHandler;
import io.netty.channel.pool.ChannelPool;
import io.netty.channel.pool.SimpleChannelPool;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerKeepAliveHandler;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.Future;

/**
 * The floor of the netty contender on /data/{id}: Netty's HTTP hello world plus a fetch from
 * itself with Netty's own client through a SimpleChannelPool, Jackson into a record and back.
 */
public class Main {

    public record Data(int id, String value, boolean active, List<String> props) {
    }

    static final ObjectMapper MAPPER = new ObjectMapper();
    static final byte[] INSTANT = "INSTANT".getBytes(StandardCharsets.US_ASCII);
    static final Map<String, byte[]> RESOURCES = Map.of(
            "/resources/data1.json", classpath("/resources/data1.json"),
            "/resources/data2.json", classpath("/resources/data2.json"));

    /** On a pooled client connection: the server request waiting for its answer. */
    static final AttributeKey<ChannelHandlerContext> WAITING = AttributeKey.valueOf("waiting");

    static int port;
    static ChannelPool pool;

    public static void main(String[] args) throws Exception {
        port = Integer.parseInt(System.getenv("PORT"));
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(NioIoHandler.newFactory());
        try {
            Bootstrap client = new Bootstrap()
                    .group(group)
                    .channel(NioSocketChannel.class)
                    .remoteAddress("127.0.0.1", port);
            pool = new SimpleChannelPool(client, new AbstractChannelPoolHandler() {
                @Override
                public void channelCreated(Channel ch) {
                    ch.pipeline().addLast(new HttpClientCodec(), new HttpObjectAggregator(65536), new DataClient());
                }
            });
            new ServerBootstrap()
                    .group(group)
                    .channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(new HttpServerCodec(), new HttpServerKeepAliveHandler(),
                                    new HttpObjectAggregator(65536), new Server());
                        }
                    })
                    .bind("127.0.0.1", port).sync()
                    .channel().closeFuture().sync();
        } finally {
            group.shutdownGracefully();
        }
    }

    /** The server's one handler: /instant, the two resources, /data/{id}. */
    static final class Server extends SimpleChannelInboundHandler<FullHttpRequest> {

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
            String uri = req.uri();
            byte[] resource = RESOURCES.get(uri);
            if ("/instant".equals(uri)) {
                send(ctx, HttpResponseStatus.OK, HttpHeaderValues.TEXT_PLAIN, INSTANT);
            } else if (resource != null) {
                send(ctx, HttpResponseStatus.OK, HttpHeaderValues.APPLICATION_JSON, resource);
            } else if (uri.startsWith("/data/")) {
                int id;
                try {
                    id = Integer.parseInt(uri.substring("/data/".length()));
                } catch (NumberFormatException e) {
                    send(ctx, HttpResponseStatus.BAD_REQUEST, HttpHeaderValues.TEXT_PLAIN, new byte[0]);
                    return;
                }
                fetch(ctx, id);
            } else {
                send(ctx, HttpResponseStatus.NOT_FOUND, HttpHeaderValues.TEXT_PLAIN, new byte[0]);
            }
        }

        /** Borrows a connection from the pool and sends the request; DataClient answers. */
        private static void fetch(ChannelHandlerContext ctx, int id) {
            pool.acquire().addListener((Future<Channel> acquired) -> {
                if (!acquired.isSuccess()) {
                    send(ctx, HttpResponseStatus.BAD_GATEWAY, HttpHeaderValues.TEXT_PLAIN, new byte[0]);
                    return;
                }
                Channel ch = acquired.getNow();
                ch.attr(WAITING).set(ctx);
                FullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET,
                        "/resources/data" + id + ".json", Unpooled.EMPTY_BUFFER);
                request.headers().set(HttpHeaderNames.HOST, "127.0.0.1:" + port);
                ch.writeAndFlush(request).addListener(written -> {
                    if (!written.isSuccess()) {
                        ch.close(); // DataClient.channelInactive answers 502
                    }
                });
            });
        }
    }

    /** The client connections' handler: decode the answer, encode the record, release the connection. */
    @Sharable
    static final class DataClient extends SimpleChannelInboundHandler<FullHttpResponse> {

        @Override
        protected void channelRead0(ChannelHandlerContext c, FullHttpResponse res) {
            ChannelHandlerContext ctx = c.channel().attr(WAITING).getAndSet(null);
            boolean ok = res.status().equals(HttpResponseStatus.OK);
            byte[] body = ByteBufUtil.getBytes(res.content());
            if (!HttpUtil.isKeepAlive(res)) {
                c.close();
            }
            pool.release(c.channel());
            if (ctx == null) {
                return;
            }
            try {
                if (!ok) {
                    throw new IOException("downstream answered " + res.status());
                }
                Data data = MAPPER.readValue(body, Data.class);
                send(ctx, HttpResponseStatus.OK, HttpHeaderValues.APPLICATION_JSON, MAPPER.writeValueAsBytes(data));
            } catch (IOException e) {
                send(ctx, HttpResponseStatus.BAD_GATEWAY, HttpHeaderValues.TEXT_PLAIN, new byte[0]);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext c) {
            ChannelHandlerContext ctx = c.channel().attr(WAITING).getAndSet(null);
            if (ctx != null) {
                pool.release(c.channel());
                send(ctx, HttpResponseStatus.BAD_GATEWAY, HttpHeaderValues.TEXT_PLAIN, new byte[0]);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext c, Throwable cause) {
            c.close();
        }
    }

    /** HttpServerKeepAliveHandler sets Connection and closes when the client asked it to. */
    static void send(ChannelHandlerContext ctx, HttpResponseStatus status, CharSequence type, byte[] body) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(body));
        response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, type)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
        ctx.writeAndFlush(response);
    }

    static byte[] classpath(String name) {
        try (InputStream in = Main.class.getResourceAsStream(name)) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
