package arena.contenders.webfluxfn;

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
 * Spring WebFlux functional endpoints on Reactor Netty: {@link Routes} maps each path to a
 * handler function; every request is served on the event loop and never blocks it. This package
 * holds what is compared with spring-webflux, the endpoints as functions; the rest (/chat,
 * /stream, /db's R2DBC pool and queries, the downstream fetch, the JSON errors, main()'s Reactor
 * Netty properties) is shared with it and lies outside this package's component scan, hence the
 * explicit import.
 */
@SpringBootApplication
@Import({ ChatConfiguration.class, StreamConfiguration.class, DbConfiguration.class, Downstream.class,
        JsonErrorHandler.class, KeepAliveReadGuard.class })
public class WebfluxFnContender {

    public static void main(String[] args) {
        WebfluxMain.run(WebfluxFnContender.class, args);
    }
}
