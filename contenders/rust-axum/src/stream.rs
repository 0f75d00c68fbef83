//! /stream (study 003) on axum's WebSocket: per client, a generator task makes the messages
//! and a sender task writes them, with a queue between them; the connection's own task reads
//! (and ignores) what the client sends until it closes (see README.md).
//!
//! BACKPRESSURE=on: the queue holds at most 5000 messages, a full one drops its oldest (counted);
//! the sender takes up to 100 at a time, feeds them to the socket and flushes: those are the
//! sends in flight. BACKPRESSURE=off: the queue has no bound and every generated message counts
//! as sent; a slow client makes it grow.

use std::{
    collections::VecDeque,
    fmt::Write as _,
    sync::{
        atomic::{AtomicI64, Ordering},
        Arc, LazyLock, Mutex,
    },
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use axum::{
    extract::{
        ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade},
        RawQuery, State,
    },
    http::StatusCode,
    response::{IntoResponse, Response},
    Json,
};
use futures_util::{stream::SplitSink, SinkExt, StreamExt};
use serde::Serialize;
use tokio::sync::{watch, Notify};

use crate::{error, int_in, param, AppState};

const MAX_RATE: u64 = 1_000_000;
const MIN_SIZE: u64 = 16;
const MAX_SIZE: u64 = 65_536;
const DEFAULT_SIZE: u64 = 250;
/// Generated messages a client's queue holds with back-pressure on.
const WAITING: usize = 5000;
/// Rate 0: messages per batch, then the generator yields; also the most sends in flight.
const BATCH: usize = 100;
const TICK: Duration = Duration::from_millis(10);
/// What the client sends is ignored; a bigger message ends the connection.
const MAX_INCOMING: usize = 64 * 1024;

static PAD: LazyLock<String> = LazyLock::new(|| {
    let letters = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    (0..MAX_SIZE as usize)
        .map(|i| letters[i % letters.len()] as char)
        .collect()
});

/// The counters of /stream/stats, and the stop the senders watch for the shutdown.
pub struct Hub {
    backpressure: bool,
    clients: AtomicI64,
    generated: AtomicI64,
    sent: AtomicI64,
    dropped: AtomicI64,
    stop: watch::Receiver<bool>,
}

#[derive(Serialize)]
pub struct Stats {
    clients: i64,
    generated: i64,
    sent: i64,
    dropped: i64,
}

/// One client's messages between its generator and its sender.
#[derive(Default)]
struct Queue {
    messages: Mutex<VecDeque<Utf8Bytes>>,
    ready: Notify,
}

impl Hub {
    pub fn new(backpressure: bool, stop: watch::Receiver<bool>) -> Hub {
        let zero = || AtomicI64::new(0);
        Hub {
            backpressure,
            clients: zero(),
            generated: zero(),
            sent: zero(),
            dropped: zero(),
            stop,
        }
    }

    /// Open /stream connections, for the shutdown.
    pub fn open(&self) -> usize {
        self.clients.load(Ordering::SeqCst).max(0) as usize
    }

