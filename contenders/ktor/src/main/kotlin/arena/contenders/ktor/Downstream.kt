package arena.contenders.ktor

import io.ktor.client.HttpClient
import io.ktor.client.engine.java.Java
import io.ktor.client.plugins.HttpTimeout
import io.ktor.client.request.get
import io.ktor.client.statement.bodyAsText
import io.ktor.http.HttpStatusCode
import io.ktor.http.isSuccess
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.ensureActive
import kotlinx.serialization.json.Json

/**
 * /data/{id}'s fetch: one HttpClient for the application (Ktor's docs: a client per
 * application, not per request) on Ktor's Java engine, the JDK's java.net.http.HttpClient over
 * HTTP/1.1 (the engine's default), which keeps connections alive and pools them. The call
 * suspends until the JDK client's future completes; no thread waits for the answer.
 *
 * Not Ktor's CIO engine: CIO reuses a connection only when pipelining is on (without it, every
 * request gets a dedicated connection, closed after: verify counted 20 connections for 20
 * calls), and pipelining queues calls behind a slow answer on the same connection.
 */
class Downstream(private val base: String) : AutoCloseable {

    private val client = HttpClient(Java) {
        // Statuses are read here: a 404 is the contract's 404, any other failure a 502.
        expectSuccess = false
        install(HttpTimeout) {
            // The contract's 2 s for the whole exchange, and for the connection.
            requestTimeoutMillis = 2_000
            connectTimeoutMillis = 2_000
        }
    }

    // Strict (kotlinx's default): an unknown, missing or mistyped member is not the record.
    private val json = Json

    suspend fun fetch(id: Int): Data {
        val body = try {
            val response = client.get("$base/resources/data$id.json")
            when {
                response.status == HttpStatusCode.NotFound ->
                    throw HttpError(HttpStatusCode.NotFound, "the downstream has no record $id")
                !response.status.isSuccess() ->
                    throw HttpError(HttpStatusCode.BadGateway, "the downstream answered ${response.status.value}")
            }
            response.bodyAsText()
        } catch (e: HttpError) {
            throw e
        } catch (e: Exception) {
            // The call itself cancelled (the client went away) stays a cancellation; anything
            // else (refused, reset, the 2-s timeout) is the downstream's failure.
            currentCoroutineContext().ensureActive()
            throw HttpError(HttpStatusCode.BadGateway, "the downstream failed: ${e.javaClass.simpleName}: ${e.message}")
        }
        return try {
            json.decodeFromString(Data.serializer(), body)
        } catch (e: IllegalArgumentException) { // SerializationException is one
            throw HttpError(HttpStatusCode.BadGateway, "the downstream's body is not the record: ${e.message}")
        }
    }

    override fun close() = client.close()
}
