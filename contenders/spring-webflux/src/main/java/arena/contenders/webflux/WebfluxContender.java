package arena.contenders.webflux;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Import;

import arena.contenders.webfluxchat.ChatConfiguration;
import arena.contenders.webfluxcommon.Downstream;
import arena.contenders.webfluxcommon.JsonErrorHandler;
import arena.contenders.webfluxcommon.KeepAliveReadGuard;
import arena.contenders.webfluxcommon.WebfluxMain;
import arena.contenders.webfluxdb.DbConfiguration;
import arena.contenders.webfluxstream.StreamConfiguration;

/**
 * Spring WebFlux on Reactor Netty: every request is served on the event loop, never blocked.
 * This package holds what is compared with spring-webflux-fn, the endpoints as annotated
 * controllers; the rest (/chat, /stream, /db's R2DBC pool and queries, the downstream fetch,
 * the JSON errors, main()'s Reactor Netty properties) is shared with it and lies outside this
 * package's component scan, hence the explicit import.
 */
@SpringBootApplication
@Import({ ChatConfiguration.class, StreamConfiguration.class, DbConfiguration.class, Downstream.class,
        JsonErrorHandler.class, KeepAliveReadGuard.class })
public class WebfluxContender {

    public static void main(String[] args) {
        WebfluxMain.run(WebfluxContender.class, args);
    }
}
