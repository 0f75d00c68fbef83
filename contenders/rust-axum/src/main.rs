//! rust-axum: axum on tokio's multi-thread runtime. Every endpoint is an `async fn`: a wait is
//! a timer on the runtime, a call is reqwest's pooled client, a query tokio-postgres on a
//! deadpool pool (see README.md).

mod chat;
mod db;
mod stream;

use std::{
    env,
    sync::Arc,
    time::{Duration, Instant},
};

use axum::{
    extract::{Path, RawQuery, Request, State},
    http::{header, HeaderValue, StatusCode, Uri},
    middleware::{self, Next},
    response::{IntoResponse, Response},
    routing::get,
    serve::ListenerExt,
    Json, Router,
};
use serde::{Deserialize, Serialize};
use tokio::{
    signal::unix::{signal, SignalKind},
    sync::watch,
};

/// The whole /data/{id} call, body included.
const DOWNSTREAM_TIMEOUT: Duration = Duration::from_secs(2);
/// How long open requests get after SIGTERM.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

static DATA1: &[u8] = include_bytes!("../resources/data1.json");
static DATA2: &[u8] = include_bytes!("../resources/data2.json");

/// Study 002's record: /data/{id} decodes the downstream's JSON into it and encodes it back;
/// /db/{id} fills it from the row.
#[derive(Serialize, Deserialize)]
pub struct Data {
    pub id: i64,
    pub value: String,
    pub active: bool,
    pub props: Vec<String>,
}

#[derive(Serialize)]
struct ErrorBody {
    error: String,
}

#[derive(Serialize)]
struct Health {
    status: &'static str,
}

/// What every handler shares. Cloned per request: each field is a handle.
#[derive(Clone)]
pub struct AppState {
    downstream: Arc<str>,
    client: reqwest::Client,
    chat: Arc<chat::Hub>,
    stream: Arc<stream::Hub>,
    db: Arc<db::Database>,
}

/// The contract's error answer: `{"error":"..."}` with status.
pub fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (
        status,
        Json(ErrorBody {
            error: message.into(),
        }),
    )
        .into_response()
}

/// The raw value of the first `name` parameter of a query string (not percent-decoded: no
/// parameter of this API needs an escape, so one makes the value invalid).
pub fn param<'a>(query: Option<&'a str>, name: &str) -> Option<&'a str> {
    query?.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (key == name).then_some(value)
    })
}

/// An integer in lo..=hi written in ASCII digits alone: no sign, space, exponent or escape.
pub fn int_in(raw: &str, lo: u64, hi: u64) -> Option<u64> {
    if raw.is_empty() || raw.len() > 12 || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    raw.parse::<u64>().ok().filter(|n| (lo..=hi).contains(n))
}

/// Resolves once the server is stopping; never, if the stop's sender is gone.
pub async fn stopped(stop: &mut watch::Receiver<bool>) {
    if stop.wait_for(|stop| *stop).await.is_err() {
        std::future::pending::<()>().await;
    }
}

async fn up() -> Json<Health> {
    Json(Health { status: "UP" })
}

async fn delayed(RawQuery(query): RawQuery) -> Response {
    wait_then(query, 10_000, "DELAYED").await
}

async fn sleep(RawQuery(query): RawQuery) -> Response {
    wait_then(query, 100, "SLEPT").await
}

/// Waits ?ms=N (default default_ms) on a tokio timer, then answers body. The request holds no
/// thread meanwhile; a client that goes away drops the handler's future, and the timer with it.
async fn wait_then(query: Option<String>, default_ms: u64, body: &'static str) -> Response {
    let ms = match param(query.as_deref(), "ms") {
        None => default_ms,
        Some(raw) => match int_in(raw, 0, 60_000) {
            Some(ms) => ms,
            None => {
                return error(
                    StatusCode::BAD_REQUEST,
                    format!("ms must be an integer in 0..60000, got {raw:?}"),
                )
            }
        },
    };
    tokio::time::sleep(Duration::from_millis(ms)).await;
    body.into_response()
}

