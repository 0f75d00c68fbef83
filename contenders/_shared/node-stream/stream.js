'use strict';

// /stream (study 003) on ws: per client, a generator on the event loop makes the messages
// and a sender hands them to ws.send.
//
// BACKPRESSURE=on: the generator puts each message into the client's bounded ring (5000, the
// oldest waiting message is dropped and counted when it is full). The sender keeps at most 100
// sends in flight: one is in flight from ws.send(data, cb) until ws calls cb, which it does
// once the frame is written to the socket (handed to the kernel), and the sender also stops
// while ws.bufferedAmount (bytes queued in ws and in the socket's write buffer, not yet sent)
// is at 1 MiB. Each callback sends the next waiting message.
// BACKPRESSURE=off: the generator calls ws.send for every message at once; a slow client's
// frames pile up in the socket's write buffer (ws.bufferedAmount), without bound.
//
// node-express-cluster uses this file too: it needs nothing but
// Node itself, so it loads from either folder whichever node_modules is installed.

const MIN_RATE = 0;
const MAX_RATE = 1_000_000;
const MIN_SIZE = 16;
const MAX_SIZE = 65536;
const DEFAULT_SIZE = 250;

const MAX_IN_FLIGHT = 100; // sends handed to ws whose callback has not come yet
const MAX_WAITING = 5000; // generated messages waiting in a client's ring
const MAX_BUFFERED = 1 << 20; // ws.bufferedAmount at which the sender waits for callbacks
const BATCH = 100; // rate 0: messages per generator turn, then setImmediate
const TICK_MS = 10; // rate > 0: the generator's tick
const MAX_CLIENT_FRAME = 64 * 1024; // what a client sends is ignored; bigger frames close 1009

const TEXT = { binary: false }; // the frames are Buffers holding UTF-8 text: send them as text

/** BACKPRESSURE: "on" (or unset) or "off". */
function backpressureFromEnv(env = process.env) {
  const v = (env.BACKPRESSURE ?? '').trim().toLowerCase();
  if (v === '' || v === 'on') return true;
  if (v === 'off') return false;
  throw new Error(`BACKPRESSURE must be on or off, got '${env.BACKPRESSURE}'`);
}

/** One integer query parameter within [min, max], or an error text. */
function intParam(params, name, dflt, min, max) {
  const all = params.getAll(name);
  if (all.length === 0) return { value: dflt };
  if (all.length === 1 && /^[+-]?\d+$/.test(all[0])) {
    const n = Number(all[0]);
    if (n >= min && n <= max) return { value: n };
  }
  return { error: `${name} must be an integer in ${min}..${max}, got '${all.join(',')}'` };
}

/** ?rate=R&size=B of a request URL: { rate, size } or { error }. */
function streamParams(url) {
  const q = url.indexOf('?');
  const params = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
  const rate = intParam(params, 'rate', 0, MIN_RATE, MAX_RATE);
  if (rate.error) return { error: rate.error };
  const size = intParam(params, 'size', DEFAULT_SIZE, MIN_SIZE, MAX_SIZE);
  if (size.error) return { error: size.error };
  return { rate: rate.value, size: size.value };
}

const PAD = Buffer.from('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'.repeat(1261), 'latin1');
const QUOTE_BRACE = 0x7d22; // '"}' as a little-endian uint16

/** Microseconds since the Unix epoch, now. */
function nowMicros() {
  return Math.floor((performance.timeOrigin + performance.now()) * 1000);
}

/** The frame {"seq":seq,"ts":µs,"pad":"…"}, built now, exactly size bytes (or its head alone). */
function frame(seq, size) {
  const head = `{"seq":${seq},"ts":${nowMicros()},"pad":"`;
  const pad = Math.max(0, size - head.length - 2);
  const buf = Buffer.allocUnsafe(head.length + pad + 2);
  buf.write(head, 0, 'latin1');
  PAD.copy(buf, head.length, 0, pad);
  buf.writeUInt16LE(QUOTE_BRACE, head.length + pad);
  return buf;
}

/** A FIFO ring that grows up to max; pushing onto a full one drops the oldest. */
class Ring {
  constructor(max) {
    this.max = max;
    this.buf = new Array(Math.min(64, max));
    this.head = 0;
    this.length = 0;
  }

  /** Appends x; returns true when the oldest was dropped to make room. */
  push(x) {
    let dropped = false;
    if (this.length === this.max) {
      this.shift();
      dropped = true;
    } else if (this.length === this.buf.length) {
      this.grow();
    }
    const cap = this.buf.length;
    this.buf[(this.head + this.length) % cap] = x;
    this.length++;
    return dropped;
  }

  shift() {
    const x = this.buf[this.head];
    this.buf[this.head] = undefined;
    this.head = (this.head + 1) % this.buf.length;
    this.length--;
    return x;
  }

  clear() {
    this.buf = new Array(1);
    this.head = 0;
    this.length = 0;
  }

  grow() {
    const next = new Array(Math.min(this.max, this.buf.length * 2));
    for (let i = 0; i < this.length; i++) next[i] = this.buf[(this.head + i) % this.buf.length];
    this.buf = next;
    this.head = 0;
  }
}

