package arena.contender;

import java.util.concurrent.CompletableFuture;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * /db (arena's database study) in spring-mvc-async and spring-mvc-async-all: the handler checks
 * {id} or ?ms on the request thread (a bad one is a 400 at once), hands the blocking JDBC work to
 * {@link DbExecutor} and returns its CompletableFuture; Tomcat's thread goes back to the pool and
 * the answer is dispatched when a db thread completes the future. /db/slow is the more specific
 * pattern, so it wins over /db/{id}; an {id} that is not an int (abc, 1.5, 99999999999) is
 * Spring's 400.
 */
@RestController
class DbEndpoints {

    private final DataTable table;
    private final DbExecutor db;

    DbEndpoints(DataTable table, DbExecutor db) {
        this.table = table;
        this.db = db;
    }

    @GetMapping("/db/{id}")
    CompletableFuture<Data> row(@PathVariable int id) {
        return db.submit(() -> table.row(id));
    }

    @GetMapping(path = "/db/slow", produces = MediaType.TEXT_PLAIN_VALUE)
    CompletableFuture<String> slow(@RequestParam(required = false) String ms) {
        long millis = Millis.required(ms);
        return db.submit(() -> {
            table.sleep(millis);
            return "SLEPT";
        });
    }
}
