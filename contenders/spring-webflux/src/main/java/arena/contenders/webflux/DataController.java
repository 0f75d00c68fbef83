package arena.contenders.webflux;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

import arena.contenders.webfluxcommon.Data;
import arena.contenders.webfluxcommon.Downstream;

import reactor.core.publisher.Mono;

/**
 * /data/{id} (study 002's annotated controller): Spring binds {id}, the shared {@link Downstream}
 * fetches and decodes the record, and Spring encodes it.
 */
@RestController
public class DataController {

    private final Downstream downstream;

    public DataController(Downstream downstream) {
        this.downstream = downstream;
    }

    // A non-integer {id} fails binding with a ServerWebInputException, which JsonErrorHandler
    // turns into a 400.
    @GetMapping(path = "/data/{id}", produces = MediaType.APPLICATION_JSON_VALUE)
    public Mono<Data> data(@PathVariable("id") int id) {
        return downstream.data(id);
    }
}
