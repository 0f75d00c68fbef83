package arena.contender;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * As in study 004's second variant, /instant is handed off too, to Boot's applicationTaskExecutor,
 * although it has nothing to wait for. This is what spring-mvc-async does differently; the other
 * endpoints are the shared async ones.
 */
@RestController
class InstantEndpoint {

    private final Executor executor;

    InstantEndpoint(@Qualifier(TaskExecutionAutoConfiguration.APPLICATION_TASK_EXECUTOR_BEAN_NAME) Executor executor) {
        this.executor = executor;
    }

    @GetMapping(path = "/instant", produces = MediaType.TEXT_PLAIN_VALUE)
    CompletableFuture<String> instant() {
        return CompletableFuture.supplyAsync(() -> "INSTANT", executor);
    }
}
