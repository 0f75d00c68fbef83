package arena.contenders.webflux;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/** Spring WebFlux on Reactor Netty: every request is served on the event loop, never blocked. */
@SpringBootApplication
public class WebfluxContender {

    public static void main(String[] args) {
        SpringApplication.run(WebfluxContender.class, args);
    }
}
