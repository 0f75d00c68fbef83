package arena.contender;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.http.HttpStatus;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ResponseStatusException;

/**
 * Where the async contenders run /db's blocking JDBC: a thread pool of its own, so that Tomcat's
 * request thread goes back to the pool at once and the answer is dispatched when a db thread
 * completes the future, as /sleep's timer and /data's HttpClient complete theirs.
 *
 * <p>Sized to the connection pool: DB_POOL threads ("db-1", …), one per connection. JDBC holds a
 * thread for as long as it holds a connection, so fewer threads would leave connections idle
 * (starving the pool), and more would only block in Hikari's queue, a thread each, which is what
 * the async model is here to avoid. A request that finds every db thread busy waits in the
 * executor's FIFO queue instead, holding no thread, and its wait counts against the contract's 30 s
 * for a connection: a task still queued after {@link DbPool#ACQUIRE} is answered 502 then and
 * skipped when its turn comes (CompletableFuture's orTimeout, a timer removed as soon as the task
 * starts). Once started, a task finds a free connection at once unless the database is failing,
 * in which case DbPool answers within one attempt.
 *
 * <p>Not a bean of type Executor: Boot's applicationTaskExecutor (spring-mvc-async-all's /instant)
 * stays Boot's. Its threads are daemons, and are stopped with the context.
 */
@Component
class DbExecutor implements DisposableBean {

    private final ThreadPoolTaskExecutor threads = new ThreadPoolTaskExecutor();

    DbExecutor(DbPool pool) {
        threads.setCorePoolSize(pool.maximumPoolSize());
        threads.setMaxPoolSize(pool.maximumPoolSize());
        threads.setThreadNamePrefix("db-");
        threads.setDaemon(true);
        threads.initialize(); // an unbounded LinkedBlockingQueue; threads start as tasks come
    }

    /** {@code work} on a db thread; the future completes with its result or its exception. */
    <T> CompletableFuture<T> submit(Supplier<T> work) {
        CompletableFuture<T> answer = new CompletableFuture<>();
        CompletableFuture<Void> turn = new CompletableFuture<Void>()
                .orTimeout(DbPool.ACQUIRE.toMillis(), TimeUnit.MILLISECONDS);
        turn.whenComplete((started, late) -> {
            if (late != null) {
                answer.completeExceptionally(new ResponseStatusException(HttpStatus.BAD_GATEWAY,
                        "database failed: no pooled connection within " + DbPool.ACQUIRE.toSeconds()
                                + " s: all " + threads.getMaxPoolSize() + " db threads busy"));
            }
        });
        threads.execute(() -> {
            if (!turn.complete(null)) {
                return; // waited too long in the queue: answered already
            }
            try {
                answer.complete(work.get());
            } catch (Throwable e) { // as CompletableFuture.supplyAsync does: the request gets it
                answer.completeExceptionally(e);
            }
        });
        return answer;
    }

    @Override
    public void destroy() {
        threads.shutdown();
    }
}
