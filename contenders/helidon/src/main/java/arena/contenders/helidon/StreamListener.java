package arena.contenders.helidon;

import java.util.Optional;

import io.helidon.common.buffers.BufferData;

import io.helidon.http.Headers;
import io.helidon.http.HttpPrologue;
import io.helidon.websocket.WsListener;
import io.helidon.websocket.WsSession;
import io.helidon.websocket.WsUpgradeException;

/**
 * /stream (study 003) as a Helidon SE {@link WsListener}, one instance per connection (the route
 * takes a supplier; Helidon calls {@link #onHttpUpgrade} and then the session methods on the same
 * instance). A bad rate or size rejects the upgrade with {@link WsUpgradeException}: Helidon then
 * routes the request as plain HTTP, and the {@code GET /stream} route answers the 400.
 * What the client sends is ignored.
 */
final class StreamListener implements WsListener {

    private final boolean backpressure;
    private final StreamStats stats;

    private StreamParams params;
    private StreamClient client;

    StreamListener(boolean backpressure, StreamStats stats) {
        this.backpressure = backpressure;
        this.stats = stats;
    }

    @Override
    public Optional<Headers> onHttpUpgrade(HttpPrologue prologue, Headers headers) throws WsUpgradeException {
        try {
            params = StreamParams.parse(prologue.query());
        } catch (StreamParams.Invalid e) {
            throw new WsUpgradeException(e.getMessage());
        }
        return Optional.empty();
    }

    @Override
    public void onOpen(WsSession session) {
        StreamClient opened = new StreamClient(session, params, backpressure, stats);
        client = opened;
        opened.start();
        // Helidon 4.3.1 calls no listener method when the peer drops the TCP connection
        // (helidon-io/helidon#11825): the connection's thread, this one, just ends. So a virtual
        // thread waits for it to end and stops the client then.
        Thread connection = Thread.currentThread();
        Thread.ofVirtual().name("stream-cleanup").start(() -> {
            try {
                connection.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            opened.stop();
        });
    }

    @Override
    public void onPing(WsSession session, BufferData buffer) {
        byte[] data = new byte[buffer.available()];
        buffer.read(data);
        if (client != null) {
            client.pong(data);
        }
    }

    @Override
    public void onClose(WsSession session, int status, String reason) {
        // The client's close frame: Helidon answers it with its own when this returns.
        if (client != null) {
            client.stop();
        }
    }

    @Override
    public void onError(WsSession session, Throwable t) {
        if (client != null) {
            client.stop();
        }
    }
}
