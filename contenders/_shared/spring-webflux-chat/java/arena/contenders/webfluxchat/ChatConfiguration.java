package arena.contenders.webfluxchat;

import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.config.WebFluxConfigurer;
import org.springframework.web.reactive.handler.SimpleUrlHandlerMapping;
import org.springframework.web.reactive.socket.server.WebSocketService;
import org.springframework.web.reactive.socket.server.support.HandshakeWebSocketService;
import org.springframework.web.reactive.socket.server.upgrade.ReactorNettyRequestUpgradeStrategy;

import reactor.netty.http.server.WebsocketServerSpec;

/**
 * Study 000's chat on {@code /chat}, with WebFlux's own reactive WebSocket support. Shared by
 * spring-webflux and spring-webflux-fn (each application {@code @Import}s it), so the two
 * differ only in how their HTTP endpoints are written.
 *
 * <p>Boot's WebFlux configuration already declares the {@code WebSocketHandlerAdapter}; it
 * takes its {@link WebSocketService} from the {@link WebFluxConfigurer}s, so this class only
 * supplies one whose Reactor Netty upgrade caps a frame at 64 KiB.
 */
@Configuration(proxyBeanMethods = false)
public class ChatConfiguration implements WebFluxConfigurer {

    /** The contract's largest frame. Netty's frame decoder closes a bigger one with 1009. */
    public static final int MAX_FRAME = 64 * 1024;

    @Bean
    ChatRooms chatRooms() {
        return new ChatRooms();
    }

    @Bean
    ChatHandler chatHandler(ChatRooms rooms, ObjectMapper mapper) {
        return new ChatHandler(rooms, mapper);
    }

    /**
     * {@code /chat} to the handler, at order -1: before the annotated controllers (0) and the
     * static resources, whose {@code /**} would otherwise claim the path.
     */
    @Bean
    HandlerMapping chatHandlerMapping(ChatHandler handler) {
        return new SimpleUrlHandlerMapping(Map.of("/chat", handler), -1);
    }

    /**
     * Reactor Netty's upgrade with {@code maxFramePayloadLength} 64 KiB. Reactor Netty hands it
     * to Netty's {@code WebSocketServerHandshakerFactory}, whose decoder answers a longer frame
     * with a close frame 1009 (message too big) and closes the connection; WebFlux aggregates
     * fragmented messages up to the same size.
     */
    @Override
    public WebSocketService getWebSocketService() {
        return new HandshakeWebSocketService(new ReactorNettyRequestUpgradeStrategy(
                () -> WebsocketServerSpec.builder().maxFramePayloadLength(MAX_FRAME)));
    }
}
