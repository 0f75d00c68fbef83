package arena.undertow;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import com.fasterxml.jackson.core.JsonProcessingException;

import io.undertow.server.HttpHandler;
import io.undertow.server.HttpServerExchange;
import io.undertow.util.PathTemplateMatch;
import io.undertow.util.StatusCodes;

/**
 * /data/{id}: the id is checked on the IO thread, then the call is dispatched to the worker
 * pool, where one shared blocking JDK HttpClient fetches the downstream document. Jackson
 * decodes it into {@link Data} and encodes the record back.
 */
final class DataEndpoint implements HttpHandler {

    static final Duration TIMEOUT = Duration.ofSeconds(2);

    private final String base;
    // One shared client: it pools keep-alive connections. HTTP/1.1 so it does not try an h2c
    // upgrade on every new connection to a server that only speaks HTTP/1.1.
    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(TIMEOUT)
            .build();

    DataEndpoint(URI downstream) {
        String url = downstream.toString();
        this.base = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    }

    @Override
    public void handleRequest(HttpServerExchange exchange) {
        String raw = exchange.getAttachment(PathTemplateMatch.ATTACHMENT_KEY).getParameters().get("id");
        if (raw == null || raw.isEmpty()) { // "/data/": no id at all, so no such route
            Endpoints.error(exchange, StatusCodes.NOT_FOUND, "no such path: " + exchange.getRequestPath());
            return;
        }
        int id;
        try {
            id = Integer.parseInt(raw);
        } catch (NumberFormatException e) {
            Endpoints.error(exchange, StatusCodes.BAD_REQUEST, "id must be an integer, got '" + raw + "'");
            return;
        }
        exchange.dispatch(worker -> fetch(worker, id));
    }

    /** Runs on a worker thread and blocks it for the whole downstream call. */
    private void fetch(HttpServerExchange exchange, int id) throws InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/resources/data" + id + ".json"))
                .timeout(TIMEOUT)
                .header("Accept", "application/json")
                .GET()
                .build();
        HttpResponse<byte[]> response;
        try {
            response = client.send(request, HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) { // refused, reset, or no answer within 2 s (HttpTimeoutException)
            Endpoints.error(exchange, StatusCodes.BAD_GATEWAY, "downstream failed: " + e);
            return;
        }
        int status = response.statusCode();
        if (status == 404) {
            Endpoints.error(exchange, StatusCodes.NOT_FOUND, "no data " + id);
            return;
        }
        if (status < 200 || status > 299) {
            Endpoints.error(exchange, StatusCodes.BAD_GATEWAY, "downstream answered " + status);
            return;
        }
        byte[] body;
        try {
            Data data = Endpoints.MAPPER.readValue(response.body(), Data.class);
            body = Endpoints.MAPPER.writeValueAsBytes(data);
        } catch (IOException e) {
            Endpoints.error(exchange, StatusCodes.BAD_GATEWAY, "downstream sent unreadable data: "
                    + (e instanceof JsonProcessingException json ? json.getOriginalMessage() : e.getMessage()));
            return;
        }
        Endpoints.json(exchange, StatusCodes.OK, body);
    }
}
