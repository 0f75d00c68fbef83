package hello;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.undertow.Handlers;
import io.undertow.Undertow;
import io.undertow.server.HttpServerExchange;
import io.undertow.server.HttpHandler;
import io.undertow.util.Headers;

/**
 * The floor of the undertow contender on /data/{id}: Undertow's hello world plus the two files
 * from memory and a fetch from itself with the blocking JDK HttpClient on a worker, Jackson into
 * a record and back.
 */
public class Main {

    public record Data(int id, String value, boolean active, List<String> props) {
    }

    static final ObjectMapper MAPPER = new ObjectMapper();
    // The JDK docs' first example pins HTTP/1.1; the default (HTTP/2) sends an h2c upgrade with every request.
    static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    static int port;

    public static void main(String[] args) {
        port = Integer.parseInt(System.getenv("PORT"));
        Undertow.builder()
                .addHttpListener(port, "127.0.0.1")
                .setHandler(Handlers.path()
                        .addExactPath("/instant", exchange -> {
                            exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, "text/plain");
                            exchange.getResponseSender().send("INSTANT");
                        })
                        // From memory on the IO thread: the docs' ResourceHandler moves each file to the
                        // worker pool, where every worker already blocks in /data waiting for one (0 req/s).
                        .addExactPath("/resources/data1.json", json(classpath("/resources/data1.json")))
                        .addExactPath("/resources/data2.json", json(classpath("/resources/data2.json")))
                        .addPrefixPath("/data", Main::data))
                .build()
                .start();
    }

    static HttpHandler json(byte[] body) {
        ByteBuffer buffer = ByteBuffer.wrap(body);
        return exchange -> {
            exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, "application/json");
            exchange.getResponseSender().send(buffer.duplicate());
        };
    }

    static byte[] classpath(String name) {
        try (InputStream in = Main.class.getResourceAsStream(name)) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Blocks on the HTTP client, so it leaves the IO thread for a worker first. */
    static void data(HttpServerExchange exchange) throws InterruptedException {
        if (exchange.isInIoThread()) {
            exchange.dispatch(Main::data);
            return;
        }
        int id;
        try {
            String rest = exchange.getRelativePath(); // "/2" for /data/2
            id = Integer.parseInt(rest.substring(rest.indexOf('/') + 1));
        } catch (NumberFormatException e) {
            exchange.setStatusCode(400).endExchange();
            return;
        }
        HttpRequest request = HttpRequest.newBuilder()
                .uri(URI.create("http://127.0.0.1:" + port + "/resources/data" + id + ".json"))
                .build();
        try {
            HttpResponse<String> response = CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                throw new IOException("downstream answered " + response.statusCode());
            }
            Data data = MAPPER.readValue(response.body(), Data.class);
            exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, "application/json");
            exchange.getResponseSender().send(MAPPER.writeValueAsString(data));
        } catch (IOException e) {
            exchange.setStatusCode(502).endExchange();
        }
    }
}
