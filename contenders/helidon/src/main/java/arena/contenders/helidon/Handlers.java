package arena.contenders.helidon;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;

import io.helidon.common.uri.UriQuery;
import io.helidon.http.HeaderValues;
import io.helidon.http.Status;
import io.helidon.webclient.api.HttpClientResponse;
import io.helidon.webclient.api.WebClient;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

/**
 * The contract's handlers. Helidon runs every request on a virtual thread of its own, so they
 * are plain blocking code: Thread.sleep for the waits and the blocking WebClient for /data/{id}.
 * A blocked virtual thread unmounts from its carrier, so /instant and the probes stay free.
 */
final class Handlers {

    static final long MAX_MS = 60_000;

    private final WebClient downstream;

    Handlers(WebClient downstream) {
        this.downstream = downstream;
    }

    void instant(ServerRequest req, ServerResponse res) {
        text(res, "INSTANT");
    }

    void delayed(ServerRequest req, ServerResponse res) throws InterruptedException {
        wait(req, res, 10_000, "DELAYED");
    }

    void sleep(ServerRequest req, ServerResponse res) throws InterruptedException {
        wait(req, res, 100, "SLEPT");
    }

    private static void wait(ServerRequest req, ServerResponse res, long dflt, String body)
            throws InterruptedException {
        UriQuery query = req.query();
        long ms = dflt;
        if (query.contains("ms")) {
            String raw = query.get("ms");
            try {
                ms = Long.parseLong(raw);
            } catch (NumberFormatException e) {
                ms = -1;
            }
            if (ms < 0 || ms > MAX_MS) {
                Json.error(res, Status.BAD_REQUEST_400,
                        "ms must be an integer in 0.." + MAX_MS + ", got '" + raw + "'");
                return;
            }
        }
        Thread.sleep(ms);
        text(res, body);
    }

    /**
     * /data/{id} (study 002): fetch with the shared blocking WebClient, decode the JSON into
     * {@link Data} with Jackson, encode the record back.
     */
    void data(ServerRequest req, ServerResponse res) {
        String raw = req.path().pathParameters().get("id");
        int id;
        try {
            id = Integer.parseInt(raw);
        } catch (NumberFormatException e) {
            Json.error(res, Status.BAD_REQUEST_400, "id must be an integer, got '" + raw + "'");
            return;
        }
        Data data;
        try (HttpClientResponse down = downstream.get("/resources/data" + id + ".json").request()) {
            int status = down.status().code();
            if (status == Status.NOT_FOUND_404.code()) {
                down.entity().consume();
                Json.error(res, Status.NOT_FOUND_404, "downstream has no data" + id + ".json");
                return;
            }
            if (status < 200 || status > 299) {
                down.entity().consume();
                Json.error(res, Status.BAD_GATEWAY_502, "downstream answered " + status);
                return;
            }
            data = Json.MAPPER.readValue(down.as(byte[].class), Data.class);
        } catch (IOException e) {
            // Jackson: the body is not a Data record.
            Json.error(res, Status.BAD_GATEWAY_502, "downstream body is not a Data record");
            return;
        } catch (RuntimeException e) {
            // Refused connection, no answer within the 2-s timeouts, broken connection.
            Json.error(res, Status.BAD_GATEWAY_502, "downstream failed: " + describe(e));
            return;
        }
        Json.send(res, Status.OK_200, Json.bytes(data));
    }

    /**
     * GET /stream answered as plain HTTP: the WebSocket listener rejected the upgrade because of a
     * bad rate or size (400), or the request asked for no upgrade at all (426).
     */
    static void streamWithoutUpgrade(ServerRequest req, ServerResponse res) {
        try {
            StreamParams.parse(req.query());
        } catch (StreamParams.Invalid e) {
            Json.error(res, Status.BAD_REQUEST_400, e.getMessage());
            return;
        }
        res.header(HeaderValues.create("Upgrade", "websocket"));
        Json.error(res, Status.UPGRADE_REQUIRED_426, "GET /stream is a WebSocket: ask for an upgrade");
    }

    private static void text(ServerResponse res, String body) {
        res.header(HeaderValues.CONTENT_TYPE_TEXT_PLAIN);
        res.send(body);
    }

    /** A short reason for the 502 body, without a stack of wrapper exceptions. */
    private static String describe(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SocketTimeoutException) {
                return "no answer within 2 s";
            }
            if (t instanceof ConnectException) {
                return "connection refused";
            }
            if (!(t instanceof UncheckedIOException) && t.getCause() == null) {
                String message = t.getMessage();
                return message == null || message.isBlank() ? t.getClass().getSimpleName() : message;
            }
        }
        return e.getClass().getSimpleName();
    }
}
