package arena.contenders.vertxbus;

import java.util.concurrent.TimeoutException;

import io.vertx.core.AbstractVerticle;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;

/**
 * Does the work behind /instant, /delayed, /sleep and /data/{id}: consumers on the local EventBus
 * that wait with {@code vertx.setTimer}, call the downstream with the non-blocking WebClient,
 * build the reply and send it back. It also runs /stream's generators ({@link StreamService}). Deployed once per event loop; the EventBus spreads the
 * requests over the instances round-robin.
 */
public class ServiceVerticle extends AbstractVerticle {

    /** The contract's limit for the downstream: connect and answer within 2 s. */
    static final int DOWNSTREAM_TIMEOUT_MS = 2_000;
    /** Vert.x's default HTTP/1 pool per client, kept for each instance of the shared client. */
    static final int POOL_PER_INSTANCE = new WebClientOptions().getMaxPoolSize();

    private Downstream downstream;
    private WebClient client;

    @Override
    public void start() {
        downstream = Downstream.parse(config().getString("downstream"));
        // The EventBus hands successive requests to different instances, so the instances share
        // one client (Vert.x's shared client, by name): its keep-alive connections are reused
        // whichever instance gets the request. Its pool is as large as the instances' pools
        // would be together (the vertx sibling has one default-sized client per instance).
        client = WebClient.create(vertx, new WebClientOptions()
                .setShared(true)
                .setName("arena-downstream")
                .setMaxPoolSize(POOL_PER_INSTANCE * config().getInteger("instances"))
                .setKeepAlive(true)
                .setConnectTimeout(DOWNSTREAM_TIMEOUT_MS));

        // On the local (non-clustered) bus a consumer is registered as soon as it is created.
        EventBus bus = vertx.eventBus();
        bus.<Void>consumer(Addresses.INSTANT, msg -> msg.reply("INSTANT"));
        bus.<JsonObject>consumer(Addresses.DELAYED, msg -> replyAfter(msg, "DELAYED"));
        bus.<JsonObject>consumer(Addresses.SLEEP, msg -> replyAfter(msg, "SLEPT"));
        bus.<JsonObject>consumer(Addresses.DATA, this::data);
        // Study 003's /stream generators, on this instance's event loop.
        StreamService streams = new StreamService(vertx);
        bus.<JsonObject>consumer(Addresses.STREAM_OPEN, streams::open);
        bus.<Void>consumer(Addresses.STREAM_STATS, streams::stats);
    }

    /** A timer on this verticle's event loop; the HTTP verticle has already checked ms. */
    private void replyAfter(Message<JsonObject> msg, String body) {
        long ms = msg.body().getLong("ms");
        if (ms == 0) {
            msg.reply(body); // setTimer refuses delays under 1 ms
            return;
        }
        vertx.setTimer(ms, id -> msg.reply(body));
    }

    /** /data/{id} (study 002): fetch, decode into {@link Data}, encode it back as the reply. */
    private void data(Message<JsonObject> msg) {
        int id = msg.body().getInteger("id");
        client.get(downstream.port(), downstream.host(), downstream.dataUri(id))
                .ssl(downstream.ssl())
                .timeout(DOWNSTREAM_TIMEOUT_MS)
                .send()
                .onSuccess(answer -> answer(msg, id, answer))
                .onFailure(e -> msg.fail(502, "downstream failed: " + describe(e)));
    }

    private static void answer(Message<JsonObject> msg, int id, HttpResponse<Buffer> answer) {
        int status = answer.statusCode();
        if (status == 404) {
            msg.fail(404, "downstream has no data" + id + ".json");
            return;
        }
        if (status < 200 || status > 299) {
            msg.fail(502, "downstream answered " + status);
            return;
        }
        Data data;
        try {
            data = answer.bodyAsJson(Data.class); // Vert.x's Json codec: Jackson databind
        } catch (DecodeException | IllegalArgumentException e) {
            msg.fail(502, "downstream body is not a Data record");
            return;
        }
        if (data == null) {
            msg.fail(502, "downstream sent no body");
            return;
        }
        msg.reply(Json.encodeToBuffer(data));
    }

    private static String describe(Throwable e) {
        if (e instanceof TimeoutException) {
            return "no answer within " + DOWNSTREAM_TIMEOUT_MS / 1000 + " s";
        }
        String message = e.getMessage();
        return message == null || message.isBlank() ? e.getClass().getSimpleName() : message;
    }
}
