//! What /chat and /stream share of a WebSocket on blocking sockets: the handshake's answer, a
//! reader (tungstenite, on the connection's own thread), and one lock per socket that every
//! write takes, whichever thread writes: the connection's, another member's broadcast, a
//! stream's sender. tungstenite's own WebSocket cannot be read on one thread while others
//! write to it, so the frames other threads send are encoded here (RFC 6455 5.2: a server's
//! frames are not masked), and tungstenite's own replies (pongs, closes) go through the same
//! lock (see README.md).

use std::{
    collections::HashMap,
    io::{self, Read, Write},
    net::{Shutdown, TcpStream},
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex,
    },
    time::Duration,
};

use tungstenite::{
    handshake::derive_accept_key,
    protocol::{Role, WebSocketConfig},
    Error, WebSocket,
};

use crate::http::{Outcome, Request, Response};

pub const CLOSE_GOING_AWAY: u16 = 1001;
pub const CLOSE_PROTOCOL: u16 = 1002;
pub const CLOSE_BAD_DATA: u16 = 1007;
pub const CLOSE_POLICY: u16 = 1008;
pub const CLOSE_TOO_BIG: u16 = 1009;

/// The writing side of one socket, shared by every thread that writes to it.
pub struct Writer {
    stream: Mutex<TcpStream>,
    /// A handle outside the lock, to cut the socket off while a write blocks.
    control: TcpStream,
}

impl Writer {
    /// Writes whole frames under the socket's lock.
    pub fn frames(&self, bytes: &[u8]) -> io::Result<()> {
        let mut stream = self
            .stream
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        stream.write_all(bytes)
    }

    /// Sends a close frame with code (best effort: the connection may be gone).
    pub fn close(&self, code: u16, reason: &str) {
        let mut payload = code.to_be_bytes().to_vec();
        payload.extend_from_slice(reason.as_bytes());
        let mut frame = Vec::with_capacity(payload.len() + 4);
        append_frame(&mut frame, 0x8, &payload);
        let _ = self.frames(&frame);
    }

    /// The close of the shutdown: sent only if no write holds the socket (a client that
    /// reads nothing may keep a stream's sender blocked in its write).
    pub fn close_if_free(&self, code: u16, reason: &str) {
        if let Ok(mut stream) = self.stream.try_lock() {
            let mut payload = code.to_be_bytes().to_vec();
            payload.extend_from_slice(reason.as_bytes());
            let mut frame = Vec::new();
            append_frame(&mut frame, 0x8, &payload);
            let _ = stream.write_all(&frame);
        }
    }

    /// Cuts the socket off both ways: blocked reads and writes on it return.
    pub fn cut(&self) {
        let _ = self.control.shutdown(Shutdown::Both);
    }
}

/// Appends one unfragmented, unmasked frame with opcode op.
pub fn append_frame(out: &mut Vec<u8>, op: u8, payload: &[u8]) {
    out.push(0x80 | op);
    match payload.len() {
        n if n < 126 => out.push(n as u8),
        n if n < 65_536 => {
            out.push(126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(payload);
}

/// A text frame.
pub fn text_frame(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + 10);
    append_frame(&mut out, 0x1, text.as_bytes());
    out
}

/// The socket as tungstenite's reader sees it: reads from the socket; what tungstenite writes
/// (pongs, the reply to a close) is written whole under the lock at once. tungstenite hands
/// its buffer of whole frames to one write call, and writes its reply to a client's close
/// without a flush after it, so nothing may wait for one.
pub struct ReadSide {
    read: TcpStream,
    writer: Arc<Writer>,
}

impl Read for ReadSide {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.read.read(buf)
    }
}

impl Write for ReadSide {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer.frames(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// An upgraded connection: tungstenite reading it, and the writer every thread shares.
pub struct Socket {
    pub reader: WebSocket<ReadSide>,
    pub writer: Arc<Writer>,
}

impl Socket {
    /// The socket of an upgrade, with a write timeout (None: writes wait for the client) and
    /// the contract's 64 KiB bound on what the client sends (a bigger message: close 1009).
    pub fn new(
        stream: TcpStream,
        leftover: Vec<u8>,
        write_timeout: Option<Duration>,
    ) -> io::Result<Socket> {
        stream.set_read_timeout(None)?;
        stream.set_write_timeout(write_timeout)?;
        let writer = Arc::new(Writer {
            stream: Mutex::new(stream.try_clone()?),
            control: stream.try_clone()?,
        });
        let side = ReadSide {
            read: stream,
            writer: writer.clone(),
        };
        let config = WebSocketConfig::default()
            .max_message_size(Some(64 << 10))
            .max_frame_size(Some(64 << 10));
        let reader = WebSocket::from_partially_read(side, leftover, Role::Server, Some(config));
        Ok(Socket { reader, writer })
    }

    /// After the server's close frame: the client's close is waited for a moment, then the
    /// socket closes (see http::linger).
    pub fn finish(self) {
        let read = self.reader.get_ref().read.try_clone();
        drop(self);
        if let Ok(read) = read {
            crate::http::linger(read);
        }
    }
}

/// The close code RFC 6455 gives for what tungstenite refused while reading; None when the
/// connection simply ended.
pub fn close_code(e: &Error) -> Option<u16> {
    match e {
        Error::ConnectionClosed | Error::AlreadyClosed | Error::Io(_) => None,
        Error::Capacity(_) => Some(CLOSE_TOO_BIG),
        Error::Protocol(_) => Some(CLOSE_PROTOCOL),
        _ => Some(CLOSE_BAD_DATA), // text that is not UTF-8
    }
}

/// The Sec-WebSocket-Accept of a valid upgrade request, or the 400 that refuses it.
pub fn accept(request: &Request) -> Result<String, Outcome> {
    match (&request.websocket_key, request.websocket_version.as_deref()) {
        (Some(key), Some("13")) if request.upgrade => Ok(derive_accept_key(key.as_bytes())),
        _ => Err(Outcome::Respond(Response::error(
            400,
            "a WebSocket upgrade (version 13) was expected",
        ))),
    }
}

/// The open WebSockets of one endpoint, for the shutdown's close frames.
#[derive(Default)]
pub struct Registry {
    next: AtomicU64,
    open: Mutex<HashMap<u64, Arc<Writer>>>,
}

impl Registry {
    pub fn add(&self, writer: Arc<Writer>) -> u64 {
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, writer);
        id
    }

    pub fn remove(&self, id: u64) {
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
    }

    /// Closes every open socket with 1001, as the server stops.
    pub fn close_all(&self) {
        let open: Vec<Arc<Writer>> = self
            .open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        for writer in open {
            writer.close_if_free(CLOSE_GOING_AWAY, "server stopping");
            writer.cut();
        }
    }
}
