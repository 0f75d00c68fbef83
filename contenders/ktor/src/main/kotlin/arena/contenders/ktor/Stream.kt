package arena.contenders.ktor

import io.ktor.http.ContentType
import io.ktor.http.HttpStatusCode
import io.ktor.http.Parameters
import io.ktor.server.routing.Route
import io.ktor.server.routing.RouteSelector
import io.ktor.server.routing.RouteSelectorEvaluation
import io.ktor.server.routing.RoutingResolveContext
import io.ktor.server.routing.get
import io.ktor.server.routing.route
import io.ktor.server.response.respondText
import io.ktor.server.websocket.DefaultWebSocketServerSession
import io.ktor.server.websocket.webSocket
import io.ktor.websocket.Frame
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import kotlinx.coroutines.yield
import java.time.Instant
import java.util.concurrent.atomic.AtomicLong
import java.util.concurrent.atomic.LongAdder

/** /stream's totals since start, over all clients. */
class StreamStats {
    val clients = AtomicLong()
    val generated = LongAdder()
    val sent = LongAdder()
    val dropped = LongAdder()

    fun json(): String =
        """{"clients":${clients.get()},"generated":${generated.sum()},"sent":${sent.sum()},"dropped":${dropped.sum()}}"""
}

/** A /stream request's rate and size, checked before the upgrade. */
data class StreamParams(val rate: Int, val size: Int) {
    companion object {
        /** The parameters, or the reason they are refused. */
        fun parse(query: Parameters): Result<StreamParams> {
            val rate = bounded(query["rate"], 0, 0, 1_000_000) ?: return refused("rate must be an integer in 0..1000000")
            val size = bounded(query["size"], 250, 16, 65_536) ?: return refused("size must be an integer in 16..65536")
            return Result.success(StreamParams(rate, size))
        }

        private fun bounded(raw: String?, default: Int, min: Int, max: Int): Int? = when {
            raw == null -> default
            raw.isEmpty() || raw.length > 7 || !raw.all { it in '0'..'9' } -> null
            else -> raw.toInt().takeIf { it in min..max }
        }

        private fun refused(why: String): Result<StreamParams> = Result.failure(HttpError(HttpStatusCode.BadRequest, why))
    }
}

/** Lets the WebSocket route match only when rate and size pass, so a bad one is refused before any upgrade. */
private object ValidStreamParams : RouteSelector() {
    override suspend fun evaluate(context: RoutingResolveContext, segmentIndex: Int): RouteSelectorEvaluation =
        if (StreamParams.parse(context.call.request.queryParameters).isSuccess) {
            RouteSelectorEvaluation.Constant
        } else {
            RouteSelectorEvaluation.FailedParameter
        }

    override fun toString(): String = "(valid rate and size)"
}

/** Always matches, at the lowest quality: the route taken only where no other one matches. */
private object Otherwise : RouteSelector() {
    override suspend fun evaluate(context: RoutingResolveContext, segmentIndex: Int): RouteSelectorEvaluation =
        RouteSelectorEvaluation.Missing

    override fun toString(): String = "(otherwise)"
}

/**
 * /stream (study 003). Per client, a generator coroutine makes each message when it is due.
 * Ktor's WebSocket session queues outgoing frames in an unbounded channel by default and its
 * send() returns at once; what tells that frames went out is the session's flush(), which
 * suspends until every frame sent before it is written to the connection.
 *
 * BACKPRESSURE=on: the generator queues into the client's own deque of at most 5,000 (a full
 * one drops its oldest, counted); a sender coroutine takes up to 100 messages, sends them and
 * awaits flush() before it takes more, so at most 100 are in flight. BACKPRESSURE=off: every
 * message is sent (handed to Ktor's unbounded outgoing channel) as it is made.
 */
class Stream(private val backpressure: Boolean) {

    private val stats = StreamStats()

    fun routes(route: Route) {
        route.get("/stream/stats") { call.respondText(stats.json(), ContentType.Application.Json) }
        route.route("/stream") {
            createChild(ValidStreamParams).webSocket {
                serve(this, StreamParams.parse(call.request.queryParameters).getOrThrow())
            }
            // Reached when the parameters fail (400 with the reason), or by a plain GET.
            createChild(Otherwise).get {
                StreamParams.parse(call.request.queryParameters).getOrThrow()
                throw HttpError(HttpStatusCode.BadRequest, "/stream is a WebSocket: send Upgrade: websocket")
            }
        }
    }

