package arena.contender;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.socket.server.jetty.JettyRequestUpgradeStrategy;
import org.springframework.web.socket.server.support.DefaultHandshakeHandler;

/**
 * The /chat message limit on Jetty. With Jetty 12 on the class path Spring upgrades /chat
 * through Jetty's own WebSocket API (JettyRequestUpgradeStrategy), whose sessions do not take
 * the Jakarta container's limits that the shared ChatConfig sets with
 * ServletServerContainerFactoryBean (those are Tomcat's). As Spring's docs configure Jetty, the
 * limit is set on the strategy, which applies it to Jetty's WebSocket container: a text message
 * over 64 KiB is closed by Jetty with 1009. (Jetty's own default is also 64 KiB; set here so
 * that it is the contract's, not an accident.) ChatConfig uses this handshake handler in place
 * of Spring's default one.
 */
@Configuration
class JettyChatLimits {

    @Bean
    DefaultHandshakeHandler chatHandshake() {
        JettyRequestUpgradeStrategy jetty = new JettyRequestUpgradeStrategy();
        jetty.addWebSocketConfigurer(container -> {
            container.setMaxTextMessageSize(ChatConfig.MAX_MESSAGE);
            container.setMaxBinaryMessageSize(ChatConfig.MAX_MESSAGE);
        });
        return new DefaultHandshakeHandler(jetty);
    }
}
