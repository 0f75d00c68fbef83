'use strict';

// Node's cluster module: the primary forks one worker per available CPU (taskset counts) and
// each worker runs the Express app on its own event loop; they share 127.0.0.1:$PORT.
const cluster = require('node:cluster');
const os = require('node:os');
const { chatPrimary, attachChat } = require('./chat.js');
const { streamPrimary, clusterStats, createStream, streamRoutes, routeUpgrades, wssOptions } = require('./stream.js');

const port = Number(process.env.PORT || 8080);
const GRACE_MS = 2000; // open requests get this long after SIGTERM, then their connections close

if (cluster.isPrimary) {
  const count = os.availableParallelism();
  console.log(`node-express-cluster primary pid ${process.pid} (Node ${process.version}): forking ${count} worker(s)`);
  let alive = 0;
  let stopping = false;
  chatPrimary(cluster); // /chat: the names and the rooms' workers, for every worker
  streamPrimary(cluster); // /stream/stats: asks every worker and sums
  for (let i = 0; i < count; i++) {
    cluster.fork();
    alive++;
  }

  // No restarts, on purpose: a dying worker is a crash the lab should see.
  cluster.on('exit', (worker, code, signal) => {
    alive--;
    if (!stopping) {
      console.error(`worker ${worker.process.pid} died (${signal ?? `exit code ${code}`}); not restarted, ${alive} left`);
    }
    if (alive === 0) process.exit(stopping ? 0 : 1);
  });

  process.on('SIGTERM', () => {
    if (stopping) return;
    stopping = true;
    console.log('SIGTERM: stopping the workers');
    for (const worker of Object.values(cluster.workers)) worker.process.kill('SIGTERM');
    setTimeout(() => {
      for (const worker of Object.values(cluster.workers)) worker.process.kill('SIGKILL');
      process.exit(0);
    }, GRACE_MS + 4000).unref();
  });
} else {
  const { WebSocketServer } = require('ws');
  const { createApp } = require('./app.js');
  // /stream (study 003): this worker serves the clients it accepts; the stats are the cluster's.
  const stream = createStream(new WebSocketServer(wssOptions));
  const stats = clusterStats(stream);
  const app = createApp(port, (routes, { onlyGet }) => streamRoutes(routes, stats, onlyGet));
  const server = app.listen(port, '127.0.0.1', (err) => {
    if (err) {
      console.error(`worker ${process.pid} cannot listen on 127.0.0.1:${port}: ${err.message}`);
      process.exit(1);
    }
    console.log(`worker ${process.pid} listening on 127.0.0.1:${port} (BACKPRESSURE ${stream.backpressure ? 'on' : 'off'})`);
  });
  const chat = attachChat();
  // WebSocket upgrades on the same server, by path; every other request goes to Express.
  routeUpgrades(server, {
    '/chat': (req, socket, head) => chat.handleUpgrade(req, socket, head, (ws) => chat.emit('connection', ws, req)),
    '/stream': stream.handleUpgrade,
  });

  // SIGTERM comes from the lab (to the whole process group) and from the primary.
  let stopping = false;
  process.on('SIGTERM', () => {
    if (stopping) return;
    stopping = true;
    server.close(() => process.exit(0)); // stops accepting; idle keep-alive connections close now
    for (const ws of chat.clients) ws.close(1001, 'server stopping');
    stream.closeAll(1001, 'server stopping', GRACE_MS); // the generators stop too
    setTimeout(() => server.closeAllConnections(), GRACE_MS).unref();
    setTimeout(() => process.exit(0), GRACE_MS + 3000).unref(); // pending timers must not hold the exit
  });
}