    private suspend fun serve(session: DefaultWebSocketServerSession, params: StreamParams) {
        stats.clients.incrementAndGet()
        val queue = Outbox()
        val generator = session.launch {
            untilClosed {
                generate(params) { message ->
                    if (backpressure) queue.push(message) else sendAtOnce(session, message)
                }
            }
        }
        val sender = if (backpressure) session.launch { untilClosed { drain(session, queue) } } else null
        try {
            // What the client sends is read and ignored, until it closes.
            for (ignored in session.incoming) {
                continue
            }
        } catch (e: CancellationException) {
            throw e
        } catch (e: Exception) {
            // The connection failed (a protocol error Ktor has closed, a reset): the stream ends.
        } finally {
            withContext(NonCancellable) {
                generator.cancelAndJoin()
                sender?.cancelAndJoin()
                queue.clear() // freed, not counted as dropped
                stats.clients.decrementAndGet()
            }
        }
    }

    /** Makes each message when it is due: R a second in ticks of 10 ms, or batches of 100 as fast as it can. */
    private suspend fun generate(params: StreamParams, emit: suspend (String) -> Unit) {
        val messages = Messages(params.size)
        if (params.rate == 0) {
            while (true) {
                repeat(BATCH) {
                    stats.generated.increment()
                    emit(messages.next())
                }
                yield() // a new dispatch: the sender and other clients run between batches
            }
        } else {
            val start = System.nanoTime()
            var made = 0L
            while (true) {
                delay(TICK_MS)
                val due = params.rate.toLong() * (System.nanoTime() - start) / 1_000_000_000L
                while (made < due) {
                    stats.generated.increment()
                    emit(messages.next())
                    made++
                }
            }
        }
    }

    /** BACKPRESSURE=off: handed to Ktor's outgoing channel at once, and counted sent. */
    private suspend fun sendAtOnce(session: DefaultWebSocketServerSession, message: String) {
        val frame = Frame.Text(message)
        if (session.outgoing.trySend(frame).isFailure) {
            session.outgoing.send(frame) // a bounded channel would suspend here; Ktor's default never does
        }
        stats.sent.increment()
    }

    /** BACKPRESSURE=on: up to 100 messages sent, then flush() awaited: at most 100 in flight. */
    private suspend fun drain(session: DefaultWebSocketServerSession, queue: Outbox) {
        while (true) {
            var message: String? = queue.take()
            var inFlight = 0
            while (message != null) {
                stats.sent.increment()
                session.outgoing.send(Frame.Text(message))
                inFlight++
                message = if (inFlight < IN_FLIGHT) queue.poll() else null
            }
            session.flush()
        }
    }

    /** A client's queue: a deque under its own lock, and a conflated channel that wakes the sender. */
    private inner class Outbox {
        private val waiting = ArrayDeque<String>()
        private val wake = Channel<Unit>(Channel.CONFLATED)

        /** Queues a message; a full queue drops its oldest, counted. */
        fun push(message: String) {
            synchronized(waiting) {
                if (waiting.size == QUEUE) {
                    waiting.removeFirst()
                    stats.dropped.increment()
                }
                waiting.addLast(message)
            }
            wake.trySend(Unit)
        }

        fun poll(): String? = synchronized(waiting) { waiting.removeFirstOrNull() }

        suspend fun take(): String {
            while (true) {
                poll()?.let { return it }
                wake.receive()
            }
        }

        fun clear() = synchronized(waiting) { waiting.clear() }
    }

    private companion object {
        const val QUEUE = 5_000
        const val IN_FLIGHT = 100
        const val BATCH = 100
        const val TICK_MS = 10L
    }
}

/** A client's messages, each built in full when made: {"seq":n,"ts":µs,"pad":"…"}, exactly size bytes. */
private class Messages(private val size: Int) {
    private var seq = 0L

    fun next(): String {
        val now = Instant.now()
        val micros = now.epochSecond * 1_000_000L + now.nano / 1_000
        val head = "{\"seq\":${seq++},\"ts\":$micros,\"pad\":\""
        val pad = (size - head.length - 2).coerceAtLeast(0)
        return StringBuilder(head.length + pad + 2).append(head).append(PAD, 0, pad).append("\"}").toString()
    }

    private companion object {
        val PAD = "abcdefghijklmnopqrstuvwxyz".repeat(65_536 / 26 + 1)
    }
}
