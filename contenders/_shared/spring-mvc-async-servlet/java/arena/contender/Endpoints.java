package arena.contender;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * Async servlet, shared by spring-mvc-async and spring-mvc-async-all: a handler that waits
 * returns a CompletableFuture, Tomcat's thread goes back to the pool at once, and the answer is
 * dispatched when another thread completes the future. /instant is not here: whether it too is
 * handed off is what the two compare, so each has its own (InstantEndpoint).
 */
@RestController
class Endpoints {

    private final TaskScheduler scheduler;
    private final HttpClient http;
    private final ObjectMapper json;
    private final String downstreamUrl;

    Endpoints(TaskScheduler scheduler, HttpClient http, ObjectMapper json,
            @Value("${DOWNSTREAM_URL:http://${server.address}:${server.port}}") String downstreamUrl) {
        this.scheduler = scheduler;
        this.http = http;
        this.json = json;
        this.downstreamUrl = downstreamUrl.replaceAll("/+$", "");
    }

    @GetMapping(path = "/delayed", produces = MediaType.TEXT_PLAIN_VALUE)
    CompletableFuture<String> delayed(@RequestParam(required = false) String ms) {
        return after(Millis.parse(ms, 10_000), "DELAYED");
    }

    @GetMapping(path = "/sleep", produces = MediaType.TEXT_PLAIN_VALUE)
    CompletableFuture<String> sleep(@RequestParam(required = false) String ms) {
        return after(Millis.parse(ms, 100), "SLEPT");
    }

    @GetMapping("/data/{id}")
    CompletableFuture<Data> data(@PathVariable int id) {
        HttpRequest request = HttpRequest.newBuilder(URI.create(downstreamUrl + "/resources/data" + id + ".json"))
                .timeout(Downstream.TIMEOUT)
                .build();
        return http.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray())
                .thenApply(response -> decode(id, response))
                .exceptionally(failure -> {
                    Throwable cause = failure instanceof CompletionException ? failure.getCause() : failure;
                    if (cause instanceof ResponseStatusException status) {
                        throw status;
                    }
                    // connection refused, no answer within 2 s
                    throw new ResponseStatusException(HttpStatus.BAD_GATEWAY, "downstream failed: " + cause);
                });
    }

    /** A timer, not a sleeping thread, completes the answer. */
    private CompletableFuture<String> after(long ms, String body) {
        CompletableFuture<String> answer = new CompletableFuture<>();
        scheduler.schedule(() -> answer.complete(body), Instant.now().plusMillis(ms));
        return answer;
    }

    private Data decode(int id, HttpResponse<byte[]> response) {
        int status = response.statusCode();
        if (status == 404) {
            throw new ResponseStatusException(HttpStatus.NOT_FOUND, "no data " + id);
        }
        if (status < 200 || status > 299) {
            throw new ResponseStatusException(HttpStatus.BAD_GATEWAY, "downstream answered " + status);
        }
        Data data;
        try {
            data = json.readValue(response.body(), Data.class);
        } catch (IOException e) {
            throw new ResponseStatusException(HttpStatus.BAD_GATEWAY, "downstream failed: " + e);
        }
        if (data == null) {
            throw new ResponseStatusException(HttpStatus.BAD_GATEWAY, "downstream sent no body");
        }
        return data;
    }
}
