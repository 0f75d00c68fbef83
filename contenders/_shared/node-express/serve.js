'use strict';

// One event loop's server, the same in node-express (the one process) and in every
// node-express-cluster worker, so that the two differ only in one loop against a cluster of
// them: the Express app on 127.0.0.1:$PORT (or $BIND_ADDRESS:$PORT), the /chat and /stream
// WebSockets on the same http.Server, and the stop on SIGTERM.
//
// These shared files are required by path from the contenders' folders. Node resolves a bare
// require('express') from the requiring file's own folder upwards, which from here is
// contenders/_shared/…, where nothing is installed; so the packages come in as arguments, from
// the contender that installed them (its package.json and lock pin their versions). The shared
// files themselves require only Node and each other.
const { createApp } = require('./app.js');
const { createDb, poolSize } = require('./db.js');
const { createStream, streamRoutes, routeUpgrades, wssOptions } = require('../node-stream/stream.js');

const GRACE_MS = 2000; // open requests get this long after SIGTERM, then their connections close

/**
 * Starts the server. packages: { express, WebSocketServer, pg } from the contender's
 * node_modules. options.label names this process in its log lines; options.resources is the
 * folder of the data files; options.attachChat() returns the contender's chat WebSocketServer
 * (its rooms are its own); options.statsOf(stream), when given, is what /stream/stats answers
 * (the cluster's totals), else this process's counters; options.dbPool, when given, is this
 * process's share of DB_POOL (a cluster worker's), else DB_POOL itself.
 */
function serve({ express, WebSocketServer, pg }, { label, resources, attachChat, statsOf, dbPool }) {
  const port = Number(process.env.PORT || 8080);
  // BIND_ADDRESS only in a multi-host run, where load agents on other hosts must reach it. In a
  // cluster the workers' address is the one the primary listens on for them.
  const host = process.env.BIND_ADDRESS || '127.0.0.1';

  // /stream (study 003): BACKPRESSURE decides how each client's messages reach ws.
  const stream = createStream(new WebSocketServer(wssOptions));
  const stats = statsOf ? statsOf(stream) : stream.stats;
  // /db: the pool is made at the first /db request; without DB_URL (or with a bad DB_POOL)
  // /db answers 502 and nothing else changes.
  let db;
  try {
    db = createDb(pg, { url: process.env.DB_URL, max: dbPool ?? poolSize(process.env.DB_POOL), label });
  } catch (err) {
    console.error(`${label} pid ${process.pid}: ${err.message}; /db answers 502`);
    db = { query: () => Promise.reject(err), end: () => {} };
  }
  const app = createApp(express, {
    host,
    port,
    resources,
    db,
    mount: (routes, { onlyGet }) => streamRoutes(routes, stats, onlyGet),
  });

  const server = app.listen(port, host, (err) => {
    if (err) {
      console.error(`${label} cannot listen on ${host}:${port}: ${err.message}`);
      process.exit(1);
    }
    console.log(`${label} listening on ${host}:${port} (Node ${process.version}, pid ${process.pid}, BACKPRESSURE ${stream.backpressure ? 'on' : 'off'})`);
  });
  const chat = attachChat();
  // WebSocket upgrades on the same server, by path; every other request goes to Express.
  routeUpgrades(server, {
    '/chat': (req, socket, head) => chat.handleUpgrade(req, socket, head, (ws) => chat.emit('connection', ws, req)),
    '/stream': stream.handleUpgrade,
  });

  // SIGTERM comes from the lab (to the whole process group) and, in a cluster, from the primary.
  let stopping = false;
  process.on('SIGTERM', () => {
    if (stopping) return;
    stopping = true;
    console.log(`${label} pid ${process.pid}: SIGTERM, closing`);
    // Stops accepting; idle keep-alive connections close now. When the last connection has
    // closed, the database pool ends (its connections say goodbye to PostgreSQL), then exit.
    server.close(() => Promise.resolve(db.end()).finally(() => process.exit(0)));
    for (const ws of chat.clients) ws.close(1001, 'server stopping');
    stream.closeAll(1001, 'server stopping', GRACE_MS); // the generators stop too
    setTimeout(() => server.closeAllConnections(), GRACE_MS).unref();
    setTimeout(() => process.exit(0), GRACE_MS + 3000).unref(); // pending timers must not hold the exit
  });
}

module.exports = { serve, GRACE_MS };
