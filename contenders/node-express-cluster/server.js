'use strict';

// Node's cluster module: the primary forks one worker per available CPU (taskset counts) and
// each worker runs the Express app on its own event loop; they share 127.0.0.1:$PORT (or
// $BIND_ADDRESS:$PORT), which the primary listens on for them.
const cluster = require('node:cluster');
const os = require('node:os');
const path = require('node:path');
const { serve, GRACE_MS } = require('../_shared/node-express/serve.js');
const { chatPrimary, attachChat } = require('./chat.js');
const { streamPrimary, clusterStats } = require('./stream.js');

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
  // A worker: the very server node-express runs (../_shared/node-express/serve.js, which takes
  // express and ws from here), with this folder's chat and the cluster's /stream/stats.
  const express = require('express');
  const { WebSocketServer } = require('ws');
  serve({ express, WebSocketServer }, {
    label: 'node-express-cluster worker',
    resources: path.join(__dirname, 'resources'),
    attachChat,
    statsOf: clusterStats, // /stream/stats: this worker asks the primary, which sums every worker's
  });
}
