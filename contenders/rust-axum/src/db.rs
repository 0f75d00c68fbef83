//! /db (arena's own study): tokio-postgres on a deadpool-postgres pool, awaited on the request's
//! task: the task is parked while it waits for a pooled connection and for PostgreSQL's answer,
//! and the worker thread serves other requests meanwhile (see README.md).

use std::time::Duration;

use axum::{
    extract::{Path, RawQuery, State},
    http::StatusCode,
    response::{IntoResponse, Response},
    Json,
};
use deadpool_postgres::{
    Manager, ManagerConfig, Object, Pool, PoolError, RecyclingMethod, Runtime,
};
use tokio_postgres::NoTls;

use crate::{error, int_in, param, AppState, Data};

/// A pooled connection within this, or a 502.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(30);
/// Opening one connection (a refused database fails at once).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

const ROW: &str = "SELECT id, value, active, props FROM data WHERE id = $1";
const SLEEP: &str = "SELECT pg_sleep($1)";

/// /db's pool, or why there is none (DB_URL unset, a bad DB_URL or DB_POOL): then every /db
/// request answers 502 with that reason and nothing else changes.
pub struct Database {
    pool: Option<Pool>,
    reason: String,
}

impl Database {
    fn none(reason: String) -> Database {
        println!("rust-axum: {reason}; /db answers 502");
        Database { pool: None, reason }
    }

    /// The pool from DB_URL with at most DB_POOL connections. deadpool opens connections only
    /// when they are asked for, so the server starts, and is ready, with the database down.
    pub fn open(url: Option<String>, size: Option<String>) -> Database {
        let Some(url) = url.filter(|u| !u.is_empty()) else {
            return Database::none("DB_URL is not set".into());
        };
        let mut config = match url.parse::<tokio_postgres::Config>() {
            Ok(config) => config,
            Err(e) => return Database::none(format!("DB_URL: {e}")),
        };
        config.connect_timeout(CONNECT_TIMEOUT);
        // The lab always sets DB_POOL; unset, deadpool's default (4 per CPU).
        let max = match size.as_deref().map(|s| s.parse::<usize>()) {
            None => None,
            Some(Ok(n)) if (1..=256).contains(&n) => Some(n),
            Some(_) => {
                return Database::none(format!(
                    "DB_POOL must be an integer in 1..256, got {size:?}"
                ))
            }
        };
        // Fast: a returned connection is reused unless it is closed (no query to test it).
        let manager_config = ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        };
        let manager = Manager::from_config(config, NoTls, manager_config);
        let mut builder = Pool::builder(manager)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(ACQUIRE_TIMEOUT))
            .create_timeout(Some(CONNECT_TIMEOUT))
            .recycle_timeout(Some(CONNECT_TIMEOUT));
        if let Some(max) = max {
            builder = builder.max_size(max);
        }
        match builder.build() {
            Ok(pool) => {
                println!("rust-axum: database pool: deadpool-postgres, at most {} connections, none opened until /db asks", pool.status().max_size);
                Database {
                    pool: Some(pool),
                    reason: String::new(),
                }
            }
            Err(e) => Database::none(format!("database pool: {e}")),
        }
    }

    /// A pooled connection: waits for one while all are taken (up to 30 s); a database that
    /// refuses fails at once, as creating the connection fails.
    async fn get(&self) -> Result<Object, String> {
        let Some(pool) = &self.pool else {
            return Err(self.reason.clone());
        };
        pool.get().await.map_err(|e| match e {
            PoolError::Timeout(_) => format!(
                "no pooled connection within {} s",
                ACQUIRE_TIMEOUT.as_secs()
            ),
            e => format!("database failed: {e}"),
        })
    }
}

/// GET /db/{id}: the row decoded into Data and encoded as /data/{id} encodes it.
pub async fn row(State(app): State<AppState>, Path(id): Path<String>) -> Response {
    let Ok(id) = id.parse::<i32>() else {
        return error(
            StatusCode::BAD_REQUEST,
            format!("id must be an integer in -2147483648..2147483647, got {id:?}"),
        );
    };
    let client = match app.db.get().await {
        Ok(client) => client,
        Err(e) => return error(StatusCode::BAD_GATEWAY, e),
    };
    let statement = match client.prepare_cached(ROW).await {
        Ok(statement) => statement,
        Err(e) => return error(StatusCode::BAD_GATEWAY, format!("database failed: {e}")),
    };
    let found = match client.query_opt(&statement, &[&id]).await {
        Ok(found) => found,
        Err(e) => return error(StatusCode::BAD_GATEWAY, format!("database failed: {e}")),
    };
    let Some(found) = found else {
        return error(StatusCode::NOT_FOUND, format!("no row {id}"));
    };
    let record = (|| -> Result<Data, tokio_postgres::Error> {
        Ok(Data {
            id: i64::from(found.try_get::<_, i32>(0)?),
            value: found.try_get(1)?,
            active: found.try_get(2)?,
            props: found.try_get(3)?,
        })
    })();
    match record {
        Ok(record) => Json(record).into_response(),
        Err(e) => error(StatusCode::BAD_GATEWAY, format!("database row: {e}")),
    }
}

/// GET /db/slow?ms=N: pg_sleep holds one pooled connection N ms.
pub async fn slow(State(app): State<AppState>, RawQuery(query): RawQuery) -> Response {
    let Some(ms) = param(query.as_deref(), "ms").and_then(|raw| int_in(raw, 0, 60_000)) else {
        return error(
            StatusCode::BAD_REQUEST,
            "ms is required, an integer in 0..60000",
        );
    };
    let client = match app.db.get().await {
        Ok(client) => client,
        Err(e) => return error(StatusCode::BAD_GATEWAY, e),
    };
    let statement = match client.prepare_cached(SLEEP).await {
        Ok(statement) => statement,
        Err(e) => return error(StatusCode::BAD_GATEWAY, format!("database failed: {e}")),
    };
    match client.execute(&statement, &[&(ms as f64 / 1000.0)]).await {
        Ok(_) => "SLEPT".into_response(),
        Err(e) => error(StatusCode::BAD_GATEWAY, format!("database failed: {e}")),
    }
}
