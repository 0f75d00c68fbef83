//! The HTTP/1.1 server, a thread per request: an acceptor thread; a thread per connection that
//! reads request heads (httparse) and hands each request to a fixed pool of request threads
//! through one queue (the Rust Book's ThreadPool: a channel's receiver behind a mutex); the
//! request thread runs the handler, blocking as long as the handler blocks, and writes the
//! answer; then the connection's thread reads the next request. With every request thread
//! busy, requests wait in the queue (see README.md).

use std::{
    io::{self, Read, Write},
    net::{Shutdown, SocketAddr, TcpListener, TcpStream},
    panic::{self, AssertUnwindSafe},
    sync::{
        atomic::{AtomicBool, AtomicUsize, Ordering},
        mpsc, Arc, Mutex,
    },
    thread,
    time::{Duration, Instant},
};

use serde::Serialize;

/// A request head over this is refused (431, or 414 for a request line that long).
const MAX_HEAD: usize = 64 * 1024;
/// More headers than this are refused with 431 (hyper's default limit).
const MAX_HEADERS: usize = 100;
/// No route takes a body: one this large is refused rather than read and thrown away.
const MAX_BODY: usize = 1 << 20;
/// From a request's first byte to the end of its head (slow clients), and for its body.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// A kept-alive connection with no request for this long is closed.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// One answer to one client.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// A request as the handler sees it: GET and HEAD only carry meaning here, and no body.
pub struct Request {
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    /// Upgrade: websocket was asked for.
    pub upgrade: bool,
    pub websocket_key: Option<String>,
    pub websocket_version: Option<String>,
    head_only: bool,
}

impl Request {
    /// The raw value of the first `name` parameter of the query (not percent-decoded: no
    /// parameter of this API needs an escape, so one makes the value invalid).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query.as_deref()?.split('&').find_map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (key == name).then_some(value)
        })
    }
}

pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
}

impl Response {
    pub fn text(body: &str) -> Response {
        Response {
            status: 200,
            content_type: "text/plain; charset=utf-8",
            body: body.as_bytes().to_vec(),
        }
    }

    pub fn json(status: u16, body: Vec<u8>) -> Response {
        Response {
            status,
            content_type: "application/json",
            body,
        }
    }

    /// The contract's error answer: `{"error":"..."}`.
    pub fn error(status: u16, message: &str) -> Response {
        Response::json(
            status,
            serde_json::to_vec(&ErrorBody { error: message }).unwrap_or_default(),
        )
    }
}

/// What a handler makes of a request.
pub enum Outcome {
    Respond(Response),
    /// Switch to WebSocket: the 101 carries accept, then `then` gets the socket (and any bytes
    /// read past the request) on a thread of its own, and the request thread is free again.
    Upgrade {
        accept: String,
        then: Box<dyn FnOnce(TcpStream, Vec<u8>) + Send>,
    },
}

pub type Handler = dyn Fn(&Request) -> Outcome + Send + Sync;

/// A request handed from its connection's thread to a request thread, which gives the
/// connection back (None: closed, or upgraded) when it has answered.
struct Job {
    request: Request,
    stream: TcpStream,
    leftover: Vec<u8>,
    close: bool,
    done: mpsc::Sender<Option<TcpStream>>,
}

/// A running server: its acceptor, connection threads and request threads.
pub struct Server {
    addr: SocketAddr,
    stopping: Arc<AtomicBool>,
    busy: Arc<AtomicUsize>,
}

impl Server {
    /// Starts the acceptor and `workers` request threads on listener.
    pub fn start(
        listener: TcpListener,
        workers: usize,
        handler: Arc<Handler>,
    ) -> io::Result<Server> {
        let addr = listener.local_addr()?;
        let (jobs, queue) = mpsc::channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        let busy = Arc::new(AtomicUsize::new(0));
        for i in 0..workers {
            let (queue, handler, busy) = (queue.clone(), handler.clone(), busy.clone());
            thread::Builder::new()
                .name(format!("request-{i}"))
                .spawn(move || work(&queue, &*handler, &busy))?;
        }
        let stopping = Arc::new(AtomicBool::new(false));
        let stop = stopping.clone();
        thread::Builder::new()
            .name("acceptor".into())
            .spawn(move || accept(listener, jobs, &stop))?;
        Ok(Server {
            addr,
            stopping,
            busy,
        })
    }

    /// Stops accepting: the acceptor sees the flag at its next connection, which this makes.
    pub fn stop_accepting(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
    }

    /// Waits until no request thread is busy, or grace has passed.
    pub fn wait_idle(&self, grace: Duration) {
        let start = Instant::now();
        while self.busy.load(Ordering::SeqCst) > 0 && start.elapsed() < grace {
            thread::sleep(Duration::from_millis(20));
        }
    }
}