/** Writes a plain HTTP answer on an upgrade's socket (no WebSocket) and closes it. */
function refuseUpgrade(socket, status, statusText, body, headers = {}) {
  const text = JSON.stringify(body);
  const lines = [
    `HTTP/1.1 ${status} ${statusText}`,
    'Connection: close',
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(text)}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  socket.once('error', () => {});
  socket.once('finish', () => socket.destroy());
  socket.end(`${lines.join('\r\n')}\r\n\r\n${text}`);
}

/**
 * The /stream server of one process. wss is a ws WebSocketServer made with noServer: true;
 * the http.Server's 'upgrade' listener hands /stream requests to handleUpgrade.
 */
function createStream(wss, { backpressure = backpressureFromEnv() } = {}) {
  const totals = { clients: 0, generated: 0, sent: 0, dropped: 0 };
  const open = new Set(); // the clients' stop functions, for the shutdown

  function serve(ws, rate, size) {
    totals.clients++;
    let seq = 0;
    let closed = false;
    let timer = null; // rate > 0: the tick's interval
    let immediate = null; // rate 0: the next batch
    const waiting = backpressure ? new Ring(MAX_WAITING) : null;
    let inFlight = 0;

    const sendDone = (err) => {
      inFlight--;
      if (!err) pump(); // an error: the connection is going, and 'close' follows
    };

    // Takes waiting messages into flight while fewer than 100 are in flight and ws has less
    // than MAX_BUFFERED bytes not yet written to the kernel.
    function pump() {
      while (waiting.length > 0 && inFlight < MAX_IN_FLIGHT && ws.readyState === ws.OPEN
             && (inFlight === 0 || ws.bufferedAmount < MAX_BUFFERED)) {
        inFlight++;
        totals.sent++;
        ws.send(waiting.shift(), TEXT, sendDone);
      }
    }

    function generate(n) {
      if (ws.readyState !== ws.OPEN) return; // closing: 'close' stops the generator
      for (let i = 0; i < n; i++) {
        const msg = frame(seq++, size);
        totals.generated++;
        if (backpressure) {
          if (waiting.push(msg)) totals.dropped++;
        } else {
          totals.sent++;
          ws.send(msg, TEXT); // ws queues it in the socket's write buffer, without bound
        }
      }
      if (backpressure) pump();
    }

    if (rate === 0) {
      // As fast as the loop allows: a batch, then a new task, so sends and others interleave.
      const batch = () => {
        immediate = null;
        if (closed) return;
        generate(BATCH);
        immediate = setImmediate(batch);
      };
      immediate = setImmediate(batch);
    } else {
      // A tick every 10 ms makes what the clock says is due since the start.
      const start = performance.now();
      timer = setInterval(() => {
        const due = Math.floor(((performance.now() - start) * rate) / 1000) - seq;
        if (due > 0) generate(due);
      }, TICK_MS);
    }

    function stop() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      clearImmediate(immediate);
      if (waiting) waiting.clear(); // the waiting messages are garbage now
      open.delete(stop);
      totals.clients--;
    }
    open.add(stop);

    ws.on('error', () => {}); // ws closes the connection itself and then emits 'close'
    ws.on('close', stop); // what the client sends is ignored: no 'message' listener
  }

  /** A /stream upgrade from the http.Server's 'upgrade' event. */
  function handleUpgrade(req, socket, head) {
    const p = streamParams(req.url);
    if (p.error) {
      refuseUpgrade(socket, 400, 'Bad Request', { error: p.error });
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => serve(ws, p.rate, p.size));
  }

  return {
    handleUpgrade,
    /** This process's counters. */
    stats: () => ({ ...totals }),
    /**
     * Stops every generator and closes every /stream connection with code; those whose close
     * handshake has not ended after graceMs (a slow client: the close frame waits behind its
     * data) are terminated.
     */
    closeAll(code, reason, graceMs) {
      for (const ws of wss.clients) ws.close(code, reason);
      for (const stop of [...open]) stop();
      setTimeout(() => {
        for (const ws of wss.clients) ws.terminate();
      }, graceMs).unref();
    },
    backpressure,
  };
}

/** The options every /stream WebSocketServer uses (permessage-deflate stays off: ws's default). */
const wssOptions = { noServer: true, maxPayload: MAX_CLIENT_FRAME };

/**
 * Express routes: GET /stream without an upgrade (400 for bad parameters as with one, else
 * 426) and GET /stream/stats, answered from stats() (a value or a promise).
 */
function streamRoutes(app, stats, onlyGet) {
  app.route('/stream').get((req, res) => {
    const p = streamParams(req.originalUrl);
    if (p.error) return res.status(400).json({ error: p.error });
    res.set({ Connection: 'Upgrade', Upgrade: 'websocket' })
      .status(426).json({ error: '/stream is a WebSocket: send an Upgrade request' });
  }).all(onlyGet);
  app.route('/stream/stats').get(async (req, res) => {
    res.json(await stats());
  }).all(onlyGet);
}

/** Routes the http.Server's upgrades by path; an unknown path gets a JSON 404. */
function routeUpgrades(server, routes) {
  server.on('upgrade', (req, socket, head) => {
    const q = req.url.indexOf('?');
    const route = routes[q === -1 ? req.url : req.url.slice(0, q)];
    if (route) return route(req, socket, head);
    refuseUpgrade(socket, 404, 'Not Found', { error: `no WebSocket at ${req.url}` });
  });
}

module.exports = {
  backpressureFromEnv, streamParams, frame, Ring, createStream, wssOptions, streamRoutes, routeUpgrades,
};
