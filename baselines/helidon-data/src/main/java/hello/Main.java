package hello;

import java.util.List;

import io.helidon.webclient.api.WebClient;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.staticcontent.StaticContentFeature;

/**
 * Helidon SE's quickstart with what its docs show for study 002's path: the floor of the helidon
 * contender on /data/{id}. Static content from the class path on /resources, and /data/{id}
 * fetching /resources/data{id}.json from itself with one default WebClient, Helidon's Jackson
 * media support mapping it to a record and back. Every request runs on a virtual thread.
 */
public class Main {

    public record Data(int id, String value, boolean active, List<String> props) {
    }

    public static void main(String[] args) {
        int port = Integer.parseInt(System.getenv("PORT"));
        WebClient client = WebClient.builder()
                .baseUri("http://127.0.0.1:" + port)
                .build();
        WebServer.builder()
                .host("127.0.0.1")
                .port(port)
                .addFeature(StaticContentFeature.builder()
                        .addClasspath(cl -> cl.location("web").context("/resources"))
                        .build())
                .routing(routing -> routing
                        .get("/instant", (req, res) -> res.send("INSTANT"))
                        .get("/data/{id}", (req, res) -> {
                            String id = req.path().pathParameters().get("id");
                            Data data;
                            try {
                                data = client.get("/resources/data" + id + ".json").requestEntity(Data.class);
                            } catch (RuntimeException e) {
                                res.status(502).send();
                                return;
                            }
                            res.send(data);
                        }))
                .build()
                .start();
    }
}
