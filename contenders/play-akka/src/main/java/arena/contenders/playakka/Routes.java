package arena.contenders.playakka;

import static java.util.concurrent.CompletableFuture.completedFuture;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;

import com.fasterxml.jackson.databind.node.ObjectNode;

import akka.actor.ActorSystem;
import akka.pattern.Patterns;
import play.libs.Json;
import play.libs.ws.WSClient;
import play.libs.ws.WSResponse;
import play.mvc.Http;
import play.mvc.Result;
import play.mvc.Results;
import play.routing.Router;
import play.routing.RoutingDsl;

/**
 * The contract's routes, built with Play's Java RoutingDsl. Nothing here blocks: the waits are
 * timers on the Akka scheduler and /data/{id} is a Play WS call, so every action returns a
 * CompletionStage that Akka completes later and the dispatcher threads stay free.
 */
final class Routes {

    static final long MAX_MS = 60_000;

    private static final ObjectNode UP = Json.newObject().put("status", "UP");

    private final ActorSystem actors;
    private final WSClient ws;
    private final String downstream;
    private final StreamStats streams;
    private final DbRoutes db;

    Routes(ActorSystem actors, WSClient ws, String downstream, StreamStats streams, DbRoutes db) {
        this.actors = actors;
        this.ws = ws;
        this.downstream = downstream.replaceAll("/+$", "");
        this.streams = streams;
        this.db = db;
    }

    Router build(RoutingDsl dsl) {
        return dsl
                .GET("/actuator/health/liveness").routingTo(request -> Results.ok(UP))
                .GET("/actuator/health/readiness").routingTo(request -> Results.ok(UP))
                .GET("/instant").routingTo(request -> Results.ok("INSTANT"))
                .GET("/delayed").routingAsync(request -> after(request, 10_000, "DELAYED"))
                .GET("/sleep").routingAsync(request -> after(request, 100, "SLEPT"))
                .GET("/resources/:file").routingTo(this::resource)
                .GET("/data/:id").routingAsync(this::data)
                // /db (arena's database study): JDBC on the database dispatcher. Routes match in
                // order, so /db/slow comes before /db/:id.
                .GET("/db/slow").routingAsync(db::slow)
                .GET("/db/:id").routingAsync(db::row)
                .GET("/stream/stats").routingTo(request -> Results.ok(streams.json()))
                .build();
    }

    /** /delayed and /sleep: a timer on the Akka scheduler completes the answer; no thread waits. */
    private CompletionStage<Result> after(Http.Request request, long dflt, String body) {
        Optional<String> raw = request.queryString("ms");
        long ms;
        try {
            ms = raw.map(Long::parseLong).orElse(dflt);
        } catch (NumberFormatException e) {
            ms = -1;
        }
        if (ms < 0 || ms > MAX_MS) {
            return completedFuture(Errors.json(Http.Status.BAD_REQUEST,
                    "ms must be an integer in 0.." + MAX_MS + ", got '" + raw.orElse("") + "'"));
        }
        return Patterns.after(Duration.ofMillis(ms), actors,
                () -> completedFuture(Results.ok(body)));
    }

    /**
     * The study's two documents, read once from the classpath (public/resources/) and answered
     * from memory with their length. (Play's sendResource streams a classpath resource without a
     * Content-Length, which the Akka HTTP backend answers with Connection: close: every
     * /data/{id} call through the server itself would then open a new connection.)
     */
    private Result resource(Http.Request request, String file) {
        byte[] body = RESOURCES.get(file);
        if (body == null) {
            return Errors.json(Http.Status.NOT_FOUND, "no such path: " + request.path());
        }
        return Results.ok(body).as(Http.MimeTypes.JSON);
    }

    private static final Map<String, byte[]> RESOURCES = Map.of(
            "data1.json", classpath("public/resources/data1.json"),
            "data2.json", classpath("public/resources/data2.json"));

    private static byte[] classpath(String name) {
        try (InputStream in = Routes.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + name);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * /data/{id} (study 002): fetch with the shared Play WS client, decode the JSON into
     * {@link Data} with Play's Jackson mapper, encode the record back.
     */
    private CompletionStage<Result> data(Http.Request request, String rawId) {
        int id;
        try {
            id = Integer.parseInt(rawId);
        } catch (NumberFormatException e) {
            return completedFuture(Errors.json(Http.Status.BAD_REQUEST,
                    "id must be an integer, got '" + rawId + "'"));
        }
        return ws.url(downstream + "/resources/data" + id + ".json").get()
                .handle((response, failure) -> failure == null
                        ? answer(id, response)
                        : Errors.json(Http.Status.BAD_GATEWAY, "downstream failed: " + describe(failure)));
    }

    private static Result answer(int id, WSResponse response) {
        int status = response.getStatus();
        if (status == Http.Status.NOT_FOUND) {
            return Errors.json(Http.Status.NOT_FOUND, "downstream has no data" + id + ".json");
        }
        if (status < 200 || status > 299) {
            return Errors.json(Http.Status.BAD_GATEWAY, "downstream answered " + status);
        }
        Data data;
        try {
            data = Json.fromJson(response.asJson(), Data.class);
        } catch (RuntimeException e) {
            return Errors.json(Http.Status.BAD_GATEWAY, "downstream body is not a Data record");
        }
        return Results.ok(Json.toJson(data));
    }

    /** A short reason for the 502 body, without a stack of wrapper exceptions. */
    private static String describe(Throwable failure) {
        Throwable t = failure;
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        if (t instanceof TimeoutException) {
            return "no answer within 2 s";
        }
        if (t instanceof ConnectException) {
            return "connection refused";
        }
        String message = t.getMessage();
        return message == null || message.isBlank() ? t.getClass().getSimpleName() : message;
    }
}
