package arena.contender;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * /db (arena's database study) in spring-mvc, spring-mvc-jetty and spring-mvc-virtual: blocking
 * JDBC on the thread that serves the request, as these three do every wait. The thread waits for
 * a pooled connection (up to 30 s) and then for the database's answer: a Tomcat or Jetty pool
 * thread, which serves nobody else meanwhile, or a virtual thread, which unmounts from its
 * carrier. /db/slow is the more specific pattern, so it wins over /db/{id}; an {id} that is not
 * an int (abc, 1.5, 99999999999) is Spring's 400.
 */
@RestController
class DbEndpoints {

    private final DataTable table;

    DbEndpoints(DataTable table) {
        this.table = table;
    }

    @GetMapping("/db/{id}")
    Data row(@PathVariable int id) {
        return table.row(id);
    }

    @GetMapping(path = "/db/slow", produces = MediaType.TEXT_PLAIN_VALUE)
    String slow(@RequestParam(required = false) String ms) {
        table.sleep(Millis.required(ms));
        return "SLEPT";
    }
}
