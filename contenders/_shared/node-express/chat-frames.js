'use strict';

// /chat's frames, read and written the same way by node-express and node-express-cluster,
// whose chats differ only in where the names and rooms live (one process, or the primary).
// Needs nothing but Node.

const MAX_FRAME = 64 * 1024; // a bigger message: ws closes the connection with 1009

/** Parses one frame: { name, chat, message? } with string fields, or an error text. */
function parseFrame(data) {
  let f;
  try {
    f = JSON.parse(data.toString());
  } catch {
    return { error: 'not JSON' };
  }
  if (f === null || typeof f !== 'object' || Array.isArray(f)) return { error: 'not a JSON object' };
  const { name, chat, message } = f;
  if (typeof name !== 'string' || name === '' || typeof chat !== 'string' || chat === '') {
    return { error: 'name and chat must be non-empty strings' };
  }
  if (message !== undefined && typeof message !== 'string') return { error: 'message must be a string' };
  return { name, chat, message };
}

/** A {"type":"system"} notice to one member. */
function system(ws, message) {
  ws.send(JSON.stringify({ type: 'system', message }));
}

module.exports = { MAX_FRAME, parseFrame, system };
