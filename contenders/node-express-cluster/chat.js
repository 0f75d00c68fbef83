'use strict';

// /chat (study 000) under node:cluster. Each worker runs a ws WebSocketServer on its own
// http.Server; the primary holds the state every worker must agree on: the names (unique
// across workers) and which workers hold members of which room. Over the cluster's IPC
// channels (ordered, one per worker):
//   worker -> primary  { chat: 'join', id, name, room }  answered by { chat: 'joined', id, ok }
//                      { chat: 'leave', name }
//                      { chat: 'say', room, out }        out: the JSON text to deliver
//   primary -> worker  { chat: 'deliver', room, out }    to the workers with members in room
// Every message goes through the primary, the sender's own worker included, so each member
// gets one sender's messages in the order the sender's worker read them.
// The frames are read and written as in node-express (../_shared/node-express).
const { WebSocketServer, WebSocket } = require('ws');
const { MAX_FRAME, parseFrame, system } = require('../_shared/node-express/chat-frames.js');

/** The primary's half: call once in the primary, before or after forking. */
function chatPrimary(cluster) {
  const names = new Map(); // name -> { worker: worker id, room }
  const rooms = new Map(); // room -> Map(worker id -> members of room on that worker)

  function leave(name, workerId) {
    const entry = names.get(name);
    if (entry === undefined || entry.worker !== workerId) return;
    names.delete(name);
    const holders = rooms.get(entry.room);
    const left = holders.get(workerId) - 1;
    if (left > 0) holders.set(workerId, left);
    else holders.delete(workerId);
    if (holders.size === 0) rooms.delete(entry.room);
  }

  cluster.on('message', (worker, msg) => {
    switch (msg?.chat) {
      case 'say': {
        const holders = rooms.get(msg.room);
        if (holders === undefined) return;
        const deliver = { chat: 'deliver', room: msg.room, out: msg.out };
        for (const id of holders.keys()) cluster.workers[id]?.send(deliver);
        return;
      }
      case 'join': {
        const ok = !names.has(msg.name);
        if (ok) {
          names.set(msg.name, { worker: worker.id, room: msg.room });
          let holders = rooms.get(msg.room);
          if (holders === undefined) rooms.set(msg.room, (holders = new Map()));
          holders.set(worker.id, (holders.get(worker.id) ?? 0) + 1);
        }
        worker.send({ chat: 'joined', id: msg.id, ok });
        return;
      }
      case 'leave':
        leave(msg.name, worker.id);
        return;
    }
  });

  // A worker that dies takes its members with it: free their names.
  cluster.on('exit', (worker) => {
    for (const [name, entry] of names) if (entry.worker === worker.id) leave(name, worker.id);
  });
}

function toPrimary(msg) {
  if (process.connected) process.send(msg);
}

/**
 * The worker's half: serves /chat and returns the WebSocketServer (noServer: the shared serve.js
 * routes the http.Server's upgrades by path, /chat to it and /stream to the shared stream).
 */
function attachChat() {
  // permessage-deflate stays off (ws's default for a server).
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME });
  const rooms = new Map(); // room -> Set of this worker's WebSockets in it
  const joining = new Map(); // join id -> callback for the primary's answer
  let nextId = 0;

  process.on('message', (msg) => {
    switch (msg?.chat) {
      case 'deliver': {
        const room = rooms.get(msg.room);
        if (room === undefined) return;
        // ws.send queues in the socket's write buffer when the peer is slow.
        for (const peer of room) if (peer.readyState === WebSocket.OPEN) peer.send(msg.out);
        return;
      }
      case 'joined': {
        const answered = joining.get(msg.id);
        joining.delete(msg.id);
        answered?.(msg.ok);
        return;
      }
    }
  });

  wss.on('connection', (ws) => {
    let state = 'new'; // new | joining | member | refused | closed
    let member = null; // { name, room } while a member
    let held = []; // frames that came while the primary was deciding the join

    // ws closes the connection itself on a protocol error (1009 for an oversize frame) and
    // then emits 'error': listen, or the worker would crash.
    ws.on('error', () => {});

    const joined = (name, roomName) => (ok) => {
      if (state === 'closed') { // gone while the primary was deciding
        if (ok) toPrimary({ chat: 'leave', name });
        return;
      }
      if (!ok) {
        state = 'refused';
        held = [];
        system(ws, `the name ${name} is taken`);
        ws.close(1008, 'name taken'); // queued after the system frame
        return;
      }
      state = 'member';
      member = { name, room: roomName };
      let room = rooms.get(roomName);
      if (room === undefined) rooms.set(roomName, (room = new Set()));
      room.add(ws);
      const frames = held;
      held = [];
      for (const data of frames) handle(data);
    };

    function handle(data) {
      if (state === 'refused' || state === 'closed') return;
      if (state === 'joining') {
        held.push(data); // the join is answered first; order is kept
        return;
      }
      const f = parseFrame(data);
      if (f.error) return system(ws, f.error);
      if (state === 'new') {
        if (f.message !== undefined) return system(ws, 'join first with {"name","chat"}');
        state = 'joining';
        const id = ++nextId;
        joining.set(id, joined(f.name, f.chat));
        toPrimary({ chat: 'join', id, name: f.name, room: f.chat });
        return;
      }
      if (f.message === undefined) return system(ws, 'a message needs name, chat and message');
      const out = JSON.stringify({ name: member.name, chat: member.room, message: f.message });
      toPrimary({ chat: 'say', room: member.room, out });
    }

    ws.on('message', handle);

    ws.on('close', () => {
      if (state === 'member') {
        const room = rooms.get(member.room);
        room.delete(ws);
        if (room.size === 0) rooms.delete(member.room);
        toPrimary({ chat: 'leave', name: member.name });
        member = null;
      }
      state = 'closed';
      held = [];
    });
  });

  return wss;
}

module.exports = { chatPrimary, attachChat };
