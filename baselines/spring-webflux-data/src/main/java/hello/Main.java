package hello;

import java.util.List;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.server.ResponseStatusException;

import reactor.core.publisher.Mono;

/**
 * Spring Boot's getting-started WebFlux app with study 002's /data/{id}, the floor of
 * spring-webflux on that path: a WebClient from Boot's WebClient.Builder fetching the static
 * /resources/data{id}.json from this very server, bodyToMono into a record that Spring encodes.
 */
@SpringBootApplication
@RestController
public class Main {

    public record Data(int id, String value, boolean active, List<String> props) {
    }

    private final WebClient webClient;

    public Main(WebClient.Builder webClientBuilder, @Value("http://127.0.0.1:${server.port}") String baseUrl) {
        this.webClient = webClientBuilder.baseUrl(baseUrl).build();
    }

    @GetMapping(path = "/instant", produces = MediaType.TEXT_PLAIN_VALUE)
    public Mono<String> instant() {
        return Mono.just("INSTANT");
    }

    @GetMapping("/data/{id}")
    public Mono<Data> data(@PathVariable int id) {
        return webClient.get().uri("/resources/data{id}.json", id).retrieve().bodyToMono(Data.class)
                .onErrorMap(e -> new ResponseStatusException(HttpStatus.BAD_GATEWAY, "downstream failed", e));
    }

    public static void main(String[] args) {
        SpringApplication.run(Main.class, args);
    }
}
