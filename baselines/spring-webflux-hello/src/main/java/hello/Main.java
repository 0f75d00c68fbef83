package hello;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import reactor.core.publisher.Mono;

/** Spring Boot's getting-started WebFlux application: one @RestController answering /instant with a Mono. */
@SpringBootApplication
@RestController
public class Main {

    @GetMapping(path = "/instant", produces = MediaType.TEXT_PLAIN_VALUE)
    public Mono<String> instant() {
        return Mono.just("INSTANT");
    }

    public static void main(String[] args) {
        SpringApplication.run(Main.class, args);
    }
}
