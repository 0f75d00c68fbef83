package arena.contender;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;
import org.springframework.web.server.ResponseStatusException;

/**
 * The blocking endpoints of spring-mvc, spring-mvc-jetty and spring-mvc-virtual: every wait
 * blocks the thread that serves the request. Which thread that is, is what the three compare: a
 * Tomcat pool thread, a Jetty pool thread, or a virtual thread of its own that unmounts from its
 * carrier while it waits.
 */
@RestController
class Endpoints {

    private final RestClient downstream;

    Endpoints(RestClient downstream) {
        this.downstream = downstream;
    }

    @GetMapping(path = "/instant", produces = MediaType.TEXT_PLAIN_VALUE)
    String instant() {
        return "INSTANT";
    }

    @GetMapping(path = "/delayed", produces = MediaType.TEXT_PLAIN_VALUE)
    String delayed(@RequestParam(required = false) String ms) throws InterruptedException {
        Thread.sleep(Millis.parse(ms, 10_000));
        return "DELAYED";
    }

    @GetMapping(path = "/sleep", produces = MediaType.TEXT_PLAIN_VALUE)
    String sleep(@RequestParam(required = false) String ms) throws InterruptedException {
        Thread.sleep(Millis.parse(ms, 100));
        return "SLEPT";
    }

    @GetMapping("/data/{id}")
    Data data(@PathVariable int id) {
        Data data;
        try {
            data = downstream.get()
                    .uri("/resources/data{id}.json", id)
                    .retrieve()
                    .onStatus(status -> !status.is2xxSuccessful(), (request, response) -> {
                        throw response.getStatusCode().value() == 404
                                ? new ResponseStatusException(HttpStatus.NOT_FOUND, "no data " + id)
                                : new ResponseStatusException(HttpStatus.BAD_GATEWAY,
                                        "downstream answered " + response.getStatusCode().value());
                    })
                    .body(Data.class);
        } catch (RestClientException e) { // connection refused, timeout, unreadable body
            throw new ResponseStatusException(HttpStatus.BAD_GATEWAY, "downstream failed: " + e.getMostSpecificCause());
        }
        if (data == null) {
            throw new ResponseStatusException(HttpStatus.BAD_GATEWAY, "downstream sent no body");
        }
        return data;
    }
}
