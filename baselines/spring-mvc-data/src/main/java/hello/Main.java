package hello;

import java.util.List;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;

/**
 * Spring Boot's getting-started MVC app with study 002's /data/{id}, the floor of spring-mvc on
 * that path: a RestClient from Boot's RestClient.Builder, as Boot's docs show it, fetching the
 * static /resources/data{id}.json from this very server into a record that Boot's Jackson encodes.
 */
@SpringBootApplication
@RestController
public class Main {

    public record Data(int id, String value, boolean active, List<String> props) {
    }

    private final RestClient restClient;

    public Main(RestClient.Builder restClientBuilder, @Value("http://127.0.0.1:${server.port}") String baseUrl) {
        this.restClient = restClientBuilder.baseUrl(baseUrl).build();
    }

    @GetMapping(path = "/instant", produces = MediaType.TEXT_PLAIN_VALUE)
    public String instant() {
        return "INSTANT";
    }

    @GetMapping("/data/{id}")
    public Data data(@PathVariable int id) {
        return restClient.get().uri("/resources/data{id}.json", id).retrieve().body(Data.class);
    }

    @ExceptionHandler(RestClientException.class)
    @ResponseStatus(HttpStatus.BAD_GATEWAY)
    public void downstreamFailed() {
    }

    public static void main(String[] args) {
        SpringApplication.run(Main.class, args);
    }
}
