package arena.contender;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * /instant has nothing to wait for, so it answers on the request thread. This is what
 * spring-mvc-async-all does differently; the other endpoints are the shared async ones.
 */
@RestController
class InstantEndpoint {

    @GetMapping(path = "/instant", produces = MediaType.TEXT_PLAIN_VALUE)
    String instant() {
        return "INSTANT";
    }
}
