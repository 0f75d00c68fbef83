package hello;

import io.vertx.core.AbstractVerticle;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;

/** Vert.x core's HTTP server, answering /instant, one verticle instance per event loop. */
public class Main extends AbstractVerticle {

    @Override
    public void start(Promise<Void> started) {
        vertx.createHttpServer()
                .requestHandler(req -> {
                    if ("/instant".equals(req.path())) {
                        req.response().putHeader("content-type", "text/plain").end("INSTANT");
                    } else {
                        req.response().setStatusCode(404).end();
                    }
                })
                .listen(Integer.parseInt(System.getenv("PORT")), "127.0.0.1")
                .<Void>mapEmpty()
                .onComplete(started);
    }

    public static void main(String[] args) {
        VertxOptions options = new VertxOptions();
        Vertx vertx = Vertx.vertx(options);
        vertx.deployVerticle(Main.class.getName(), new DeploymentOptions().setInstances(options.getEventLoopPoolSize()))
                .onFailure(e -> {
                    e.printStackTrace();
                    System.exit(1);
                });
    }
}
