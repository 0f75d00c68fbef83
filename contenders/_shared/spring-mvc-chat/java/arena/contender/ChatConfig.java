package arena.contender;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.socket.config.annotation.EnableWebSocket;
import org.springframework.web.socket.config.annotation.WebSocketConfigurer;
import org.springframework.web.socket.config.annotation.WebSocketHandlerRegistry;
import org.springframework.web.socket.server.HandshakeHandler;
import org.springframework.web.socket.server.standard.ServletServerContainerFactoryBean;
import org.springframework.web.socket.server.support.DefaultHandshakeHandler;

/**
 * Study 000's /chat on Spring's WebSocket support. Shared verbatim by the five Spring MVC
 * contenders (contenders/_shared/spring-mvc-chat), so that they differ only in their servlet
 * container and threads.
 *
 * <p>No setAllowedOrigins: Spring only refuses a handshake whose Origin header names another
 * host, and the lab's client (like any non-browser client) sends no Origin.
 */
@Configuration
@EnableWebSocket
class ChatConfig implements WebSocketConfigurer {

    /** The contract's largest message: Tomcat closes a bigger one with 1009. */
    static final int MAX_MESSAGE = 64 * 1024;

    private final ChatHandler chat;
    private final ObjectProvider<HandshakeHandler> handshake;

    /**
     * handshake: a container may bring its own handshake handler (spring-mvc-jetty sets
     * Jetty's message limit on its JettyRequestUpgradeStrategy, as Spring's docs advise for
     * Jetty); otherwise Spring's default, which picks the container's upgrade strategy.
     */
    ChatConfig(ChatHandler chat, ObjectProvider<HandshakeHandler> handshake) {
        this.chat = chat;
        this.handshake = handshake;
    }

    @Override
    public void registerWebSocketHandlers(WebSocketHandlerRegistry registry) {
        registry.addHandler(chat, "/chat").setHandshakeHandler(handshake.getIfAvailable(DefaultHandshakeHandler::new));
    }

    /**
     * The Jakarta WebSocket container's limits (Tomcat's defaults are 8 KiB). A whole text
     * message over the buffer is closed by the container with 1009 before the handler sees it.
     */
    @Bean
    ServletServerContainerFactoryBean chatContainer() {
        ServletServerContainerFactoryBean container = new ServletServerContainerFactoryBean();
        container.setMaxTextMessageBufferSize(MAX_MESSAGE);
        container.setMaxBinaryMessageBufferSize(MAX_MESSAGE);
        return container;
    }
}