fn accept(listener: TcpListener, jobs: mpsc::Sender<Job>, stopping: &AtomicBool) {
    for stream in listener.incoming() {
        if stopping.load(Ordering::SeqCst) {
            return; // the listener closes with this thread
        }
        let stream = match stream {
            Ok(stream) => stream,
            Err(e) => {
                eprintln!("rust-threads: accept: {e}");
                thread::sleep(Duration::from_millis(10)); // e.g. out of file descriptors
                continue;
            }
        };
        let jobs = jobs.clone();
        let spawned = thread::Builder::new()
            .name("connection".into())
            .spawn(move || connection(stream, &jobs));
        if let Err(e) = spawned {
            eprintln!("rust-threads: no thread for a connection: {e}");
        }
    }
}

/// A request thread: takes the next request from the queue, runs it, forever.
fn work(queue: &Mutex<mpsc::Receiver<Job>>, handler: &Handler, busy: &AtomicUsize) {
    loop {
        let job = match queue.lock() {
            Ok(receiver) => receiver.recv(),
            Err(_) => return,
        };
        let Ok(job) = job else { return };
        busy.fetch_add(1, Ordering::SeqCst);
        run(job, handler);
        busy.fetch_sub(1, Ordering::SeqCst);
    }
}

fn run(job: Job, handler: &Handler) {
    let Job {
        request,
        mut stream,
        leftover,
        close,
        done,
    } = job;
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| handler(&request)))
        .unwrap_or_else(|_| Outcome::Respond(Response::error(500, "the handler failed")));
    match outcome {
        Outcome::Respond(response) => {
            let written = write_response(&mut stream, &response, request.head_only, close).is_ok();
            let _ = done.send(if written && !close {
                Some(stream)
            } else {
                None
            });
        }
        Outcome::Upgrade { accept, then } => {
            let head = format!(
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"
            );
            let written = stream.write_all(head.as_bytes()).is_ok();
            let _ = done.send(None);
            if written {
                let spawned = thread::Builder::new()
                    .name("websocket".into())
                    .spawn(move || then(stream, leftover));
                if let Err(e) = spawned {
                    eprintln!("rust-threads: no thread for a WebSocket: {e}");
                }
            }
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        414 => "URI Too Long",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        _ => "Unknown",
    }
}

fn write_response(
    stream: &mut TcpStream,
    response: &Response,
    head_only: bool,
    close: bool,
) -> io::Result<()> {
    let mut out = Vec::with_capacity(160 + response.body.len());
    write!(
        out,
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n",
        response.status,
        reason(response.status),
        response.content_type,
        response.body.len()
    )?;
    if close {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    if !head_only {
        out.extend_from_slice(&response.body);
    }
    stream.write_all(&out)
}

/// A parsed request head and what its framing says.
struct Head {
    request: Request,
    len: usize,
    content_length: usize,
    framing_problem: Option<&'static str>,
    close: bool,
}

/// One connection: read a request, hand it to a request thread, wait for its answer, again.
fn connection(mut stream: TcpStream, jobs: &mpsc::Sender<Job>) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let mut buf = Vec::with_capacity(4096);
    loop {
        let head = match read_head(&mut stream, &mut buf) {
            Ok(Some(head)) => head,
            Ok(None) => return,
            Err(status) => return refuse(stream, status, "the request could not be read"),
        };
        buf.drain(..head.len);
        // A body framed two ways, or by a length that is no number: where the next request
        // starts is unknown, so the connection closes after the refusal (RFC 9112 6.3).
        if let Some(problem) = head.framing_problem {
            return refuse(stream, 400, problem);
        }
        if head.content_length > MAX_BODY {
            return refuse(stream, 413, "no route takes a body");
        }
        if !discard_body(&mut stream, &mut buf, head.content_length) {
            return;
        }
        let upgrade = head.request.upgrade;
        let leftover = if upgrade {
            std::mem::take(&mut buf)
        } else {
            Vec::new()
        };
        let (done, answered) = mpsc::channel();
        let job = Job {
            request: head.request,
            stream,
            leftover,
            close: head.close || upgrade,
            done,
        };
        if jobs.send(job).is_err() {
            return;
        }
        match answered.recv() {
            Ok(Some(back)) => stream = back,
            _ => return,
        }
    }
}

