//! rust-threads: a thread per request on blocking std::net sockets. A request holds one of
//! WORKER_THREADS request threads from its first handler line to its answer: /delayed sleeps on
//! it, /data blocks it in ureq, /db in postgres (see README.md).

mod chat;
mod db;
mod http;
mod stream;
mod ws;

use std::{
    env,
    net::TcpListener,
    sync::Arc,
    thread,
    time::{Duration, Instant},
};

use serde::{Deserialize, Serialize};
use signal_hook::{
    consts::{SIGINT, SIGTERM},
    iterator::Signals,
};

use http::{Outcome, Request, Response};

/// The whole /data/{id} call, body included.
const DOWNSTREAM_TIMEOUT: Duration = Duration::from_secs(2);
/// How long open requests get after SIGTERM.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
/// Request threads when WORKER_THREADS is unset: Tomcat's default, which the Spring MVC
/// contenders keep, as this server has no default of its own.
const DEFAULT_WORKERS: usize = 200;

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

/// What every request thread shares.
pub struct App {
    downstream: String,
    agent: ureq::Agent,
    chat: Arc<chat::Hub>,
    stream: Arc<stream::Hub>,
    db: db::Database,
}

/// An integer in lo..=hi written in ASCII digits alone: no sign, space, exponent or escape.
pub fn int_in(raw: &str, lo: u64, hi: u64) -> Option<u64> {
    if raw.is_empty() || raw.len() > 12 || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    raw.parse::<u64>().ok().filter(|n| (lo..=hi).contains(n))
}

fn json(status: u16, value: &impl Serialize) -> Response {
    match serde_json::to_vec(value) {
        Ok(body) => Response::json(status, body),
        Err(e) => Response::error(500, &format!("encoding: {e}")),
    }
}

