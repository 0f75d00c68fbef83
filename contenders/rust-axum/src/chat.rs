//! /chat (study 000) on axum's WebSocket: per member, a task reads its frames and a writer task
//! drains its bounded queue; a broadcast puts the message, encoded once, into the queue of every
//! member of the room under the hub's lock (see README.md).

use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicU16, AtomicU64, AtomicUsize, Ordering},
        Arc, Mutex,
    },
    time::Duration,
};

use axum::{
    extract::{
        ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade},
        State,
    },
    response::Response,
};
use futures_util::{stream::SplitSink, SinkExt, StreamExt};
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, watch, Notify};

use crate::AppState;

/// A chat message over this is closed with 1009. The library's own limit is set above it: at
/// its limit tungstenite ends the stream with an error and no close frame, so the handler
/// checks the contract's 64 KiB itself and closes with the code.
const MAX_MESSAGE: usize = 64 * 1024;
const LIBRARY_LIMIT: usize = 1 << 20;
/// Frames a member may lag behind before it is closed with 1013 rather than stall its room.
const MEMBER_QUEUE: usize = 4096;
/// One frame to one member.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a connection waits for the client's close after the server sent its own.
const CLOSE_LINGER: Duration = Duration::from_secs(1);

const CLOSE_GOING_AWAY: u16 = 1001;
const CLOSE_POLICY: u16 = 1008;
const CLOSE_TOO_BIG: u16 = 1009;
const CLOSE_TRY_LATER: u16 = 1013;

/// Names (unique server-wide) and rooms, under one lock held only to queue frames, never
/// across an await; it orders the broadcasts, so each member's queue holds one sender's
/// messages in the order sent.
pub struct Hub {
    rooms: Mutex<Rooms>,
    next_id: AtomicU64,
    open: AtomicUsize,
    stop: watch::Receiver<bool>,
}

#[derive(Default)]
struct Rooms {
    names: HashMap<String, u64>,
    rooms: HashMap<String, HashMap<u64, Member>>,
}

/// A joined member as the room sees it: its queue, and the way to close it out of turn.
#[derive(Clone)]
struct Member {
    out: mpsc::Sender<Out>,
    kick: Arc<Kick>,
}

/// What a member's writer sends: a text frame, or the close that ends it.
enum Out {
    Text(Utf8Bytes),
    Close(u16),
}

/// Kick closes a member from outside its queue (its queue full, or the server stopping), once.
struct Kick {
    code: AtomicU16,
    notify: Notify,
}

impl Kick {
    fn new() -> Kick {
        Kick {
            code: AtomicU16::new(0),
            notify: Notify::new(),
        }
    }

    fn close(&self, code: u16) {
        if self
            .code
            .compare_exchange(0, code, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            self.notify.notify_one(); // kept as a permit if the writer is not waiting yet
        }
    }

    async fn wait(&self) -> u16 {
        self.notify.notified().await;
        self.code.load(Ordering::SeqCst)
    }
}

/// What a client sends; a missing field is None, a field that is no string fails the decode.
#[derive(Deserialize)]
struct Incoming {
    name: Option<String>,
    chat: Option<String>,
    message: Option<String>,
}

#[derive(Serialize)]
struct Outgoing<'a> {
    name: &'a str,
    chat: &'a str,
    message: &'a str,
}

#[derive(Serialize)]
struct System<'a> {
    r#type: &'static str,
    message: &'a str,
}

impl Hub {
    pub fn new(stop: watch::Receiver<bool>) -> Hub {
        Hub {
            rooms: Mutex::new(Rooms::default()),
            next_id: AtomicU64::new(1),
            open: AtomicUsize::new(0),
            stop,
        }
    }

    /// Open /chat connections, for the shutdown.
    pub fn open(&self) -> usize {
        self.open.load(Ordering::SeqCst)
    }

    fn join(&self, name: &str, room: &str, id: u64, member: Member) -> bool {
        let mut guard = self.rooms.lock().unwrap();
        let rooms = &mut *guard;
        if rooms.names.contains_key(name) {
            return false;
        }
        rooms.names.insert(name.to_owned(), id);
        rooms
            .rooms
            .entry(room.to_owned())
            .or_default()
            .insert(id, member);
        true
    }

    fn leave(&self, name: &str, room: &str, id: u64) {
        let mut guard = self.rooms.lock().unwrap();
        let rooms = &mut *guard;
        if rooms.names.get(name) == Some(&id) {
            rooms.names.remove(name);
        }
        let empty = match rooms.rooms.get_mut(room) {
            Some(members) => {
                members.remove(&id);
                members.is_empty()
            }
            None => false,
        };
        if empty {
            rooms.rooms.remove(room);
        }
    }

    /// Queues text for every member of room, the sender included, without waiting: a member
    /// whose queue is full is closed with 1013 instead of holding the room back.
    fn broadcast(&self, room: &str, text: Utf8Bytes) {
        let rooms = self.rooms.lock().unwrap();
        if let Some(members) = rooms.rooms.get(room) {
            for member in members.values() {
                if member.out.try_send(Out::Text(text.clone())).is_err() {
                    member.kick.close(CLOSE_TRY_LATER);
                }
            }
        }
    }
}

/// GET /chat: the upgrade, with the library's limits above the contract's (see MAX_MESSAGE).
pub async fn route(ws: WebSocketUpgrade, State(app): State<AppState>) -> Response {
    let hub = app.chat.clone();
    ws.max_message_size(LIBRARY_LIMIT)
        .max_frame_size(LIBRARY_LIMIT)
        .on_upgrade(move |socket| serve(hub, socket))
}

