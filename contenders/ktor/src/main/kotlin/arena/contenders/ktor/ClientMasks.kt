package arena.contenders.ktor

import io.ktor.http.Headers
import io.ktor.http.content.OutgoingContent
import io.ktor.server.application.createApplicationPlugin
import io.ktor.utils.io.*
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.launch
import kotlin.coroutines.CoroutineContext

/**
 * RFC 6455 5.1: a server must close the connection on a client frame that is not masked. Ktor's
 * frame reader (io.ktor.websocket.FrameParser, 3.5.2) reads the mask bit but never checks it,
 * and it takes a 64-bit length with its top bit set (2^63) as a negative one; arena verify also
 * found it ignoring RSV bits with no extension agreed (5.2), where 1002 is asked for. This
 * plugin puts a scanner between the connection and Ktor's reader on every WebSocket upgrade
 * (/chat and /stream): it passes the bytes on unchanged, holding back only a frame's header
 * until it is whole, and a header that breaks one of these rules is replaced by one that Ktor's
 * own parser refuses (a fragmented control frame), so Ktor closes with its own 1002, as it does
 * for other protocol errors. Nothing else about Ktor's WebSockets changes. Costs one copy of
 * what clients send.
 */
val ClientMasks = createApplicationPlugin("ClientMasks") {
    onCallRespond { _ ->
        transformBody { body ->
            if (body is OutgoingContent.ProtocolUpgrade && body !is MaskCheckedUpgrade) MaskCheckedUpgrade(body) else body
        }
    }
}

private class MaskCheckedUpgrade(private val upgrade: OutgoingContent.ProtocolUpgrade) : OutgoingContent.ProtocolUpgrade() {
    override val headers: Headers get() = upgrade.headers

    override suspend fun upgrade(
        input: ByteReadChannel,
        output: ByteWriteChannel,
        engineContext: CoroutineContext,
        userContext: CoroutineContext,
    ): Job {
        val checked = ByteChannel()
        val session = upgrade.upgrade(checked, output, engineContext, userContext)
        val scanner = CoroutineScope(engineContext).launch { copyScanned(input, checked) }
        session.invokeOnCompletion { scanner.cancel() }
        return session
    }
}

/** Copies what the client sends to Ktor's reader until a frame header breaks the rules or the input ends. */
private suspend fun copyScanned(input: ByteReadChannel, output: ByteChannel) {
    val buffer = ByteArray(8192)
    val frames = FrameScanner(output)
    try {
        while (true) {
            val n = input.readAvailable(buffer, 0, buffer.size)
            if (n < 0) break
            if (!frames.scan(buffer, n)) {
                output.writeFully(REFUSED_HEADER, 0, REFUSED_HEADER.size)
                output.flush()
                return
            }
            output.flush()
        }
        output.flushAndClose()
    } catch (e: Exception) {
        output.cancel(e)
    }
}

/** A fragmented close frame's header (FIN clear, opcode 8): Ktor's parser throws ProtocolViolationException on it. */
private val REFUSED_HEADER = byteArrayOf(0x08, 0x00)

/** Follows the frames of a client's byte stream into [out]: headers held until whole, payloads passed as they come. */
private class FrameScanner(private val out: ByteWriteChannel) {
    private val header = ByteArray(14)
    private var have = 0 // header bytes held
    private var need = 2 // bytes of this header, as far as known
    private var payload = 0L // payload bytes of the current frame still to pass

    /** Passes buf[0 until n] on; false at a header that breaks the rules, none of whose frame was passed. */
    suspend fun scan(buf: ByteArray, n: Int): Boolean {
        var i = 0
        while (i < n) {
            if (payload > 0) {
                val take = minOf(payload, (n - i).toLong()).toInt()
                out.writeFully(buf, i, i + take)
                payload -= take
                i += take
                continue
            }
            header[have++] = buf[i++]
            if (have == 2) {
                if (header[1].toInt() and 0x80 == 0) return false // not masked
                if (header[0].toInt() and 0x70 != 0) return false // RSV set, and no extension is installed
                need = 2 + 4 + when (header[1].toInt() and 0x7f) {
                    126 -> 2
                    127 -> 8
                    else -> 0
                }
            }
            if (have == 3 && need == 14 && header[2].toInt() and 0x80 != 0) return false // a length of 2^63 or more
            if (have == need) {
                payload = length()
                out.writeFully(header, 0, have)
                have = 0
                need = 2
            }
        }
        return true
    }

    /** The payload length of the whole header held (7, 16 or 64 bits). */
    private fun length(): Long = when (need) {
        8 -> ((header[2].toLong() and 0xff) shl 8) or (header[3].toLong() and 0xff)
        14 -> (2..9).fold(0L) { acc, k -> (acc shl 8) or (header[k].toLong() and 0xff) }
        else -> header[1].toLong() and 0x7f
    }
}
