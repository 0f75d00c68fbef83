package hello;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** Spring Boot's getting-started application: one @RestController answering /instant. */
@SpringBootApplication
@RestController
public class Main {

    @GetMapping(path = "/instant", produces = MediaType.TEXT_PLAIN_VALUE)
    public String instant() {
        return "INSTANT";
    }

    public static void main(String[] args) {
        SpringApplication.run(Main.class, args);
    }
}