/// Reads until buf holds a whole request head: None when the client closed, or stayed idle
/// past IDLE_TIMEOUT before a request began; a status when the head is refused.
fn read_head(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Result<Option<Head>, u16> {
    let mut started = if buf.is_empty() {
        None
    } else {
        Some(Instant::now())
    };
    let mut chunk = [0u8; 8192];
    loop {
        if !buf.is_empty() {
            if let Some(head) = parse(buf)? {
                return Ok(Some(head));
            }
            if buf.len() > MAX_HEAD {
                return Err(if buf.windows(2).any(|w| w == b"\r\n") {
                    431
                } else {
                    414
                });
            }
        }
        let timeout = match started {
            None => IDLE_TIMEOUT,
            Some(at) => match HEAD_TIMEOUT.checked_sub(at.elapsed()) {
                Some(left) if !left.is_zero() => left,
                _ => return Err(408),
            },
        };
        let _ = stream.set_read_timeout(Some(timeout));
        match stream.read(&mut chunk) {
            Ok(0) => return Ok(None), // closed, perhaps mid-request: nothing to answer
            Ok(n) => {
                started.get_or_insert_with(Instant::now);
                buf.extend_from_slice(&chunk[..n]);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return if started.is_none() {
                    Ok(None)
                } else {
                    Err(408)
                };
            }
            Err(_) => return Ok(None),
        }
    }
}

fn lower(value: &[u8]) -> String {
    String::from_utf8_lossy(value).to_ascii_lowercase()
}

/// Parses a request head at the start of buf: None while it is incomplete.
fn parse(buf: &[u8]) -> Result<Option<Head>, u16> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let len = match req.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(431),
        Err(_) => return Err(400),
    };
    let method = req.method.unwrap_or_default().to_owned();
    let target = req.path.unwrap_or_default();
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path.to_owned(), Some(query.to_owned())),
        None => (target.to_owned(), None),
    };
    // HTTP/1.0 is answered, then closed: keep-alive is 1.1's default.
    let mut close = req.version != Some(1);
    let (mut upgrade, mut key, mut version) = (false, None, None);
    let (mut lengths, mut framing_problem) = (Vec::new(), None);
    for header in req.headers.iter() {
        let name = header.name;
        if name.eq_ignore_ascii_case("content-length") {
            lengths.push(header.value);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            framing_problem = Some("Transfer-Encoding is refused: no route takes a body");
        } else if name.eq_ignore_ascii_case("connection") {
            close |= lower(header.value).contains("close");
        } else if name.eq_ignore_ascii_case("upgrade") {
            upgrade = lower(header.value).contains("websocket");
        } else if name.eq_ignore_ascii_case("sec-websocket-key") {
            key = Some(String::from_utf8_lossy(header.value).trim().to_owned());
        } else if name.eq_ignore_ascii_case("sec-websocket-version") {
            version = Some(String::from_utf8_lossy(header.value).trim().to_owned());
        }
    }
    let content_length = match lengths.first() {
        None => 0,
        Some(first) if lengths.iter().any(|l| l != first) => {
            framing_problem = Some("Content-Length is given twice, differently");
            0
        }
        Some(first) => match std::str::from_utf8(first)
            .ok()
            .filter(|s| !s.is_empty() && s.len() < 19 && s.bytes().all(|b| b.is_ascii_digit()))
        {
            Some(digits) => digits.parse().unwrap_or(usize::MAX),
            None => {
                framing_problem = Some("Content-Length is not a number");
                0
            }
        },
    };
    let head_only = method == "HEAD";
    let request = Request {
        method,
        path,
        query,
        upgrade,
        websocket_key: key,
        websocket_version: version,
        head_only,
    };
    Ok(Some(Head {
        request,
        len,
        content_length,
        framing_problem,
        close,
    }))
}

/// Reads the body past (no route takes one): false if the client closed or stalled.
fn discard_body(stream: &mut TcpStream, buf: &mut Vec<u8>, length: usize) -> bool {
    let from_buf = length.min(buf.len());
    buf.drain(..from_buf);
    let mut left = length - from_buf;
    let _ = stream.set_read_timeout(Some(HEAD_TIMEOUT));
    let mut chunk = [0u8; 8192];
    while left > 0 {
        let want = left.min(chunk.len());
        match stream.read(&mut chunk[..want]) {
            Ok(0) | Err(_) => return false,
            Ok(n) => left -= n,
        }
    }
    true
}

/// Answers status with the JSON error and closes the connection.
fn refuse(mut stream: TcpStream, status: u16, message: &str) {
    let _ = write_response(&mut stream, &Response::error(status, message), false, true);
    linger(stream);
}

/// Closes a connection whose client may still be sending: the write side first, then what
/// arrives is read and dropped for up to a second, so that the kernel does not answer unread
/// bytes with a reset that could destroy the answer or close frame just written.
pub fn linger(mut stream: TcpStream) {
    let _ = stream.shutdown(Shutdown::Write);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
    let start = Instant::now();
    let mut chunk = [0u8; 8192];
    while start.elapsed() < Duration::from_secs(1) {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
}