    /// Puts a batch into q: with back-pressure a full queue drops its oldest first; without,
    /// every generated message counts as sent at once.
    fn put(&self, q: &Queue, batch: Vec<Utf8Bytes>) {
        let n = batch.len() as i64;
        let mut dropped = 0;
        {
            let mut messages = q.messages.lock().unwrap();
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

/// GET /stream/stats.
pub async fn stats(State(app): State<AppState>) -> Json<Stats> {
    let hub = &app.stream;
    Json(Stats {
        clients: hub.clients.load(Ordering::Relaxed),
        generated: hub.generated.load(Ordering::Relaxed),
        sent: hub.sent.load(Ordering::Relaxed),
        dropped: hub.dropped.load(Ordering::Relaxed),
    })
}

/// ?rate=R&size=B, or what is wrong with them.
fn params(query: Option<&str>) -> Result<(u64, usize), String> {
    let get = |name: &str, default: u64, lo: u64, hi: u64| match param(query, name) {
        None => Ok(default),
        Some(raw) => int_in(raw, lo, hi)
            .ok_or_else(|| format!("{name} must be an integer in {lo}..{hi}, got {raw:?}")),
    };
    let rate = get("rate", 0, 0, MAX_RATE)?;
    let size = get("size", DEFAULT_SIZE, MIN_SIZE, MAX_SIZE)?;
    Ok((rate, size as usize))
}

/// GET /stream: rate and size are checked before the upgrade (a bad one is a 400, no upgrade).
pub async fn route(
    ws: WebSocketUpgrade,
    RawQuery(query): RawQuery,
    State(app): State<AppState>,
) -> Response {
    let (rate, size) = match params(query.as_deref()) {
        Ok(p) => p,
        Err(problem) => return error(StatusCode::BAD_REQUEST, problem),
    };
    let hub = app.stream.clone();
    ws.max_message_size(MAX_INCOMING)
        .max_frame_size(MAX_INCOMING)
        .on_upgrade(move |socket| serve(hub, socket, rate, size))
        .into_response()
}

/// {"seq":seq,"ts":<µs now>,"pad":"…"}, exactly size bytes (or its head alone when longer).
fn message(seq: u64, size: usize) -> Utf8Bytes {
    let ts = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros())
        .unwrap_or(0);
    let mut text = String::with_capacity(size.max(64));
    let _ = write!(text, r#"{{"seq":{seq},"ts":{ts},"pad":""#);
    let pad = size.saturating_sub(text.len() + 2);
    text.push_str(&PAD[..pad]);
    text.push_str(r#""}"#);
    Utf8Bytes::from(text)
}

/// One client's stream until it closes: the generator and the sender are tasks of their own,
/// this one reads.
async fn serve(hub: Arc<Hub>, socket: WebSocket, rate: u64, size: usize) {
    hub.clients.fetch_add(1, Ordering::SeqCst);
    let (sink, mut incoming) = socket.split();
    let q = Arc::new(Queue::default());
    let generator = tokio::spawn(generate(hub.clone(), q.clone(), rate, size));
    let mut sender = tokio::spawn(send(hub.clone(), q.clone(), sink, hub.stop.clone()));
    let mut sender_done = false;
    loop {
        tokio::select! {
            next = incoming.next() => match next {
                Some(Ok(_)) => continue, // ignored; pings and closes are the library's
                _ => break,
            },
            _ = &mut sender => { sender_done = true; break; }
        }
    }
    // Both tasks stop, and with them go this client's messages (freed, not counted dropped).
    generator.abort();
    let _ = generator.await;
    if !sender_done {
        sender.abort();
        let _ = sender.await;
    }
    hub.clients.fetch_sub(1, Ordering::SeqCst);
}

/// Makes this client's messages: at rate 0 batches of 100 with a yield to the runtime between
/// them, else on a 10-ms tick what the clock says is due since the start.
async fn generate(hub: Arc<Hub>, q: Arc<Queue>, rate: u64, size: usize) {
    let mut seq: u64 = 0;
    let mut emit = |mut n: u64| {
        while n > 0 {
            let k = n.min(BATCH as u64);
            let batch = (seq..seq + k).map(|s| message(s, size)).collect();
            seq += k;
            hub.put(&q, batch);
            n -= k;
        }
    };
    if rate == 0 {
        loop {
            emit(BATCH as u64);
            tokio::task::yield_now().await;
        }
    }
    let start = Instant::now();
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut made: u64 = 0;
    loop {
        tick.tick().await;
        let due = (start.elapsed().as_micros() * rate as u128 / 1_000_000) as u64;
        if due > made {
            emit(due - made);
            made = due;
        }
    }
}

/// Writes the queue: up to 100 messages fed to the socket, then one flush; those are in
/// flight until the flush returns (the kernel took them).
async fn send(
    hub: Arc<Hub>,
    q: Arc<Queue>,
    mut sink: SplitSink<WebSocket, Message>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        let batch: Vec<Utf8Bytes> = {
            let mut messages = q.messages.lock().unwrap();
            let n = messages.len().min(BATCH);
            messages.drain(..n).collect()
        };
        if batch.is_empty() {
            tokio::select! {
                _ = q.ready.notified() => continue,
                _ = crate::stopped(&mut stop) => {
                    let frame = CloseFrame { code: 1001, reason: Utf8Bytes::from(String::from("server stopping")) };
                    let _ = tokio::time::timeout(Duration::from_secs(1), sink.send(Message::Close(Some(frame)))).await;
                    return;
                }
            }
        }
        if hub.backpressure {
            hub.sent.fetch_add(batch.len() as i64, Ordering::Relaxed);
        }
        for m in batch {
            if sink.feed(Message::Text(m)).await.is_err() {
                return;
            }
        }
        if sink.flush().await.is_err() {
            return;
        }
    }
}
