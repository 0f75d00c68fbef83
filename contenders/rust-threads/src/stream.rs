//! /stream (study 003) on blocking sockets: per client, a generator thread makes the messages
//! into a queue, the connection's thread sends them with blocking writes, and a reader thread
//! reads (and ignores) what the client sends until it closes (see README.md).
//!
//! BACKPRESSURE=on: the queue holds at most 5000 messages, a full one drops its oldest
//! (counted); the sender takes up to 100 at a time into one blocking write: those are in flight
//! until the write returns. BACKPRESSURE=off: the queue has no bound and every generated
//! message counts as sent; a slow client makes it grow.

use std::{
    collections::VecDeque,
    fmt::Write as _,
    net::TcpStream,
    sync::{
        atomic::{AtomicBool, AtomicI64, Ordering},
        Arc, Condvar, LazyLock, Mutex,
    },
    thread,
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use serde::Serialize;

use crate::{
    http::{Outcome, Request, Response},
    int_in,
    ws::{self, Registry, Socket, Writer},
    App,
};

const MAX_RATE: u64 = 1_000_000;
const MIN_SIZE: u64 = 16;
const MAX_SIZE: u64 = 65_536;
const DEFAULT_SIZE: u64 = 250;
/// Generated messages a client's queue holds with back-pressure on.
const WAITING: usize = 5000;
/// Rate 0: messages per batch, then the generator yields; also the most sends in flight.
const BATCH: usize = 100;
const TICK: Duration = Duration::from_millis(10);

static PAD: LazyLock<String> = LazyLock::new(|| {
    let letters = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    (0..MAX_SIZE as usize)
        .map(|i| letters[i % letters.len()] as char)
        .collect()
});

/// The counters of /stream/stats and the open streams, for the shutdown.
pub struct Hub {
    backpressure: bool,
    clients: AtomicI64,
    generated: AtomicI64,
    sent: AtomicI64,
    dropped: AtomicI64,
    open: Registry,
}

#[derive(Serialize)]
pub struct Stats {
    clients: i64,
    generated: i64,
    sent: i64,
    dropped: i64,
}

/// One client's messages between its generator and its sender, and the end of both.
#[derive(Default)]
struct Queue {
    messages: Mutex<VecDeque<String>>,
    ready: Condvar,
    stopped: AtomicBool,
}

impl Queue {
    /// Ends the stream: the generator stops at its next batch, a waiting sender wakes. The flag
    /// is set under the queue's lock so that a sender about to wait cannot miss it.
    fn stop(&self) {
        let _messages = self.messages.lock().unwrap_or_else(|p| p.into_inner());
        self.stopped.store(true, Ordering::SeqCst);
        self.ready.notify_all();
    }

    fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }
}

impl Hub {
    pub fn new(backpressure: bool) -> Hub {
        let zero = || AtomicI64::new(0);
        Hub {
            backpressure,
            clients: zero(),
            generated: zero(),
            sent: zero(),
            dropped: zero(),
            open: Registry::default(),
        }
    }

    pub fn stats(&self) -> Stats {
        Stats {
            clients: self.clients.load(Ordering::Relaxed),
            generated: self.generated.load(Ordering::Relaxed),
            sent: self.sent.load(Ordering::Relaxed),
            dropped: self.dropped.load(Ordering::Relaxed),
        }
    }

    /// Closes every /stream connection with 1001, as the server stops.
    pub fn close_all(&self) {
        self.open.close_all();
    }

    /// Puts a batch into q: with back-pressure a full queue drops its oldest first; without,
    /// every generated message counts as sent at once.
    fn put(&self, q: &Queue, batch: Vec<String>) {
        let n = batch.len() as i64;
        let mut dropped = 0;
        {
            let mut messages = q.messages.lock().unwrap_or_else(|p| p.into_inner());
            for message in batch {
                if self.backpressure && messages.len() >= WAITING {
                    messages.pop_front();
                    dropped += 1;
                }
                messages.push_back(message);
            }
        }
        self.generated.fetch_add(n, Ordering::Relaxed);
        if dropped > 0 {
            self.dropped.fetch_add(dropped, Ordering::Relaxed);
        }
        if !self.backpressure {
            self.sent.fetch_add(n, Ordering::Relaxed);
        }
        q.ready.notify_one();
    }
}

/// ?rate=R&size=B, or what is wrong with them.
fn params(request: &Request) -> Result<(u64, usize), String> {
    let get = |name: &str, default: u64, lo: u64, hi: u64| match request.param(name) {
        None => Ok(default),
        Some(raw) => int_in(raw, lo, hi)
            .ok_or_else(|| format!("{name} must be an integer in {lo}..{hi}, got {raw:?}")),
    };
    let rate = get("rate", 0, 0, MAX_RATE)?;
    let size = get("size", DEFAULT_SIZE, MIN_SIZE, MAX_SIZE)?;
    Ok((rate, size as usize))
}

