package arena.contenders.ktor

import io.ktor.http.ContentType
import io.ktor.http.HttpStatusCode
import io.ktor.serialization.kotlinx.json.json
import io.ktor.server.application.Application
import io.ktor.server.application.ApplicationCall
import io.ktor.server.application.ApplicationStopped
import io.ktor.server.application.install
import io.ktor.server.application.log
import io.ktor.server.http.content.staticResources
import io.ktor.server.plugins.BadRequestException
import io.ktor.server.plugins.NotFoundException
import io.ktor.server.plugins.contentnegotiation.ContentNegotiation
import io.ktor.server.plugins.statuspages.StatusPages
import io.ktor.server.response.respond
import io.ktor.server.response.respondText
import io.ktor.server.routing.Route
import io.ktor.server.routing.get
import io.ktor.server.routing.routing
import io.ktor.server.websocket.WebSockets
import kotlinx.coroutines.channels.ClosedReceiveChannelException
import kotlinx.coroutines.channels.ClosedSendChannelException
import kotlinx.coroutines.delay
import kotlinx.serialization.Serializable
import kotlinx.serialization.json.Json
import java.io.IOException

/** A request the server refuses: answered with [status] and the contract's JSON error body. */
class HttpError(val status: HttpStatusCode, override val message: String) : RuntimeException(message)

@Serializable
data class ErrorBody(val error: String)

/** Study 002's record: what /data/{id} and /db/{id} decode and encode. */
@Serializable
data class Data(val id: Int, val value: String, val active: Boolean, val props: List<String>)

suspend fun ApplicationCall.respondError(status: HttpStatusCode, message: String) {
    respondText(Json.encodeToString(ErrorBody.serializer(), ErrorBody(message)), ContentType.Application.Json, status)
}

/** The largest frame or message /chat and /stream take from a client (64 KiB: close 1009 beyond). */
const val MAX_MESSAGE = 64L * 1024

fun Application.module(settings: Settings) {
    // kotlinx.serialization, Ktor's docs' default for JSON.
    install(ContentNegotiation) { json() }
    install(WebSockets) {
        // A message over 64 KiB, in one frame or reassembled from fragments, is closed 1009.
        // No pings from the server: Ktor's default, and the contract's /stream sends nothing else.
        maxFrameSize = MAX_MESSAGE
    }
    install(ClientMasks)
    install(StatusPages) {
        exception<HttpError> { call, e -> call.respondError(e.status, e.message) }
        // Ktor's own refusals (e.g. a static path that climbs out of /resources/) keep their status.
        exception<BadRequestException> { call, e -> call.respondError(HttpStatusCode.BadRequest, e.message ?: "bad request") }
        exception<NotFoundException> { call, e -> call.respondError(HttpStatusCode.NotFound, e.message ?: "not found") }
        exception<Throwable> { call, e ->
            call.application.log.error("ktor: ${call.request.local.uri} failed", e)
            call.respondError(HttpStatusCode.InternalServerError, "${e.javaClass.simpleName}: ${e.message}")
        }
        status(HttpStatusCode.NotFound) { call, _ -> call.respondError(HttpStatusCode.NotFound, "no such path") }
        status(HttpStatusCode.MethodNotAllowed) { call, _ ->
            call.respondError(HttpStatusCode.MethodNotAllowed, "method not allowed")
        }
    }

    val downstream = Downstream(settings.downstream)
    val database = Database.from(settings)
    val chat = Chat()
    val stream = Stream(settings.backpressure)
    monitor.subscribe(ApplicationStopped) {
        downstream.close()
        database.close()
    }

    routing {
        probes()
        waits()
        staticResources("/resources", "resources")
        get("/data/{id}") {
            val id = parseInt32(call.parameters["id"], "id")
            call.respond(downstream.fetch(id))
        }
        chat.routes(this)
        stream.routes(this)
        database.routes(this)
    }
    log.info("ktor: listening on ${settings.host}:${settings.port}, downstream ${settings.downstream}, " +
        "BACKPRESSURE=${if (settings.backpressure) "on" else "off"}, DB_POOL=${settings.dbPool}")
}

private fun Route.probes() {
    val up = """{"status":"UP"}"""
    get("/actuator/health/liveness") { call.respondText(up, ContentType.Application.Json) }
    get("/actuator/health/readiness") { call.respondText(up, ContentType.Application.Json) }
}

/** /instant, and the two waits: delay() suspends the call's coroutine; no thread waits. */
private fun Route.waits() {
    get("/instant") { call.respondText("INSTANT", ContentType.Text.Plain) }
    get("/delayed") {
        delay(parseMillis(call.request.queryParameters["ms"], 10_000).toLong())
        call.respondText("DELAYED", ContentType.Text.Plain)
    }
    get("/sleep") {
        delay(parseMillis(call.request.queryParameters["ms"], 100).toLong())
        call.respondText("SLEPT", ContentType.Text.Plain)
    }
}

/** ms as the contract takes it: absent is [default]; else ASCII digits only, 0..60000. */
fun parseMillis(raw: String?, default: Int?): Int {
    if (raw == null) {
        return default ?: throw HttpError(HttpStatusCode.BadRequest, "ms is required")
    }
    if (raw.isEmpty() || raw.length > 5 || !raw.all { it in '0'..'9' }) {
        throw HttpError(HttpStatusCode.BadRequest, "ms must be an integer in 0..60000, got '$raw'")
    }
    return raw.toInt().takeIf { it <= 60_000 }
        ?: throw HttpError(HttpStatusCode.BadRequest, "ms must be an integer in 0..60000, got '$raw'")
}

/** A path's integer: an optional minus and ASCII digits that fit 32 bits (Kotlin's own parser takes any Unicode digit). */
fun parseInt32(raw: String?, what: String): Int {
    val digits = raw?.removePrefix("-")
    if (raw == null || digits.isNullOrEmpty() || digits.length > 10 || !digits.all { it in '0'..'9' }) {
        throw HttpError(HttpStatusCode.BadRequest, "$what must be an integer, got '$raw'")
    }
    return raw.toLongOrNull()?.takeIf { it in Int.MIN_VALUE..Int.MAX_VALUE }?.toInt()
        ?: throw HttpError(HttpStatusCode.BadRequest, "$what must be a 32-bit integer, got '$raw'")
}

/**
 * Runs a WebSocket's writer until the connection goes: a send or flush on a closed session
 * ends it quietly instead of failing the session's scope (cancellation still propagates).
 */
suspend fun untilClosed(block: suspend () -> Unit) {
    try {
        block()
    } catch (closed: ClosedSendChannelException) {
        return
    } catch (closed: ClosedReceiveChannelException) {
        return
    } catch (gone: IOException) {
        return
    }
}
