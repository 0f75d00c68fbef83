package arena.contenders.ktor

import io.ktor.server.routing.Route
import io.ktor.server.websocket.DefaultWebSocketServerSession
import io.ktor.server.websocket.webSocket
import io.ktor.websocket.CloseReason
import io.ktor.websocket.Frame
import io.ktor.websocket.close
import io.ktor.websocket.readText
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Job
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.cancel
import kotlinx.coroutines.launch
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.put
import java.util.concurrent.ConcurrentHashMap

/**
 * /chat (study 000) on Ktor's coroutine WebSockets: each connection is a coroutine reading its
 * `incoming` channel; each member has an outbox, a bounded Channel (4,096) that a writer
 * coroutine of its own drains into the socket (up to 100 frames, then flush() awaited), so a
 * broadcast never waits for a slow member, and one whose outbox is full is closed 1013.
 */
class Chat {

    /** A joined connection: its name, its room, its outbox and the coroutine that drains it. */
    private class Member(val name: String, val room: String, val session: DefaultWebSocketServerSession) {
        val outbox = Channel<String>(OUTBOX)
        lateinit var writer: Job
    }

    private val names = ConcurrentHashMap<String, Member>()
    private val rooms = ConcurrentHashMap<String, MutableSet<Member>>()

    fun routes(route: Route) {
        route.webSocket("/chat") { serve(this) }
    }

    private suspend fun serve(session: DefaultWebSocketServerSession) {
        var member: Member? = null
        try {
            for (frame in session.incoming) {
                val text = when (frame) {
                    is Frame.Text -> frame.readText()
                    else -> {
                        session.send(Frame.Text(system("binary frames are not chat messages")))
                        continue
                    }
                }
                val joined = member
                if (joined != null) {
                    say(session, joined, text)
                    continue
                }
                val fields = fieldsOf(text)
                val name = fields?.get("name")
                val room = fields?.get("chat")
                if (name == null || room == null || fields?.containsKey("message") == true) {
                    session.send(Frame.Text(system("join first with {\"name\":…,\"chat\":…}")))
                    continue
                }
                member = join(session, name, room)
                if (member == null) {
                    // A name already taken: a system frame, then a close 1008 behind it.
                    session.send(Frame.Text(system("the name '$name' is taken")))
                    session.close(CloseReason(CloseReason.Codes.VIOLATED_POLICY, "name taken"))
                    return
                }
            }
        } catch (e: CancellationException) {
            throw e
        } catch (e: Exception) {
            // The connection failed (a protocol error Ktor has closed, a reset): the member leaves.
        } finally {
            member?.let { leave(it) }
        }
    }

    /** The first frame {"name","chat"} joins; null when the name is taken. Joining sends nothing back. */
    private fun join(session: DefaultWebSocketServerSession, name: String, room: String): Member? {
        val member = Member(name, room, session)
        if (names.putIfAbsent(name, member) != null) {
            return null
        }
        // Ktor's outgoing channel is unbounded and send() returns at once; flush() suspends until
        // what was sent is written to the connection, so the outbox is where a slow member's
        // frames wait, and it fills.
        member.writer = session.launch(start = CoroutineStart.UNDISPATCHED) {
            untilClosed {
                for (first in member.outbox) {
                    session.outgoing.send(Frame.Text(first))
                    var batch = 1
                    while (batch < FLUSH_EVERY) {
                        val more = member.outbox.tryReceive().getOrNull() ?: break
                        session.outgoing.send(Frame.Text(more))
                        batch++
                    }
                    session.flush()
                }
            }
        }
        rooms.compute(room) { _, members -> (members ?: ConcurrentHashMap.newKeySet()).apply { add(member) } }
        return member
    }

    /** A message: encoded once, then queued in every member's outbox in the room, in order. */
    private suspend fun say(session: DefaultWebSocketServerSession, member: Member, text: String) {
        val message = fieldsOf(text)?.get("message")
        if (message == null) {
            session.send(Frame.Text(system("a message is {\"name\":…,\"chat\":…,\"message\":…}")))
            return
        }
        val encoded = buildJsonObject {
            put("name", member.name)
            put("chat", member.room)
            put("message", message)
        }.toString()
        for (other in rooms[member.room].orEmpty()) {
            if (other.outbox.trySend(encoded).isFailure) {
                tooSlow(other)
            }
        }
    }

    /** A member whose outbox is full leaves its room and is closed 1013; nobody waits for it. */
    private fun tooSlow(member: Member) {
        if (!leave(member)) return
        member.session.launch {
            withTimeoutOrNull(CLOSE_WAIT_MS) {
                member.session.close(CloseReason(CloseReason.Codes.TRY_AGAIN_LATER, "too slow: $OUTBOX messages unsent"))
            } ?: member.session.cancel()
        }
    }

    /** Frees the name at once and leaves the room; false when the member had already left. */
    private fun leave(member: Member): Boolean {
        if (!names.remove(member.name, member)) return false
        rooms.computeIfPresent(member.room) { _, members -> members.apply { remove(member) }.ifEmpty { null } }
        member.outbox.cancel()
        member.writer.cancel()
        return true
    }

    private fun system(message: String): String =
        buildJsonObject {
            put("type", "system")
            put("message", message)
        }.toString()

    /** The frame's string members, or null when it is not a JSON object. */
    private fun fieldsOf(text: String): Map<String, String>? {
        val obj = try {
            Json.parseToJsonElement(text) as? JsonObject
        } catch (e: IllegalArgumentException) { // SerializationException is one
            null
        } ?: return null
        return obj.mapNotNull { (key, value) ->
            (value as? JsonPrimitive)?.takeIf { it.isString }?.let { key to it.content }
        }.toMap()
    }

    private companion object {
        /** Unsent frames a member may hold before it is closed 1013 (the lab's reference server's 4,096). */
        const val OUTBOX = 4096

        /** Frames a writer sends before it awaits their flush: at most this many in flight per member. */
        const val FLUSH_EVERY = 100

        /** How long a slow member's close frame may wait behind its unsent frames before the connection is cut. */
        const val CLOSE_WAIT_MS = 1_000L
    }
}
