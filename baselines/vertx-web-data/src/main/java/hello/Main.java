package hello;

import java.util.List;

import io.vertx.core.AbstractVerticle;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.Json;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.StaticHandler;

/**
 * Study 002's Vert.x app in its own shape, on the Vert.x the contenders run: one verticle, a
 * Router with StaticHandler's defaults on /resources/*, and /data/{id} fetching
 * /resources/data{id}.json from itself with core's HttpClient, mapping it to a record and
 * encoding it back. The floor of /data/{id} for vertx and vertx-eventbus; /instant answers
 * too, as every baseline does.
 */
public class Main extends AbstractVerticle {

    public record Data(int id, String value, boolean active, List<String> props) {
    }

    private HttpClient client;
    private int port;

    @Override
    public void start() {
        port = Integer.parseInt(System.getenv("PORT"));
        client = vertx.createHttpClient();
        Router router = Router.router(vertx);
        router.route("/resources/*").handler(StaticHandler.create("webroot/resources"));
        router.get("/data/:id").handler(this::data);
        router.get("/instant").handler(ctx -> ctx.response().putHeader("content-type", "text/plain").end("INSTANT"));
        vertx.createHttpServer().requestHandler(router).listen(port, "127.0.0.1")
                .onFailure(e -> {
                    e.printStackTrace();
                    System.exit(1);
                });
    }

    private void data(RoutingContext ctx) {
        int id;
        try {
            id = Integer.parseInt(ctx.pathParam("id"));
        } catch (NumberFormatException e) {
            ctx.response().setStatusCode(400).end();
            return;
        }
        client.request(HttpMethod.GET, port, "127.0.0.1", "/resources/data" + id + ".json")
                .compose(req -> req.send())
                .compose(HttpClientResponse::body)
                .onSuccess(body -> {
                    Data data = body.toJsonObject().mapTo(Data.class);
                    ctx.response().putHeader("content-type", "application/json").end(Json.encode(data));
                })
                .onFailure(e -> ctx.response().setStatusCode(502).end());
    }

    public static void main(String[] args) {
        Vertx.vertx().deployVerticle(new Main()).onFailure(e -> {
            e.printStackTrace();
            System.exit(1);
        });
    }
}
