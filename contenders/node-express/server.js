'use strict';

// One Node.js process, one event loop: listens on 127.0.0.1:$PORT.
const { createApp } = require('./app.js');
const { attachChat } = require('./chat.js');

const port = Number(process.env.PORT || 8080);
const GRACE_MS = 2000; // open requests get this long after SIGTERM, then their connections close

const server = createApp(port).listen(port, '127.0.0.1', (err) => {
  if (err) {
    console.error(`cannot listen on 127.0.0.1:${port}: ${err.message}`);
    process.exit(1);
  }
  console.log(`node-express listening on 127.0.0.1:${port} (Node ${process.version}, pid ${process.pid})`);
});
const chat = attachChat(server); // WebSocket /chat on the same server

let stopping = false;
process.on('SIGTERM', () => {
  if (stopping) return;
  stopping = true;
  console.log('SIGTERM: closing');
  server.close(() => process.exit(0)); // stops accepting; idle keep-alive connections close now
  for (const ws of chat.clients) ws.close(1001, 'server stopping');
  setTimeout(() => server.closeAllConnections(), GRACE_MS).unref();
  setTimeout(() => process.exit(0), GRACE_MS + 3000).unref(); // pending timers must not hold the exit
});
