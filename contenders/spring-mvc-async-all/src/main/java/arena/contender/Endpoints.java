package arena.contender;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * Async servlet: a handler that waits returns a CompletableFuture, Tomcat's thread goes back to
 * the pool at once, and the answer is dispatched when another thread completes the future.
 * As in study 004's second variant, /instant is handed off too, to Boot's applicationTaskExecutor,
 * although it has nothing to wait for.
 */
@RestController
class Endpoints {

    private final TaskScheduler scheduler;
    private final Executor executor;
    private final HttpClient http;
    private final ObjectMapper json;
    private final String downstreamUrl;

    Endpoints(TaskScheduler scheduler,
            @Qualifier(TaskExecutionAutoConfiguration.APPLICATION_TASK_EXECUTOR_BEAN_NAME) Executor executor,
            HttpClient http, ObjectMapper json,
            @Value("${DOWNSTREAM_URL:http://127.0.0.1:${server.port}}") String downstreamUrl) {
        this.scheduler = scheduler;
        this.executor = executor;
        this.http = http;
        this.json = json;
        this.downstreamUrl = downstreamUrl.replaceAll("/+$", "");
    }

    @GetMapping(path = "/instant", produces = MediaType.TEXT_PLAIN_VALUE)
    CompletableFuture<String> instant() {
        return CompletableFuture.supplyAsync(() -> "INSTANT", executor);
    }

    @GetMapping(path = "/delayed", produces = MediaType.TEXT_PLAIN_VALUE)
    CompletableFuture<String> delayed(@RequestParam(required = false) String ms) {
        return after(millis(ms, 10_000), "DELAYED");
    }

    @GetMapping(path = "/sleep", produces = MediaType.TEXT_PLAIN_VALUE)
    CompletableFuture<String> sleep(@RequestParam(required = false) String ms) {
        return after(millis(ms, 100), "SLEPT");
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

    /** Parsed by hand so that anything but an integer in 0..60000 (even "?ms=") is a 400. */
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