async fn resource(Path(name): Path<String>) -> Response {
    let body = match name.as_str() {
        "data1.json" => DATA1,
        "data2.json" => DATA2,
        _ => return error(StatusCode::NOT_FOUND, format!("no resource {name}")),
    };
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// Calls the downstream with the shared client and awaits it: the request's task is parked
/// while reqwest waits on the socket.
async fn data(State(app): State<AppState>, Path(id): Path<String>) -> Response {
    let Ok(id) = id.parse::<i64>() else {
        return error(
            StatusCode::BAD_REQUEST,
            format!("id must be an integer, got {id:?}"),
        );
    };
    let url = format!("{}/resources/data{id}.json", app.downstream);
    let answer = match app.client.get(url).send().await {
        Ok(answer) => answer,
        Err(e) => return error(StatusCode::BAD_GATEWAY, format!("downstream failed: {e}")),
    };
    let status = answer.status();
    // Read to the end whatever the status, so the connection goes back to the pool.
    let body = match answer.bytes().await {
        Ok(body) => body,
        Err(e) => return error(StatusCode::BAD_GATEWAY, format!("downstream body: {e}")),
    };
    if status == StatusCode::NOT_FOUND {
        return error(StatusCode::NOT_FOUND, format!("no data {id}"));
    }
    if !status.is_success() {
        return error(
            StatusCode::BAD_GATEWAY,
            format!("downstream answered {status}"),
        );
    }
    match serde_json::from_slice::<Data>(&body) {
        Ok(record) => Json(record).into_response(),
        Err(e) => error(
            StatusCode::BAD_GATEWAY,
            format!("downstream body is not the record: {e}"),
        ),
    }
}

async fn not_found(uri: Uri) -> Response {
    error(
        StatusCode::NOT_FOUND,
        format!("no route for {}", uri.path()),
    )
}

/// Closes the connection after answering a request whose body came with Transfer-Encoding:
/// hyper lets Transfer-Encoding override a Content-Length and keeps the connection, so what a
/// Content-Length would have framed as body is read as a next request; RFC 9112 6.1 asks for
/// the close, which hyper gives when the answer says `Connection: close`. No route takes a body.
async fn close_after_chunked(request: Request, next: Next) -> Response {
    let chunked = request.headers().contains_key(header::TRANSFER_ENCODING);
    let mut response = next.run(request).await;
    if chunked {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

fn router(state: AppState) -> Router {
    Router::new()
        .route("/actuator/health/liveness", get(up))
        .route("/actuator/health/readiness", get(up))
        .route("/instant", get(|| async { "INSTANT" }))
        .route("/delayed", get(delayed))
        .route("/sleep", get(sleep))
        .route("/resources/{name}", get(resource))
        .route("/data/{id}", get(data))
        .route("/db/slow", get(db::slow))
        .route("/db/{id}", get(db::row))
        .route("/chat", get(chat::route))
        .route("/stream", get(stream::route))
        .route("/stream/stats", get(stream::stats))
        .fallback(not_found)
        .layer(middleware::from_fn(close_after_chunked))
        .with_state(state)
}

/// The contract's settings, read once at start.
struct Settings {
    addr: String,
    downstream: String,
    backpressure: bool,
}

fn settings() -> Result<Settings, String> {
    let port = env::var("PORT").unwrap_or_else(|_| "8080".into());
    // BIND_ADDRESS moves the listener off loopback only for a multi-host run.
    let host = env::var("BIND_ADDRESS")
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "127.0.0.1".into());
    let addr = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    // Unset: itself, where it listens (127.0.0.1 does not answer once BIND_ADDRESS moved it).
    let downstream = env::var("DOWNSTREAM_URL")
        .ok()
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| format!("http://{addr}"));
    let backpressure = match env::var("BACKPRESSURE")
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
        .as_str()
    {
        "" | "on" => true,
        "off" => false,
        other => return Err(format!("BACKPRESSURE must be on or off, got {other:?}")),
    };
    Ok(Settings {
        addr,
        downstream: downstream.trim_end_matches('/').to_owned(),
        backpressure,
    })
}

fn main() {
    // One worker thread per CPU the process may run on: available_parallelism reads the
    // affinity mask that the lab's taskset sets, as Go's GOMAXPROCS does, so a server pinned to
    // one core runs one worker. Set explicitly so that an inherited TOKIO_WORKER_THREADS cannot
    // change it behind the lab's back.
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build();
    let runtime = runtime.unwrap_or_else(|e| fail(format!("tokio runtime: {e}")));
    runtime.block_on(serve(workers));
    // Whatever is still open (a /delayed past the grace) ends with the process.
    std::process::exit(0);
}

fn fail(message: String) -> ! {
    eprintln!("rust-axum: {message}");
    std::process::exit(1);
}

async fn serve(workers: usize) {
    let s = settings().unwrap_or_else(|e| fail(e));
    // One client for the process: reqwest pools keep-alive connections per host (no idle limit
    // per host, idle ones kept 90 s); no proxy, as every call is to the lab's own host.
    let client = reqwest::Client::builder()
        .timeout(DOWNSTREAM_TIMEOUT)
        .no_proxy()
        .build();
    let client = client.unwrap_or_else(|e| fail(format!("HTTP client: {e}")));
    let db = db::Database::open(env::var("DB_URL").ok(), env::var("DB_POOL").ok());
    // stop turns true on SIGTERM: the server stops accepting, every WebSocket closes with 1001.
    let (stop_tx, stop_rx) = watch::channel(false);
    let state = AppState {
        downstream: s.downstream.into(),
        client,
        chat: Arc::new(chat::Hub::new(stop_rx.clone())),
        stream: Arc::new(stream::Hub::new(s.backpressure, stop_rx.clone())),
        db: Arc::new(db),
    };
    let (chat_hub, stream_hub) = (state.chat.clone(), state.stream.clone());
    let listener = tokio::net::TcpListener::bind(&s.addr).await;
    let listener = listener.unwrap_or_else(|e| fail(format!("cannot listen on {}: {e}", s.addr)));
    // TCP_NODELAY on every connection, as axum's docs show (hyper leaves Nagle on): a chat
    // member's frames would otherwise wait for the previous ones' ACKs. Tomcat, Netty, Vert.x and
    // Go set it by default.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    println!(
        "rust-axum listening on {} (tokio {workers} worker thread(s), BACKPRESSURE {})",
        s.addr,
        if s.backpressure { "on" } else { "off" }
    );
    let mut stopping = stop_rx.clone();
    let app = router(state);
    let mut server = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopping.wait_for(|stop| *stop).await;
            })
            .await
    });
    let mut term =
        signal(SignalKind::terminate()).unwrap_or_else(|e| fail(format!("SIGTERM handler: {e}")));
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
        served = &mut server => fail(format!("serving stopped: {served:?}")),
    }
    println!("rust-axum: SIGTERM, shutting down");
    let _ = stop_tx.send(true);
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, server).await;
    // The WebSockets' close frames: a moment for their handshakes (hyper's graceful shutdown
    // does not see upgraded connections).
    let closing = Instant::now();
    while chat_hub.open() + stream_hub.open() > 0 && closing.elapsed() < Duration::from_secs(1) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
