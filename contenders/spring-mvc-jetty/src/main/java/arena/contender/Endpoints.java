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

/** Thread-per-request: every wait blocks the Jetty pool thread that serves the request. */
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
        Thread.sleep(millis(ms, 10_000));
        return "DELAYED";
    }

    @GetMapping(path = "/sleep", produces = MediaType.TEXT_PLAIN_VALUE)
    String sleep(@RequestParam(required = false) String ms) throws InterruptedException {
        Thread.sleep(millis(ms, 100));
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
        } catch (RestClientException e) { // refused connection, timeout, undecodable body
            throw new ResponseStatusException(HttpStatus.BAD_GATEWAY, "downstream failed: " + e.getMostSpecificCause());
        }
        if (data == null) {
            throw new ResponseStatusException(HttpStatus.BAD_GATEWAY, "downstream sent no body");
        }
        return data;
    }

    /** Parsed by hand so that anything but an integer in 0..60000 (even an empty "?ms=") is a 400. */
    private static long millis(String ms, long dflt) {
        if (ms == null) {
            return dflt;
        }
        try {
            int value = Integer.parseInt(ms);
            if (value >= 0 && value <= 60_000) {
                return value;
            }
        } catch (NumberFormatException ignored) {
            // falls through to the 400
        }
        throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "ms must be an integer in 0..60000, got '" + ms + "'");
    }
}
