package hello;

import io.helidon.webserver.WebServer;

/** Helidon SE's quickstart: a WebServer with one route, every request on a virtual thread. */
public class Main {

    public static void main(String[] args) {
        WebServer.builder()
                .host("127.0.0.1")
                .port(Integer.parseInt(System.getenv("PORT")))
                .routing(routing -> routing.get("/instant", (req, res) -> res.send("INSTANT")))
                .build()
                .start();
    }
}
