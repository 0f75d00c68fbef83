'use strict';

// The Express app: every route of the contract and its JSON errors, for node-express and
// node-express-cluster alike (serve.js listens). express comes in as an argument: see serve.js.

const TIMEOUT_MS = 2000; // downstream answer, /data/{id}

/** The typed shape of /resources/dataN.json: /data/{id} decodes into it and encodes it back. */
class Data {
  constructor(id, value, active, props) {
    this.id = id;
    this.value = value;
    this.active = active;
    this.props = props;
  }

  /** Throws on anything that does not have the shape. */
  static from(json) {
    const { id, value, active, props } = json ?? {};
    if (!Number.isInteger(id) || typeof value !== 'string' || typeof active !== 'boolean'
        || !Array.isArray(props) || !props.every((p) => typeof p === 'string')) {
      throw new TypeError('downstream body is not a data record');
    }
    return new Data(id, value, active, props);
  }
}

function httpError(status, message) {
  return Object.assign(new Error(message), { status });
}

/**
 * ?ms=N: an integer in 0..60000, else a 400 (also for "?ms=" and a repeated ms). Absent: dflt,
 * or a 400 when dflt is undefined (ms is required).
 */
function millis(req, dflt) {
  const raw = req.query.ms;
  if (raw === undefined && dflt !== undefined) return dflt;
  if (typeof raw === 'string' && /^[+-]?\d+$/.test(raw)) {
    const ms = Number(raw);
    if (ms >= 0 && ms <= 60000) return ms;
  }
  throw httpError(400, raw === undefined ? 'ms is required: an integer in 0..60000'
    : `ms must be an integer in 0..60000, got '${raw}'`);
}

/** /db/{id}: an integer in PostgreSQL's integer range (signed 32 bits), else a 400. */
function int32Id(raw) {
  const id = /^[+-]?\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(id) || id < -0x80000000 || id > 0x7fffffff) {
    throw httpError(400, `id must be an integer in -2147483648..2147483647, got '${raw}'`);
  }
  return id;
}

/** A database failure (refused, down, a query error, no pooled connection within 30 s): 502. */
function dbFailed(err) {
  return httpError(502, `database failed: ${[err.code, err.message].filter(Boolean).join(' ')}`);
}

function text(res, body) {
  res.type('text/plain').send(body);
}

/**
 * The app. express is the contender's own package; host and port where it listens; resources
 * the folder of data1.json and data2.json; db this process's database (db.js); mount(app,
 * { onlyGet }), when given, adds routes before the 404 fallback.
 */
function createApp(express, { host, port, resources, db, mount }) {
  // Unset: itself, on the address it listens on (127.0.0.1 does not answer once moved).
  const downstream = (process.env.DOWNSTREAM_URL || `http://${host}:${port}`).replace(/\/+$/, '');
  const app = express();
  app.disable('x-powered-by');

  // A known path asked with another method: 405 with Allow, as the JSON body the contract wants.
  const onlyGet = (req, res) => {
    res.set('Allow', 'GET, HEAD').status(405).json({ error: `${req.method} is not allowed on ${req.path}` });
  };
  const up = (req, res) => res.json({ status: 'UP' });

  app.route('/actuator/health/liveness').get(up).all(onlyGet);
  app.route('/actuator/health/readiness').get(up).all(onlyGet);

  app.route('/instant').get((req, res) => text(res, 'INSTANT')).all(onlyGet);

  // A timer on the event loop: the request holds no thread while it waits.
  app.route('/delayed').get((req, res) => {
    setTimeout(() => text(res, 'DELAYED'), millis(req, 10000));
  }).all(onlyGet);
  app.route('/sleep').get((req, res) => {
    setTimeout(() => text(res, 'SLEPT'), millis(req, 100));
  }).all(onlyGet);

  // /resources/data1.json and data2.json; anything else falls through to the JSON 404.
  app.use('/resources', express.static(resources, { index: false, redirect: false }));

  // Node's built-in fetch (undici): its global agent pools keep-alive connections per origin.
  app.route('/data/:id').get(async (req, res) => {
    const raw = req.params.id;
    const id = /^[+-]?\d+$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(id)) throw httpError(400, `id must be an integer, got '${raw}'`);

    let answer;
    try {
      answer = await fetch(`${downstream}/resources/data${id}.json`, { signal: AbortSignal.timeout(TIMEOUT_MS) });
    } catch (err) { // refused, reset, or no answer within 2 s
      throw httpError(502, `downstream failed: ${err.cause?.code ?? err.name}`);
    }
    if (!answer.ok) {
      await answer.arrayBuffer().catch(() => {}); // read it out so the connection goes back to the pool
      throw answer.status === 404
        ? httpError(404, `no data ${id}`)
        : httpError(502, `downstream answered ${answer.status}`);
    }
    let data;
    try {
      data = Data.from(await answer.json()); // the 2-s signal covers the body too
    } catch (err) {
      throw httpError(502, `downstream body: ${err.name === 'TimeoutError' ? 'no answer within 2 s' : err.message}`);
    }
    res.json(data);
  }).all(onlyGet);

  // /db (arena's own study): node-postgres's pool.query on the event loop. The request waits
  // as a pending promise for a pooled connection (at most 30 s) and for the answer; the loop
  // serves everything else meanwhile. /db/slow first: /db/:id would take "slow" too.
  app.route('/db/slow').get(async (req, res) => {
    const ms = millis(req, undefined);
    try {
      await db.query('SELECT pg_sleep($1)', [ms / 1000]);
    } catch (err) {
      throw dbFailed(err);
    }
    text(res, 'SLEPT');
  }).all(onlyGet);
  app.route('/db/:id').get(async (req, res) => {
    const id = int32Id(req.params.id);
    let result;
    try {
      result = await db.query('SELECT id, value, active, props FROM data WHERE id = $1', [id]);
    } catch (err) {
      throw dbFailed(err);
    }
    if (result.rows.length === 0) throw httpError(404, `no row ${id}`);
    let data;
    try {
      data = Data.from(result.rows[0]); // pg gives integer, text, boolean and text[] as JS values
    } catch {
      throw httpError(502, 'database row is not a data record');
    }
    res.json(data); // the same record and encoder as /data/{id}
  }).all(onlyGet);

  mount?.(app, { onlyGet }); // /stream and /stream/stats (study 003)

  // Unknown path (or a /resources file that does not exist).
  app.use((req, res) => {
    res.status(404).json({ error: `no route for ${req.method} ${req.path}` });
  });

  // Every error as {"error": ...}, never Express's HTML page.
  app.use((err, req, res, next) => {
    let status = err.status ?? err.statusCode;
    if (!Number.isInteger(status) || status < 400 || status > 599) status = 500;
    if (status === 500) console.error(err); // a bug, not a contract outcome
    if (res.headersSent) return next(err); // Express's own handler closes the connection
    const message = status < 500 || err.status ? err.message : 'internal server error';
    res.status(status).json({ error: message || `status ${status}` });
  });

  return app;
}

module.exports = { createApp };