/// The routes: every path of the contract, run on the request thread that took the request.
fn route(app: &Arc<App>, request: &Request) -> Outcome {
    let path = request.path.as_str();
    if request.method != "GET" && request.method != "HEAD" {
        return Outcome::Respond(Response::error(
            405,
            &format!("{} is not allowed on {path}", request.method),
        ));
    }
    let response = match path {
        "/actuator/health/liveness" | "/actuator/health/readiness" => {
            Response::json(200, br#"{"status":"UP"}"#.to_vec())
        }
        "/instant" => Response::text("INSTANT"),
        "/delayed" => wait_then(request, 10_000, "DELAYED"),
        "/sleep" => wait_then(request, 100, "SLEPT"),
        "/resources/data1.json" => Response::json(200, DATA1.to_vec()),
        "/resources/data2.json" => Response::json(200, DATA2.to_vec()),
        "/chat" => return chat::upgrade(app, request),
        "/stream" => return stream::upgrade(app, request),
        "/stream/stats" => json(200, &app.stream.stats()),
        "/db/slow" => db::slow(&app.db, request),
        _ => {
            if let Some(id) = path.strip_prefix("/data/") {
                data(app, id)
            } else if let Some(id) = path.strip_prefix("/db/") {
                db::row(&app.db, id)
            } else {
                Response::error(404, &format!("no route for {path}"))
            }
        }
    };
    Outcome::Respond(response)
}

/// Blocks the request thread ?ms=N (default default_ms), then answers body.
fn wait_then(request: &Request, default_ms: u64, body: &str) -> Response {
    let ms = match request.param("ms") {
        None => default_ms,
        Some(raw) => match int_in(raw, 0, 60_000) {
            Some(ms) => ms,
            None => {
                return Response::error(
                    400,
                    &format!("ms must be an integer in 0..60000, got {raw:?}"),
                )
            }
        },
    };
    thread::sleep(Duration::from_millis(ms));
    Response::text(body)
}

/// Calls the downstream with the shared agent; the request thread blocks until it answers.
fn data(app: &App, raw: &str) -> Response {
    let Ok(id) = raw.parse::<i64>() else {
        return Response::error(400, &format!("id must be an integer, got {raw:?}"));
    };
    let url = format!("{}/resources/data{id}.json", app.downstream);
    let mut answer = match app.agent.get(url.as_str()).call() {
        Ok(answer) => answer,
        Err(e) => return Response::error(502, &format!("downstream failed: {e}")),
    };
    let status = answer.status().as_u16();
    // Read to the end whatever the status, so the connection goes back to the pool.
    let body = match answer.body_mut().read_to_vec() {
        Ok(body) => body,
        Err(e) => return Response::error(502, &format!("downstream body: {e}")),
    };
    match status {
        404 => Response::error(404, &format!("no data {id}")),
        200..=299 => match serde_json::from_slice::<Data>(&body) {
            Ok(record) => json(200, &record),
            Err(e) => Response::error(502, &format!("downstream body is not the record: {e}")),
        },
        other => Response::error(502, &format!("downstream answered {other}")),
    }
}

/// The contract's settings, read once at start.
struct Settings {
    addr: String,
    downstream: String,
    backpressure: bool,
    workers: usize,
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
    let workers = match env::var("WORKER_THREADS").ok().filter(|w| !w.is_empty()) {
        None => DEFAULT_WORKERS,
        Some(raw) => match raw.trim().parse::<usize>() {
            Ok(n) if (1..=10_000).contains(&n) => n,
            _ => {
                return Err(format!(
                    "WORKER_THREADS must be an integer in 1..10000, got {raw:?}"
                ))
            }
        },
    };
    Ok(Settings {
        addr,
        downstream: downstream.trim_end_matches('/').to_owned(),
        backpressure,
        workers,
    })
}

fn fail(message: String) -> ! {
    eprintln!("rust-threads: {message}");
    std::process::exit(1);
}

fn main() {
    let s = settings().unwrap_or_else(|e| fail(e));
    // One agent for the process: ureq pools keep-alive connections; it may keep one idle per
    // request thread (its default keeps 3 per host), as every call goes to one host. No proxy
    // from the environment: every call is to the lab's own host.
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(DOWNSTREAM_TIMEOUT))
        .http_status_as_error(false)
        .max_idle_connections(s.workers)
        .max_idle_connections_per_host(s.workers)
        .proxy(None)
        .build();
    let app = Arc::new(App {
        downstream: s.downstream,
        agent: ureq::Agent::new_with_config(config),
        chat: Arc::new(chat::Hub::default()),
        stream: Arc::new(stream::Hub::new(s.backpressure)),
        db: db::Database::open(env::var("DB_URL").ok(), env::var("DB_POOL").ok()),
    });
    let mut signals =
        Signals::new([SIGTERM, SIGINT]).unwrap_or_else(|e| fail(format!("signal handler: {e}")));
    let listener = TcpListener::bind(&s.addr)
        .unwrap_or_else(|e| fail(format!("cannot listen on {}: {e}", s.addr)));
    let routes = app.clone();
    let handler: Arc<http::Handler> = Arc::new(move |request: &Request| route(&routes, request));
    let server = http::Server::start(listener, s.workers, handler)
        .unwrap_or_else(|e| fail(format!("starting threads: {e}")));
    println!(
        "rust-threads listening on {} ({} request threads, BACKPRESSURE {})",
        s.addr,
        s.workers,
        if s.backpressure { "on" } else { "off" }
    );
    signals.forever().next();
    println!("rust-threads: SIGTERM, shutting down");
    // Stop accepting, close every WebSocket with 1001, give open requests the grace; whatever
    // is still running then (a /delayed past it) ends with the process.
    let stopping = Instant::now();
    server.stop_accepting();
    app.chat.close_all();
    app.stream.close_all();
    server.wait_idle(SHUTDOWN_GRACE.saturating_sub(stopping.elapsed()));
    std::process::exit(0);
}