/// GET /stream: rate and size are checked before the upgrade (a bad one is a 400, no upgrade).
pub fn upgrade(app: &Arc<App>, request: &Request) -> Outcome {
    let (rate, size) = match params(request) {
        Ok(p) => p,
        Err(problem) => return Outcome::Respond(Response::error(400, &problem)),
    };
    let accept = match ws::accept(request) {
        Ok(accept) => accept,
        Err(refusal) => return refusal,
    };
    let hub = app.stream.clone();
    Outcome::Upgrade {
        accept,
        then: Box::new(move |stream: TcpStream, leftover: Vec<u8>| {
            serve(&hub, stream, leftover, rate, size)
        }),
    }
}

/// {"seq":seq,"ts":<µs now>,"pad":"…"}, exactly size bytes (or its head alone when longer).
fn message(seq: u64, size: usize) -> String {
    let ts = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros())
        .unwrap_or(0);
    let mut text = String::with_capacity(size.max(64));
    let _ = write!(text, r#"{{"seq":{seq},"ts":{ts},"pad":""#);
    let pad = size.saturating_sub(text.len() + 2);
    text.push_str(&PAD[..pad]);
    text.push_str(r#""}"#);
    text
}

/// One client's stream until it closes. Writes wait for the client as long as it takes (no
/// timeout): a client that reads slowly is the study's subject.
fn serve(hub: &Arc<Hub>, stream: TcpStream, leftover: Vec<u8>, rate: u64, size: usize) {
    let Ok(socket) = Socket::new(stream, leftover, None) else {
        return;
    };
    hub.clients.fetch_add(1, Ordering::SeqCst);
    let registered = hub.open.add(socket.writer.clone());
    let q = Arc::new(Queue::default());
    let generator = {
        let (hub, q) = (hub.clone(), q.clone());
        thread::Builder::new()
            .name("stream-generator".into())
            .spawn(move || generate(&hub, &q, rate, size))
    };
    let writer = socket.writer.clone();
    let reader = {
        let q = q.clone();
        thread::Builder::new()
            .name("stream-reader".into())
            .spawn(move || read(socket, &q))
    };
    if generator.is_ok() && reader.is_ok() {
        send(hub, &q, &writer);
    }
    // Both other threads stop, and with them go this client's messages (freed, not dropped).
    q.stop();
    writer.cut();
    if let Ok(generator) = generator {
        let _ = generator.join();
    }
    if let Ok(reader) = reader {
        let _ = reader.join();
    }
    hub.open.remove(registered);
    hub.clients.fetch_sub(1, Ordering::SeqCst);
}

/// Reads what the client sends and drops it, until the client closes or breaks the protocol.
fn read(mut socket: Socket, q: &Queue) {
    loop {
        match socket.reader.read() {
            Ok(_) => {} // ignored; pings and closes are answered by tungstenite
            Err(e) => {
                if let Some(code) = ws::close_code(&e) {
                    socket.writer.close(code, "");
                }
                break;
            }
        }
    }
    q.stop();
}

/// Makes this client's messages: at rate 0 batches of 100 with a yield between them, else
/// every 10 ms what the clock says is due since the start.
fn generate(hub: &Hub, q: &Queue, rate: u64, size: usize) {
    let mut seq: u64 = 0;
    let mut emit = |mut n: u64| {
        while n > 0 && !q.is_stopped() {
            let k = n.min(BATCH as u64);
            let batch = (seq..seq + k).map(|s| message(s, size)).collect();
            seq += k;
            hub.put(q, batch);
            n -= k;
        }
    };
    if rate == 0 {
        while !q.is_stopped() {
            emit(BATCH as u64);
            thread::yield_now();
        }
        return;
    }
    let start = Instant::now();
    let mut made: u64 = 0;
    let mut ticks: u32 = 0;
    while !q.is_stopped() {
        ticks += 1;
        if let Some(wait) = (start + TICK * ticks).checked_duration_since(Instant::now()) {
            thread::sleep(wait);
        }
        let due = (start.elapsed().as_micros() * rate as u128 / 1_000_000) as u64;
        if due > made {
            emit(due - made);
            made = due;
        }
    }
}

/// Sends the queue: up to 100 messages framed into one blocking write, until the stream ends
/// or a write fails.
fn send(hub: &Hub, q: &Queue, writer: &Writer) {
    let mut out = Vec::new();
    loop {
        let batch: Vec<String> = {
            let mut messages = q.messages.lock().unwrap_or_else(|p| p.into_inner());
            while messages.is_empty() && !q.is_stopped() {
                messages = q.ready.wait(messages).unwrap_or_else(|p| p.into_inner());
            }
            if q.is_stopped() {
                return;
            }
            let n = messages.len().min(BATCH);
            messages.drain(..n).collect()
        };
        if hub.backpressure {
            hub.sent.fetch_add(batch.len() as i64, Ordering::Relaxed);
        }
        out.clear();
        for m in &batch {
            ws::append_frame(&mut out, 0x1, m.as_bytes());
        }
        if writer.frames(&out).is_err() {
            return;
        }
    }
}
