package arena.contenders.ktor

import com.zaxxer.hikari.HikariDataSource
import io.ktor.http.ContentType
import io.ktor.http.HttpStatusCode
import io.ktor.server.response.respond
import io.ktor.server.response.respondText
import io.ktor.server.routing.Route
import io.ktor.server.routing.get
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.sync.Semaphore
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import java.net.URI
import java.net.URLDecoder
import java.nio.charset.StandardCharsets
import java.sql.Connection
import java.sql.SQLException

/**
 * /db (arena's own study) as Ktor's docs and project generator write database access: blocking
 * JDBC (PostgreSQL's driver) on a HikariCP pool, each query inside withContext on a dispatcher
 * for blocking work, so that the call's coroutine suspends while a thread of that dispatcher
 * blocks on the query.
 *
 * The dispatcher is Dispatchers.IO.limitedParallelism(DB_POOL), kotlinx.coroutines' advice for
 * a connection pool (a view of the IO threads as wide as the pool, not held to IO's 64). A
 * semaphore of DB_POOL permits is the wait for a connection: a call that finds every connection
 * taken suspends there (no thread held) up to 30 s, then 502. Past the semaphore, Hikari always
 * has a connection for the caller or is making one, so its own timeout (5 s) is only ever spent
 * on a database that fails: a 502 within 5 s (Hikari alone would wait its whole timeout against
 * a refused database: HikariCP issue 2254).
 */
class Database private constructor(private val hikari: HikariDataSource?, pool: Int) : AutoCloseable {

    private val slots = Semaphore(pool)
    private val blocking: CoroutineDispatcher = Dispatchers.IO.limitedParallelism(pool)

    fun routes(route: Route) {
        route.get("/db/slow") {
            val ms = parseMillis(call.request.queryParameters["ms"], null)
            query { connection ->
                connection.prepareStatement("SELECT pg_sleep(?)").use { statement ->
                    statement.setDouble(1, ms / 1000.0)
                    statement.execute()
                }
            }
            call.respondText("SLEPT", ContentType.Text.Plain)
        }
        route.get("/db/{id}") {
            val id = parseInt32(call.parameters["id"], "id")
            val row = query { connection -> row(connection, id) }
                ?: throw HttpError(HttpStatusCode.NotFound, "no row with id $id")
            call.respond(row)
        }
    }

    private fun row(connection: Connection, id: Int): Data? {
        connection.prepareStatement("SELECT id, value, active, props FROM data WHERE id = ?").use { statement ->
            statement.setInt(1, id)
            statement.executeQuery().use { rows ->
                if (!rows.next()) {
                    return null
                }
                @Suppress("UNCHECKED_CAST")
                val props = (rows.getArray("props").array as Array<String>).toList()
                return Data(rows.getInt("id"), rows.getString("value"), rows.getBoolean("active"), props)
            }
        }
    }

    /** Runs [block] on a pooled connection, on the blocking dispatcher; a failure is a 502. */
    private suspend fun <T> query(block: (Connection) -> T): T {
        val pool = hikari ?: throw HttpError(HttpStatusCode.BadGateway, "no database: DB_URL is not set")
        var acquired = false
        withTimeoutOrNull(ACQUIRE_MS) {
            slots.acquire()
            acquired = true
        }
        if (!acquired) {
            throw HttpError(HttpStatusCode.BadGateway, "no pooled connection within ${ACQUIRE_MS / 1000} s")
        }
        try {
            return withContext(blocking) {
                pool.connection.use(block)
            }
        } catch (e: SQLException) {
            throw HttpError(HttpStatusCode.BadGateway, "the database failed: ${e.message}")
        } finally {
            slots.release()
        }
    }

    override fun close() {
        hikari?.close()
    }

    companion object {
        /** The contract's longest wait for a pooled connection. */
        const val ACQUIRE_MS = 30_000L

        /** Hikari's connectionTimeout: within it, a database that is down shows. */
        const val ATTEMPT_MS = 5_000L

        fun from(settings: Settings): Database {
            val url = settings.dbUrl ?: return Database(null, settings.dbPool)
            val jdbc = JdbcUrl.parse(url)
            // The no-argument HikariDataSource starts its pool at the first getConnection: nothing
            // connects at start, and the server is ready with the database down.
            val hikari = HikariDataSource().apply {
                jdbcUrl = jdbc.url
                username = jdbc.user
                password = jdbc.password
                maximumPoolSize = settings.dbPool
                connectionTimeout = ATTEMPT_MS
                initializationFailTimeout = -1
                poolName = "arena-db"
            }
            return Database(hikari, settings.dbPool)
        }
    }
}

/** DB_URL, a libpq URI (postgres://user:password@host:port/database), as pgjdbc takes it. */
data class JdbcUrl(val url: String, val user: String?, val password: String?) {
    companion object {
        fun parse(raw: String): JdbcUrl {
            val uri = URI(raw.trim())
            require(uri.scheme == "postgres" || uri.scheme == "postgresql") {
                "DB_URL must be postgres://user:password@host:port/database, got scheme ${uri.scheme}"
            }
            val info = uri.rawUserInfo?.split(":", limit = 2)
            val database = uri.rawPath?.removePrefix("/").orEmpty()
            val query = uri.rawQuery?.let { "?$it" }.orEmpty()
            val port = if (uri.port < 0) 5432 else uri.port
            return JdbcUrl(
                "jdbc:postgresql://${uri.host ?: "localhost"}:$port/$database$query",
                info?.getOrNull(0)?.let(::decode),
                info?.getOrNull(1)?.let(::decode),
            )
        }

        private fun decode(s: String): String = URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8)
    }

    override fun toString() = "$url as $user" // never the password
}
