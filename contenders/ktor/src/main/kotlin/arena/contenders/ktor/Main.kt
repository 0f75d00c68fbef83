package arena.contenders.ktor

import io.ktor.server.engine.connector
import io.ktor.server.engine.embeddedServer
import io.ktor.server.netty.Netty
import kotlin.system.exitProcess

/** The contract's variables, read and checked once at start. */
data class Settings(
    val host: String,
    val port: Int,
    val downstream: String,
    val backpressure: Boolean,
    val dbUrl: String?,
    val dbPool: Int,
) {
    companion object {
        fun fromEnv(env: Map<String, String> = System.getenv()): Settings {
            val port = env["PORT"]?.toIntOrNull()?.takeIf { it in 1..65535 }
                ?: throw IllegalArgumentException("PORT must be a TCP port, got ${env["PORT"]}")
            // BIND_ADDRESS only in a multi-host run; loopback otherwise, as the contract asks.
            val host = env["BIND_ADDRESS"]?.takeIf { it.isNotBlank() } ?: "127.0.0.1"
            val downstream = (env["DOWNSTREAM_URL"]?.takeIf { it.isNotBlank() } ?: "http://$host:$port").trimEnd('/')
            val backpressure = when (env["BACKPRESSURE"] ?: "on") {
                "on", "" -> true
                "off" -> false
                else -> throw IllegalArgumentException("BACKPRESSURE must be on or off, got ${env["BACKPRESSURE"]}")
            }
            // HikariCP's own default (10) when the lab sets no DB_POOL.
            val pool = env["DB_POOL"]?.let { raw ->
                raw.toIntOrNull()?.takeIf { it in 1..256 }
                    ?: throw IllegalArgumentException("DB_POOL must be an integer in 1..256, got $raw")
            } ?: 10
            return Settings(host, port, downstream, backpressure, env["DB_URL"]?.takeIf { it.isNotBlank() }, pool)
        }
    }
}

fun main() {
    val settings = try {
        Settings.fromEnv()
    } catch (e: IllegalArgumentException) {
        System.err.println("ktor: ${e.message}")
        exitProcess(2)
    }
    // embeddedServer with the Netty engine at its defaults (Ktor's docs' way to set the port and
    // host in code). start() adds Ktor's JVM shutdown hook: on SIGTERM the engine stops taking
    // connections, gives open calls shutdownGracePeriod (1 s) and stops within shutdownTimeout
    // (5 s), then the application is disposed (the HTTP client and the pool close with it).
    embeddedServer(Netty, configure = {
        connector {
            host = settings.host
            port = settings.port
        }
    }) {
        module(settings)
    }.start(wait = true)
}
