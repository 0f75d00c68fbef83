'use strict';

// The database of /db (arena's own study), for node-express and every node-express-cluster
// worker alike: one node-postgres pg.Pool per process, made at the first /db request, so that
// the server starts and is ready with DB_URL unset or the database down. pg comes in as an
// argument from the contender that installed it (see serve.js); this file needs nothing but Node.

const ACQUIRE_MS = 30000; // a pooled connection within this, or a 502

/**
 * DB_POOL, the most connections of all the contender's processes together: an integer in
 * 1..256, undefined when unset. Throws a message on anything else.
 */
function poolSize(raw) {
  if (raw === undefined || raw === '') return undefined;
  if (/^\d+$/.test(raw)) {
    const n = Number(raw);
    if (n >= 1 && n <= 256) return n;
  }
  throw new RangeError(`DB_POOL must be an integer in 1..256, got '${raw}'`);
}

/**
 * This process's database. pg is the contender's node-postgres; url DB_URL; max the pool's
 * maximum size (undefined: pg's default, which the lab never leaves it at); label names the
 * process in its log lines. query(text, values) runs one parameterised query on a pooled
 * connection (pool.query: check out, run, give back) and rejects with a message when there is
 * no database to ask.
 */
function createDb(pg, { url, max, label }) {
  let pool; // made at the first query
  let unusable; // why there is no pool to make (no DB_URL), as an Error
  if (!url) unusable = new Error('DB_URL is not set');

  function open() {
    pool = new pg.Pool({
      connectionString: url,
      max,
      // Both the connect of a new client and the wait for a pooled one when all max are
      // taken (pg-pool times a queued checkout out with the same option).
      connectionTimeoutMillis: ACQUIRE_MS,
    });
    // An idle client's connection that fails (the database restarted or went away) is
    // removed from the pool, which emits 'error': without a listener it would crash the
    // process. The next checkout connects anew.
    pool.on('error', (err) => {
      console.error(`${label} pid ${process.pid}: idle database connection failed: ${err.code ?? ''} ${err.message}`);
    });
    console.log(`${label} pid ${process.pid}: database pool made at the first /db request (max ${max ?? "pg's default"})`);
    return pool;
  }

  return {
    async query(text, values) {
      if (unusable) throw unusable;
      return (pool ?? open()).query(text, values);
    },
    /** Closes the pool's idle connections; the ones in use close when given back. */
    end() {
      return pool?.end().catch(() => {});
    },
  };
}

module.exports = { createDb, poolSize };
