'use strict';

// /chat (study 000): a ws WebSocketServer on the same http.Server as the Express app. Rooms
// and names live in Maps on the one event loop, so a broadcast is a plain loop of ws.send.
// The frames are read and written as in node-express-cluster (../_shared/node-express).
const { WebSocketServer, WebSocket } = require('ws');
const { MAX_FRAME, parseFrame, system } = require('../_shared/node-express/chat-frames.js');

/**
 * Serves /chat and returns the WebSocketServer (noServer: the shared serve.js
 * routes the http.Server's upgrades by path, /chat to it and /stream to the shared stream).
 */
function attachChat() {
  // permessage-deflate stays off (ws's default for a server).
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME });
  const names = new Map(); // name -> its WebSocket, while connected
  const rooms = new Map(); // room -> Set of WebSockets

  wss.on('connection', (ws) => {
    let member = null; // { name, room } once joined
    let refused = false; // a taken name: closing with 1008

    // ws closes the connection itself on a protocol error (1009 for an oversize frame) and
    // then emits 'error': listen, or the process would crash.
    ws.on('error', () => {});

    ws.on('message', (data) => {
      if (refused) return;
      const f = parseFrame(data);
      if (f.error) return system(ws, f.error);
      if (member === null) {
        if (f.message !== undefined) return system(ws, 'join first with {"name","chat"}');
        if (names.has(f.name)) {
          refused = true;
          system(ws, `the name ${f.name} is taken`);
          ws.close(1008, 'name taken'); // queued after the system frame
          return;
        }
        member = { name: f.name, room: f.chat };
        names.set(f.name, ws);
        let room = rooms.get(f.chat);
        if (room === undefined) rooms.set(f.chat, (room = new Set()));
        room.add(ws);
        return;
      }
      if (f.message === undefined) return system(ws, 'a message needs name, chat and message');
      const out = JSON.stringify({ name: member.name, chat: member.room, message: f.message });
      // One event loop: every member gets one sender's messages in the order sent. ws.send
      // queues in the socket's write buffer when the peer is slow.
      for (const peer of rooms.get(member.room)) {
        if (peer.readyState === WebSocket.OPEN) peer.send(out);
      }
    });

    ws.on('close', () => {
      if (member === null) return;
      names.delete(member.name);
      const room = rooms.get(member.room);
      room.delete(ws);
      if (room.size === 0) rooms.delete(member.room);
      member = null;
    });
  });

  return wss;
}

module.exports = { attachChat };
