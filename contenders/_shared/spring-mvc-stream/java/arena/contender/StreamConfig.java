package arena.contender;

import org.springframework.context.annotation.Configuration;
import org.springframework.web.socket.config.annotation.EnableWebSocket;
import org.springframework.web.socket.config.annotation.WebSocketConfigurer;
import org.springframework.web.socket.config.annotation.WebSocketHandlerRegistry;
import org.springframework.web.socket.server.standard.StandardWebSocketUpgradeStrategy;
import org.springframework.web.socket.server.support.DefaultHandshakeHandler;

/**
 * Study 003's /stream on Spring's WebSocket support. Shared verbatim by the five Spring MVC
 * contenders (contenders/_shared/spring-mvc-stream), so that they differ only in their servlet
 * container and threads.
 *
 * <p>The handshake goes through Spring's StandardWebSocketUpgradeStrategy (the Jakarta
 * WebSocket 2.1 upgrade) on both containers, so that every /stream session is a
 * jakarta.websocket.Session whose RemoteEndpoint.Async sends report completion: Spring's own
 * WebSocketSession.sendMessage only blocks. On Tomcat that is what Spring picks anyway
 * (TomcatRequestUpgradeStrategy is the same upgrade); on Jetty, Spring's default would be
 * Jetty's own WebSocket API, which /chat keeps.
 *
 * <p>StreamParams checks rate and size before the upgrade: a bad one is a 400 with the JSON
 * error body and no WebSocket.
 */
@Configuration
@EnableWebSocket
class StreamConfig implements WebSocketConfigurer {

    private final StreamHandler stream;
    private final StreamParams params;

    StreamConfig(StreamHandler stream, StreamParams params) {
        this.stream = stream;
        this.params = params;
    }

    @Override
    public void registerWebSocketHandlers(WebSocketHandlerRegistry registry) {
        registry.addHandler(stream, "/stream")
                .setHandshakeHandler(new DefaultHandshakeHandler(new StandardWebSocketUpgradeStrategy()))
                .addInterceptors(params);
    }
}
