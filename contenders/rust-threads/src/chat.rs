//! /chat (study 000) on blocking sockets: a thread per member blocks reading its frames
//! (tungstenite); a message is encoded once and written by the sender's thread itself to every
//! member of the room, under the room's lock and each member's write lock, with blocking
//! writes (see README.md).

use std::{
    collections::HashMap,
    net::TcpStream,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex,
    },
    time::Duration,
};

use serde::{Deserialize, Serialize};
use tungstenite::Message;

use crate::{
    http::{Outcome, Request},
    ws::{self, Registry, Socket, Writer},
    App,
};

/// A write to one member blocked this long fails, and that member is cut off.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

type Room = Arc<Mutex<HashMap<u64, Arc<Writer>>>>;

/// Names (unique server-wide) and rooms. The hub's lock is held only to find or change a
/// room; a room's lock is held while a message is written to its members, so that every
/// member gets one sender's messages in the order sent.
#[derive(Default)]
pub struct Hub {
    state: Mutex<Rooms>,
    next_id: AtomicU64,
    open: Registry,
}

#[derive(Default)]
struct Rooms {
    names: HashMap<String, u64>,
    rooms: HashMap<String, Room>,
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

/// A joined member: its name, and its room.
struct Joined {
    name: String,
    room_name: String,
    room: Room,
}

impl Hub {
    /// Closes every /chat connection with 1001, as the server stops.
    pub fn close_all(&self) {
        self.open.close_all();
    }

    fn join(&self, name: &str, room_name: &str, id: u64, writer: Arc<Writer>) -> Option<Room> {
        let mut guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let state = &mut *guard;
        if state.names.contains_key(name) {
            return None;
        }
        state.names.insert(name.to_owned(), id);
        let room = state.rooms.entry(room_name.to_owned()).or_default().clone();
        room.lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, writer);
        Some(room)
    }

    fn leave(&self, joined: &Joined, id: u64) {
        let mut guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let state = &mut *guard;
        if state.names.get(&joined.name) == Some(&id) {
            state.names.remove(&joined.name);
        }
        let mut members = joined.room.lock().unwrap_or_else(|p| p.into_inner());
        members.remove(&id);
        if members.is_empty() {
            state.rooms.remove(&joined.room_name);
        }
    }
}

/// GET /chat: the upgrade, answered on the request thread; the member then has a thread of
/// its own.
pub fn upgrade(app: &Arc<App>, request: &Request) -> Outcome {
    let accept = match ws::accept(request) {
        Ok(accept) => accept,
        Err(refusal) => return refusal,
    };
    let hub = app.chat.clone();
    Outcome::Upgrade {
        accept,
        then: Box::new(move |stream: TcpStream, leftover: Vec<u8>| serve(&hub, stream, leftover)),
    }
}

fn serve(hub: &Hub, stream: TcpStream, leftover: Vec<u8>) {
    let Ok(mut socket) = Socket::new(stream, leftover, Some(WRITE_TIMEOUT)) else {
        return;
    };
    let id = hub.next_id.fetch_add(1, Ordering::SeqCst);
    let registered = hub.open.add(socket.writer.clone());
    let mut joined: Option<Joined> = None;
    loop {
        match socket.reader.read() {
            Ok(Message::Text(text)) => {
                if !handle(hub, &socket.writer, id, &mut joined, text.as_str()) {
                    break; // the name was taken: the notice and close 1008 are written
                }
            }
            Ok(Message::Binary(_)) => notice(&socket.writer, "binary frames are not chat messages"),
            // Pings are answered and a client's close is echoed by tungstenite, on the next read.
            Ok(_) => {}
            Err(e) => {
                if let Some(code) = ws::close_code(&e) {
                    socket.writer.close(code, "");
                }
                break;
            }
        }
    }
    // The name is free and no broadcast reaches this member any more before anything else.
    if let Some(joined) = &joined {
        hub.leave(joined, id);
    }
    hub.open.remove(registered);
    socket.finish();
}

/// One text frame: a join, a message for the room, or a notice back; false when the name was
/// taken and the connection is closed.
fn handle(
    hub: &Hub,
    writer: &Arc<Writer>,
    id: u64,
    joined: &mut Option<Joined>,
    text: &str,
) -> bool {
    let Ok(frame) = serde_json::from_str::<Incoming>(text) else {
        notice(
            writer,
            "not a JSON object with string fields name, chat and message",
        );
        return true;
    };
    let has = |field: &Option<String>| field.as_deref().is_some_and(|v| !v.is_empty());
    match joined {
        None if frame.message.is_some() => notice(writer, r#"join first with {"name","chat"}"#),
        None if !(has(&frame.name) && has(&frame.chat)) => {
            notice(writer, r#"a join needs {"name","chat"}"#)
        }
        None => {
            let (name, room_name) = (
                frame.name.unwrap_or_default(),
                frame.chat.unwrap_or_default(),
            );
            match hub.join(&name, &room_name, id, writer.clone()) {
                Some(room) => {
                    *joined = Some(Joined {
                        name,
                        room_name,
                        room,
                    })
                }
                None => {
                    notice(writer, &format!("the name {name} is taken"));
                    writer.close(ws::CLOSE_POLICY, "name taken");
                    return false;
                }
            }
        }
        Some(_) if !has(&frame.name) || !has(&frame.chat) || frame.message.is_none() => {
            notice(writer, "a message needs name, chat and message")
        }
        Some(member) => {
            let message = frame.message.unwrap_or_default();
            let encoded = serde_json::to_string(&Outgoing {
                name: &member.name,
                chat: &member.room_name,
                message: &message,
            });
            if let Ok(encoded) = encoded {
                broadcast(&member.room, &ws::text_frame(&encoded));
            }
        }
    }
    true
}

/// Writes frame to every member of room, the sender included, on this thread: a member that
/// does not read holds its room's senders back until WRITE_TIMEOUT, then is cut off.
fn broadcast(room: &Room, frame: &[u8]) {
    let members = room.lock().unwrap_or_else(|p| p.into_inner());
    for writer in members.values() {
        if writer.frames(frame).is_err() {
            writer.cut(); // its reader sees the end and leaves
        }
    }
}

/// A system frame to this member alone.
fn notice(writer: &Writer, message: &str) {
    if let Ok(encoded) = serde_json::to_string(&System {
        r#type: "system",
        message,
    }) {
        let _ = writer.frames(&ws::text_frame(&encoded));
    }
}
