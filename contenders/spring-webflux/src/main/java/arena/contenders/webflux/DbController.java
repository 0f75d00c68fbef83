package arena.contenders.webflux;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import arena.contenders.webfluxcommon.Data;
import arena.contenders.webfluxcommon.Millis;
import arena.contenders.webfluxdb.Db;

import reactor.core.publisher.Mono;

/**
 * /db/{id} and /db/slow (arena's database study) as an annotated controller: Spring binds {id}
 * and ?ms, the shared {@link Db} runs the query on the R2DBC pool without blocking, and Spring
 * encodes the record as it does /data/{id}'s.
 */
@RestController
public class DbController {

    private final Db db;

    public DbController(Db db) {
        this.db = db;
    }

    // A non-integer {id}, or one beyond 32 bits, fails binding with a ServerWebInputException,
    // which JsonErrorHandler turns into a 400. /db/slow is the more specific pattern, so it wins.
    @GetMapping(path = "/db/{id}", produces = MediaType.APPLICATION_JSON_VALUE)
    public Mono<Data> row(@PathVariable("id") int id) {
        return db.row(id);
    }

    @GetMapping(path = "/db/slow", produces = MediaType.TEXT_PLAIN_VALUE)
    public Mono<String> slow(@RequestParam(name = "ms", required = false) String ms) {
        return db.sleep(Millis.required(ms)).thenReturn("SLEPT");
    }
}
