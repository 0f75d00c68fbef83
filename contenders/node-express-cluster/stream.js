'use strict';

// /stream (study 003) under node:cluster. A /stream client is served wholly by the worker
// that accepted its connection, with the shared code (../_shared/node-stream/stream.js: the
// generator, the bounded drop-oldest ring, the sends in flight; it needs nothing but Node).
// Only /stream/stats needs every worker: the totals are over all of them, so the worker that
// got the request asks the primary, which asks every worker and sums. Over the cluster's IPC:
//   worker -> primary  { stream: 'stats?', id }             answered by { stream: 'stats', id, stats }
//   primary -> worker  { stream: 'count', id }              answered by { stream: 'counted', id, stats }
const ASK_MS = 2000; // the primary answers with the workers that answered within this

const ZERO = { clients: 0, generated: 0, sent: 0, dropped: 0 };

/** The primary's half: call once in the primary. */
function streamPrimary(cluster) {
  const pending = new Map(); // count id -> { asker, askId, waiting: Set of worker ids, sum, timer }
  let nextId = 0;

  function answer(id) {
    const p = pending.get(id);
    pending.delete(id);
    clearTimeout(p.timer);
    p.asker.send({ stream: 'stats', id: p.askId, stats: p.sum });
  }

  cluster.on('message', (worker, msg) => {
    switch (msg?.stream) {
      case 'stats?': {
        const id = ++nextId;
        const workers = Object.values(cluster.workers).filter((w) => w.isConnected());
        const p = { asker: worker, askId: msg.id, waiting: new Set(workers.map((w) => w.id)), sum: { ...ZERO } };
        p.timer = setTimeout(() => answer(id), ASK_MS);
        pending.set(id, p);
        for (const w of workers) w.send({ stream: 'count', id });
        return;
      }
      case 'counted': {
        const p = pending.get(msg.id);
        if (p === undefined || !p.waiting.delete(worker.id)) return;
        for (const k of Object.keys(ZERO)) p.sum[k] += msg.stats[k];
        if (p.waiting.size === 0) answer(msg.id);
        return;
      }
    }
  });

  // A worker that dies answers no more: stop waiting for it.
  cluster.on('exit', (worker) => {
    for (const [id, p] of pending) {
      if (p.waiting.delete(worker.id) && p.waiting.size === 0) answer(id);
    }
  });
}

/**
 * The worker's half: answers the primary's counts from stream (this worker's createStream)
 * and returns stats(), a promise of the totals over every worker.
 */
function clusterStats(stream) {
  const asking = new Map(); // ask id -> { resolve, reject, timer }
  let nextId = 0;

  process.on('message', (msg) => {
    switch (msg?.stream) {
      case 'count':
        if (process.connected) process.send({ stream: 'counted', id: msg.id, stats: stream.stats() });
        return;
      case 'stats': {
        const a = asking.get(msg.id);
        if (a === undefined) return;
        asking.delete(msg.id);
        clearTimeout(a.timer);
        a.resolve(msg.stats);
        return;
      }
    }
  });

  return () => new Promise((resolve, reject) => {
    if (!process.connected) return reject(new Error('the cluster primary is gone'));
    const id = ++nextId;
    const timer = setTimeout(() => {
      asking.delete(id);
      reject(new Error('the cluster primary did not answer'));
    }, ASK_MS * 2);
    asking.set(id, { resolve, reject, timer });
    process.send({ stream: 'stats?', id });
  });
}

module.exports = { streamPrimary, clusterStats };
