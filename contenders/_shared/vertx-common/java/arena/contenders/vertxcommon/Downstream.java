package arena.contenders.vertxcommon;

import java.net.URI;
import java.util.concurrent.TimeoutException;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.handler.HttpException;

/**
 * Where /data/{id} fetches from, parsed once from DOWNSTREAM_URL, and study 002's fetch itself:
 * the same in both Vert.x contenders, which differ only in who calls it (the HTTP verticle, or a
 * service verticle behind the EventBus) and with which WebClient.
 */
public record Downstream(String host, int port, boolean ssl, String basePath) {

    /** The contract's limit for the downstream: connect and answer within 2 s. */
    public static final int TIMEOUT_MS = 2_000;

    public static Downstream parse(String url) {
        URI uri = URI.create(url);
        boolean ssl = "https".equalsIgnoreCase(uri.getScheme());
        if (!ssl && !"http".equalsIgnoreCase(uri.getScheme())) {
            throw new IllegalArgumentException("DOWNSTREAM_URL must be http(s)://host[:port][/path], got " + url);
        }
        int port = uri.getPort() != -1 ? uri.getPort() : ssl ? 443 : 80;
        String path = uri.getRawPath() == null ? "" : uri.getRawPath().replaceAll("/+$", "");
        return new Downstream(uri.getHost(), port, ssl, path);
    }

    /** The request URI of data{id}.json on the downstream. */
    String dataUri(int id) {
        return basePath + "/resources/data" + id + ".json";
    }

    /**
     * data{id}.json decoded into {@link Data}, or an {@link HttpException} whose status is the
     * answer's: 404 when the downstream has none, 502 for anything else that goes wrong.
     */
    public Future<Data> fetch(WebClient client, int id) {
        return client.get(port, host, dataUri(id))
                .ssl(ssl)
                .timeout(TIMEOUT_MS)
                .send()
                .transform(sent -> sent.succeeded()
                        ? decode(id, sent.result())
                        : Future.failedFuture(new HttpException(502, "downstream failed: " + describe(sent.cause()))));
    }

    private static Future<Data> decode(int id, HttpResponse<Buffer> answer) {
        int status = answer.statusCode();
        if (status == 404) {
            return Future.failedFuture(new HttpException(404, "downstream has no data" + id + ".json"));
        }
        if (status < 200 || status > 299) {
            return Future.failedFuture(new HttpException(502, "downstream answered " + status));
        }
        Data data;
        try {
            data = answer.bodyAsJson(Data.class); // Vert.x's Json codec: Jackson databind
        } catch (DecodeException | IllegalArgumentException e) {
            return Future.failedFuture(new HttpException(502, "downstream body is not a Data record"));
        }
        if (data == null) {
            return Future.failedFuture(new HttpException(502, "downstream sent no body"));
        }
        return Future.succeededFuture(data);
    }

    /** A short reason for an error body. */
    public static String describe(Throwable e) {
        if (e instanceof TimeoutException) {
            return "no answer within " + TIMEOUT_MS / 1000 + " s";
        }
        String message = e.getMessage();
        return message == null || message.isBlank() ? e.getClass().getSimpleName() : message;
    }
}
