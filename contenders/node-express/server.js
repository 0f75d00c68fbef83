'use strict';

// One Node.js process, one event loop: listens on 127.0.0.1:$PORT.
const { WebSocketServer } = require('ws');
const { createApp } = require('./app.js');
const { attachChat } = require('./chat.js');
const { createStream, streamRoutes, routeUpgrades, wssOptions } = require('../_shared/node-stream/stream.js');

const port = Number(process.env.PORT || 8080);
const GRACE_MS = 2000; // open requests get this long after SIGTERM, then their connections close

// /stream (study 003): BACKPRESSURE decides how each client's messages reach ws.
const stream = createStream(new WebSocketServer(wssOptions));
const app = createApp(port, (routes, { onlyGet }) => streamRoutes(routes, stream.stats, onlyGet));

const server = app.listen(port, '127.0.0.1', (err) => {
  if (err) {
    console.error(`cannot listen on 127.0.0.1:${port}: ${err.message}`);
    process.exit(1);
  }
  console.log(`node-express listening on 127.0.0.1:${port} (Node ${process.version}, pid ${process.pid}, BACKPRESSURE ${stream.backpressure ? 'on' : 'off'})`);
});
const chat = attachChat();
// WebSocket upgrades on the same server, by path; every other request goes to Express.
routeUpgrades(server, {
  '/chat': (req, socket, head) => chat.handleUpgrade(req, socket, head, (ws) => chat.emit('connection', ws, req)),
  '/stream': stream.handleUpgrade,
});

let stopping = false;
process.on('SIGTERM', () => {
  if (stopping) return;
  stopping = true;
  console.log('SIGTERM: closing');
  server.close(() => process.exit(0)); // stops accepting; idle keep-alive connections close now
  for (const ws of chat.clients) ws.close(1001, 'server stopping');
  stream.closeAll(1001, 'server stopping', GRACE_MS); // the generators stop too
  setTimeout(() => server.closeAllConnections(), GRACE_MS).unref();
  setTimeout(() => process.exit(0), GRACE_MS + 3000).unref(); // pending timers must not hold the exit
});