/// A member's connection: this task reads, a spawned task writes, until either side ends.
async fn serve(hub: Arc<Hub>, socket: WebSocket) {
    hub.open.fetch_add(1, Ordering::SeqCst);
    let id = hub.next_id.fetch_add(1, Ordering::SeqCst);
    let (sink, mut incoming) = socket.split();
    let (out, queue) = mpsc::channel(MEMBER_QUEUE);
    let kick = Arc::new(Kick::new());
    let mut writer = tokio::spawn(write(sink, queue, kick.clone(), hub.stop.clone()));
    let mut writer_done = false;
    let mut joined: Option<(String, String)> = None;
    loop {
        let next = if writer_done {
            // The server closed (or a write failed): the client's close, or the linger's end.
            match tokio::time::timeout(CLOSE_LINGER, incoming.next()).await {
                Ok(next) => next,
                Err(_) => break,
            }
        } else {
            tokio::select! {
                next = incoming.next() => next,
                _ = &mut writer => { writer_done = true; continue; }
            }
        };
        let text = match next {
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Binary(_))) => {
                notice(&out, "binary frames are not chat messages");
                continue;
            }
            // Pings are answered and a client's close is echoed by the library, on the next read.
            Some(Ok(_)) => continue,
            Some(Err(_)) | None => break,
        };
        if writer_done {
            continue;
        }
        if text.as_str().len() > MAX_MESSAGE {
            let _ = out.try_send(Out::Close(CLOSE_TOO_BIG));
            continue;
        }
        handle(&hub, &out, &kick, id, &mut joined, text.as_str());
    }
    // The name is free and no broadcast reaches this member any more before anything else.
    if let Some((name, room)) = &joined {
        hub.leave(name, room, id);
    }
    drop(out);
    if !writer_done {
        let _ = tokio::time::timeout(CLOSE_LINGER, &mut writer).await;
        writer.abort();
    }
    hub.open.fetch_sub(1, Ordering::SeqCst);
}

/// One text frame from the member: a join, a message for its room, or a system notice back.
fn handle(
    hub: &Hub,
    out: &mpsc::Sender<Out>,
    kick: &Arc<Kick>,
    id: u64,
    joined: &mut Option<(String, String)>,
    text: &str,
) {
    let Ok(frame) = serde_json::from_str::<Incoming>(text) else {
        notice(
            out,
            "not a JSON object with string fields name, chat and message",
        );
        return;
    };
    let has = |field: &Option<String>| field.as_deref().is_some_and(|v| !v.is_empty());
    match joined {
        None if frame.message.is_some() => notice(out, r#"join first with {"name","chat"}"#),
        None if !(has(&frame.name) && has(&frame.chat)) => {
            notice(out, r#"a join needs {"name","chat"}"#)
        }
        None => {
            let (name, room) = (
                frame.name.unwrap_or_default(),
                frame.chat.unwrap_or_default(),
            );
            let member = Member {
                out: out.clone(),
                kick: kick.clone(),
            };
            if hub.join(&name, &room, id, member) {
                *joined = Some((name, room));
            } else {
                // The notice, then the close, through the one queue: in that order on the wire.
                notice(out, &format!("the name {name} is taken"));
                let _ = out.try_send(Out::Close(CLOSE_POLICY));
            }
        }
        Some(_) if !has(&frame.name) || !has(&frame.chat) || frame.message.is_none() => {
            notice(out, "a message needs name, chat and message")
        }
        Some((name, room)) => {
            let message = frame.message.unwrap_or_default();
            let encoded = serde_json::to_string(&Outgoing {
                name,
                chat: room,
                message: &message,
            });
            if let Ok(encoded) = encoded {
                hub.broadcast(room, Utf8Bytes::from(encoded));
            }
        }
    }
}

/// Queues a system frame for this member alone (dropped if it is already being closed).
fn notice(out: &mpsc::Sender<Out>, message: &str) {
    if let Ok(encoded) = serde_json::to_string(&System {
        r#type: "system",
        message,
    }) {
        let _ = out.try_send(Out::Text(Utf8Bytes::from(encoded)));
    }
}

/// Sends the member's queue in order until it closes, a kick or the server's stop asks for a
/// close, or a write fails or takes over WRITE_TIMEOUT.
async fn write(
    mut sink: SplitSink<WebSocket, Message>,
    mut queue: mpsc::Receiver<Out>,
    kick: Arc<Kick>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        let out = tokio::select! {
            code = kick.wait() => Out::Close(code),
            _ = crate::stopped(&mut stop) => Out::Close(CLOSE_GOING_AWAY),
            next = queue.recv() => match next {
                Some(out) => out,
                None => return,
            },
        };
        match out {
            Out::Text(text) => {
                match tokio::time::timeout(WRITE_TIMEOUT, sink.send(Message::Text(text))).await {
                    Ok(Ok(())) => {}
                    _ => return,
                }
            }
            Out::Close(code) => {
                let frame = CloseFrame {
                    code,
                    reason: Utf8Bytes::from(String::from(reason(code))),
                };
                let _ = tokio::time::timeout(CLOSE_LINGER, sink.send(Message::Close(Some(frame))))
                    .await;
                return;
            }
        }
    }
}

fn reason(code: u16) -> &'static str {
    match code {
        CLOSE_GOING_AWAY => "server stopping",
        CLOSE_POLICY => "name taken",
        CLOSE_TOO_BIG => "message over 64 KiB",
        CLOSE_TRY_LATER => "too slow",
        _ => "",
    }
}
