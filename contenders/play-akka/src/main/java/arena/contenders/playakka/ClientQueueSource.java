package arena.contenders.playakka;

import akka.actor.ActorSystem;
import akka.stream.Attributes;
import akka.stream.Outlet;
import akka.stream.SourceShape;
import akka.stream.stage.AbstractOutHandler;
import akka.stream.stage.GraphStage;
import akka.stream.stage.GraphStageLogic;

/**
 * The source of one /stream client's WebSocket (study 003): a graph stage that emits the client's
 * queued messages on demand only. Its materialisation is the client: it starts the generator and
 * counts the client in {@code preStart}, and stops the generator and frees the queue in
 * {@code postStop}, which Akka runs however the stream ends (close frame, dropped connection,
 * failure).
 *
 * <p>Demand is the back-pressure: the WebSocket's stages downstream (Play's message mapping, its
 * protocol handler, Akka HTTP's framing and the TCP stage, all fused in the connection's
 * interpreter) each hold at most one message, and the TCP stage pulls only while its write buffer
 * (akka.stream.materializer.io.tcp.write-buffer-size, 16 KiB) is not full and one write is in flight
 * to the TCP connection actor, which acknowledges it once the kernel took it.
 */
final class ClientQueueSource extends GraphStage<SourceShape<String>> {

    private final Outlet<String> out = Outlet.create("ClientQueueSource.out");
    private final SourceShape<String> shape = SourceShape.of(out);

    private final StreamParams params;
    private final boolean backpressure;
    private final StreamStats stats;
    private final ActorSystem actors;

    ClientQueueSource(StreamParams params, boolean backpressure, StreamStats stats, ActorSystem actors) {
        this.params = params;
        this.backpressure = backpressure;
        this.stats = stats;
        this.actors = actors;
    }

    @Override
    public SourceShape<String> shape() {
        return shape;
    }

    @Override
    public GraphStageLogic createLogic(Attributes inheritedAttributes) {
        return new GraphStageLogic(shape) {
            private ClientQueue queue;
            private StreamGenerator generator;

            {
                setHandler(out, new AbstractOutHandler() {
                    @Override
                    public void onPull() {
                        emitNext();
                    }
                });
            }

            @Override
            public void preStart() {
                queue = new ClientQueue(backpressure, stats, createAsyncCallback(woken -> {
                    if (isAvailable(out)) {
                        emitNext();
                    }
                }));
                generator = new StreamGenerator(queue, params, actors);
                stats.clients.incrementAndGet();
                generator.start();
            }

            private void emitNext() {
                String message = queue.poll();
                if (message != null) {
                    push(out, message);
                }
            }

            @Override
            public void postStop() {
                if (queue != null) {
                    queue.close();
                    generator.stop();
                    stats.clients.decrementAndGet();
                }
            }
        };
    }
}
