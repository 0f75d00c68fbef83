'use strict';

// Node's cluster module: the primary forks one worker per available CPU (taskset counts) and
// each worker runs the Express app on its own event loop; they share 127.0.0.1:$PORT (or
// $BIND_ADDRESS:$PORT), which the primary listens on for them. /db: each worker has its own
// pg.Pool, and the primary splits DB_POOL among them (dbShares).
const cluster = require('node:cluster');
const os = require('node:os');
const path = require('node:path');
const { serve, GRACE_MS } = require('../_shared/node-express/serve.js');
const { chatPrimary, attachChat } = require('./chat.js');
const { streamPrimary, clusterStats } = require('./stream.js');
const { poolSize } = require('../_shared/node-express/db.js');

// DB_POOL is the most connections of the whole contender, so each worker's pool gets a share:
// as even as it goes, the remainder to the first workers, and at least 1 each (so with fewer
// connections than workers the total is the worker count). undefined shares when DB_POOL is
// unset or bad: then every worker decides as node-express does (and logs a bad one).
function dbShares(count) {
  let total;
  try {
    total = poolSize(process.env.DB_POOL);
  } catch {
    total = undefined;
  }
  return Array.from({ length: count }, (_, i) =>
    total === undefined ? undefined : Math.max(1, Math.floor(total / count) + (i < total % count ? 1 : 0)));
}

if (cluster.isPrimary) {
  const count = os.availableParallelism();
  const shares = dbShares(count);
  console.log(`node-express-cluster primary pid ${process.pid} (Node ${process.version}): forking ${count} worker(s)`
    + (shares[0] === undefined ? '' : `, /db pools of ${shares.join(' + ')} connection(s) from DB_POOL=${process.env.DB_POOL}`));
  let alive = 0;
  let stopping = false;
  chatPrimary(cluster); // /chat: the names and the rooms' workers, for every worker
  streamPrimary(cluster); // /stream/stats: asks every worker and sums
  for (let i = 0; i < count; i++) {
    cluster.fork(shares[i] === undefined ? {} : { DB_POOL_WORKER: String(shares[i]) });
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
  // express, ws and pg from here), with this folder's chat, the cluster's /stream/stats and its
  // share of DB_POOL, which the primary gave it as DB_POOL_WORKER.
  const express = require('express');
  const { WebSocketServer } = require('ws');
  const pg = require('pg');
  const share = Number(process.env.DB_POOL_WORKER);
  serve({ express, WebSocketServer, pg }, {
    label: 'node-express-cluster worker',
    resources: path.join(__dirname, 'resources'),
    attachChat,
    statsOf: clusterStats, // /stream/stats: this worker asks the primary, which sums every worker's
    dbPool: Number.isInteger(share) && share >= 1 ? share : undefined, // this worker's pg.Pool max
  });
}
