//! /db (arena's own study): the postgres crate (synchronous) on an r2d2 pool, queried on the
//! request thread, which blocks while it waits for a pooled connection and for PostgreSQL's
//! answer (see README.md).

use std::time::{Duration, Instant};

use r2d2::{Pool, PooledConnection};
use r2d2_postgres::{
    postgres::{Config, NoTls},
    PostgresConnectionManager,
};

use crate::{http::Request, http::Response, int_in, Data};

type Manager = PostgresConnectionManager<NoTls>;

/// A pooled connection within this, or a 502.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(30);
/// r2d2 waits in slices of this: after one without a connection, a failed connection attempt
/// is a 502 at once (see Database::get).
const ACQUIRE_SLICE: Duration = Duration::from_secs(2);
/// Opening one connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

const ROW: &str = "SELECT id, value, active, props FROM data WHERE id = $1";
const SLEEP: &str = "SELECT pg_sleep($1)";

/// /db's pool, or why there is none (DB_URL unset, a bad DB_URL or DB_POOL): then every /db
/// request answers 502 with that reason and nothing else changes.
pub struct Database {
    pool: Option<Pool<Manager>>,
    reason: String,
}

impl Database {
    fn none(reason: String) -> Database {
        println!("rust-threads: {reason}; /db answers 502");
        Database { pool: None, reason }
    }

    /// The pool from DB_URL with at most DB_POOL connections and none kept idle at start
    /// (min_idle 0; r2d2's default is the maximum, opened at once): built unchecked, so the
    /// server starts, and is ready, with the database down.
    pub fn open(url: Option<String>, size: Option<String>) -> Database {
        let Some(url) = url.filter(|u| !u.is_empty()) else {
            return Database::none("DB_URL is not set".into());
        };
        let mut config = match url.parse::<Config>() {
            Ok(config) => config,
            Err(e) => return Database::none(format!("DB_URL: {e}")),
        };
        config.connect_timeout(CONNECT_TIMEOUT);
        let mut builder = Pool::builder()
            .min_idle(Some(0))
            .connection_timeout(ACQUIRE_SLICE);
        // The lab always sets DB_POOL; unset, r2d2's default (10).
        match size.as_deref().map(|s| s.parse::<u32>()) {
            None => {}
            Some(Ok(n)) if (1..=256).contains(&n) => builder = builder.max_size(n),
            Some(_) => {
                return Database::none(format!(
                    "DB_POOL must be an integer in 1..256, got {size:?}"
                ))
            }
        }
        let pool = builder.build_unchecked(PostgresConnectionManager::new(config, NoTls));
        println!(
            "rust-threads: database pool: r2d2, at most {} connections, none opened until /db asks",
            pool.max_size()
        );
        Database {
            pool: Some(pool),
            reason: String::new(),
        }
    }

    /// A pooled connection, waiting up to 30 s while every one is taken. r2d2 alone would wait
    /// its whole timeout against a database that refuses, retrying in the background, so it
    /// waits in slices: a slice that ends with a failed connection attempt (r2d2 names it in
    /// its error) is a 502 at once, one that ends with every connection merely in use waits on.
    fn get(&self) -> Result<PooledConnection<Manager>, String> {
        let Some(pool) = &self.pool else {
            return Err(self.reason.clone());
        };
        let start = Instant::now();
        loop {
            match pool.get_timeout(ACQUIRE_SLICE) {
                Ok(conn) => return Ok(conn),
                Err(e) => {
                    let text = e.to_string();
                    if text.contains(": ") {
                        return Err(format!("database failed: {text}"));
                    }
                    if start.elapsed() + ACQUIRE_SLICE > ACQUIRE_TIMEOUT {
                        return Err(format!(
                            "no pooled connection within {} s",
                            ACQUIRE_TIMEOUT.as_secs()
                        ));
                    }
                }
            }
        }
    }
}

/// GET /db/{id}: the row decoded into Data and encoded as /data/{id} encodes it.
pub fn row(db: &Database, raw: &str) -> Response {
    let Ok(id) = raw.parse::<i32>() else {
        return Response::error(
            400,
            &format!("id must be an integer in -2147483648..2147483647, got {raw:?}"),
        );
    };
    let mut conn = match db.get() {
        Ok(conn) => conn,
        Err(e) => return Response::error(502, &e),
    };
    let found = match conn.query_opt(ROW, &[&id]) {
        Ok(found) => found,
        Err(e) => return Response::error(502, &format!("database failed: {e}")),
    };
    let Some(found) = found else {
        return Response::error(404, &format!("no row {id}"));
    };
    let record = (|| -> Result<Data, r2d2_postgres::postgres::Error> {
        Ok(Data {
            id: i64::from(found.try_get::<_, i32>(0)?),
            value: found.try_get(1)?,
            active: found.try_get(2)?,
            props: found.try_get(3)?,
        })
    })();
    match record.map(|record| serde_json::to_vec(&record)) {
        Ok(Ok(body)) => Response::json(200, body),
        Ok(Err(e)) => Response::error(500, &format!("encoding: {e}")),
        Err(e) => Response::error(502, &format!("database row: {e}")),
    }
}

/// GET /db/slow?ms=N: pg_sleep holds one pooled connection N ms.
pub fn slow(db: &Database, request: &Request) -> Response {
    let Some(ms) = request.param("ms").and_then(|raw| int_in(raw, 0, 60_000)) else {
        return Response::error(400, "ms is required, an integer in 0..60000");
    };
    let mut conn = match db.get() {
        Ok(conn) => conn,
        Err(e) => return Response::error(502, &e),
    };
    match conn.execute(SLEEP, &[&(ms as f64 / 1000.0)]) {
        Ok(_) => Response::text("SLEPT"),
        Err(e) => Response::error(502, &format!("database failed: {e}")),
    }
}
