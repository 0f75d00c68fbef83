package arena.contenders.webfluxfn;

import static org.springframework.web.reactive.function.server.RequestPredicates.methods;
import static org.springframework.web.reactive.function.server.RequestPredicates.path;
import static org.springframework.web.reactive.function.server.RouterFunctions.route;

import java.util.Set;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.web.reactive.function.server.RequestPredicate;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.MethodNotAllowedException;

import reactor.core.publisher.Mono;

/**
 * The contract's paths as one router function (study 002's functional variant). The probes come
 * from Actuator and /resources/*.json from Boot's static resources, as in the annotated sibling.
 */
@Configuration(proxyBeanMethods = false)
public class Routes {

    /** The paths this router serves, whatever the method. */
    private static final RequestPredicate OWN_PATHS =
            path("/instant").or(path("/delayed")).or(path("/sleep")).or(path("/data/{id}"))
                    .or(path("/stream/stats")).or(path("/db/{id}"));

    @Bean
    RouterFunction<ServerResponse> contractRoutes(DelayHandler delays, DataHandler data, StreamStatsHandler streams,
            DbHandler db) {
        return route()
                .route(read("/instant"), delays::instant)
                .route(read("/delayed"), delays::delayed)
                .route(read("/sleep"), delays::sleep)
                .route(read("/data/{id}"), data::data)
                // /stream itself is the shared WebSocket handler's (StreamConfiguration).
                .route(read("/stream/stats"), streams::stats)
                // Routes match in order: /db/slow before /db/{id}, which would take "slow" as an id.
                .route(read("/db/slow"), db::slow)
                .route(read("/db/{id}"), db::row)
                // A router function that matches no route just passes the request on, so a known
                // path with another method would end as a 404 from the static resources. An
                // annotated controller answers OPTIONS and 405 there; this route does the same.
                .route(OWN_PATHS, Routes::otherMethod)
                .build();
    }

    /**
     * GET, and HEAD as well: unlike a {@code @GetMapping}, the GET predicate does not match HEAD.
     * WebFlux drops the body of a HEAD answer itself.
     */
    private static RequestPredicate read(String pattern) {
        return methods(HttpMethod.GET, HttpMethod.HEAD).and(path(pattern));
    }

    private static Mono<ServerResponse> otherMethod(ServerRequest request) {
        if (HttpMethod.OPTIONS.equals(request.method())) {
            return ServerResponse.ok().allow(HttpMethod.GET, HttpMethod.HEAD, HttpMethod.OPTIONS).build();
        }
        return Mono.error(new MethodNotAllowedException(request.method(), Set.of(HttpMethod.GET)));
    }
}
