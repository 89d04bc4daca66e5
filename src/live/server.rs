//! The live view's HTTP server, and its limits: hyper's HTTP/1.1 on a tokio runtime of one
//! thread (the `storlab-serve` thread, whatever the clients do), at most [`MAX_CONNECTIONS`]
//! connections at once (the rest are refused: closed at once, with a best-effort 503), a
//! request's start line and headers at most [`MAX_HEAD_BYTES`] (hyper answers 431 and closes),
//! a request's head in [`HEAD_TIMEOUT`] (an idle connection is closed after it too), a
//! response that cannot be written out in [`WRITE_TIMEOUT`] ends its connection, and no request
//! body. GET and HEAD of `/`, `/live.json` and `/metrics` only (405 for another method, 404 for
//! another path). A request carries exactly one `Host` header, an authority and nothing else
//! (no user information), and its target is a path or, in absolute form, names that same
//! authority (400 otherwise: whichever host a proxy or the client would take, it is this
//! one). On loopback, a request must be addressed to an IP address, `localhost` or this
//! host's name (403 otherwise), so that a web page elsewhere cannot read the live view
//! through a name of its own that it points at 127.0.0.1 (DNS rebinding).
//!
//! The run never waits for the server: the collector only takes the state's lock, which a
//! request holds only to render its answer in memory, never while writing to a client. When
//! the server stops, connections get [`SHUTDOWN_GRACE`] to finish the answer they are writing,
//! then the runtime is dropped with every connection still open, and [`Server::finish`] waits
//! at most [`STOP_WAIT`] for the thread.

use super::{Feed, State, edit, lock, metrics, page};
use crate::fault::Failure;
use crate::results::RunResult;
use anyhow::{Context, Result};
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Body;
use hyper::header::{self, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, oneshot};
use tokio::time::Sleep;

/// Connections served at once; more are refused.
pub(super) const MAX_CONNECTIONS: usize = 64;
/// The longest request start line and headers, bytes (nginx's `large_client_header_buffers`
/// allows 4 of 8 KiB).
pub(super) const MAX_HEAD_BYTES: usize = 16 * 1024;
/// The time a client has to send a request's head, from the end of the previous answer (or
/// the connection's start): an idle connection is closed after it.
pub(super) const HEAD_TIMEOUT: Duration = Duration::from_secs(5);
/// The time an answer has to be written out once writing has had to wait for the client.
pub(super) const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// The time open connections get to finish their answer when the server stops.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);
/// The longest [`Server::finish`] waits for the server's thread once it is told to stop.
const STOP_WAIT: Duration = Duration::from_secs(2);
/// The live view's thread, as a failure names it.
const WHO: &str = "the live view's server";
/// The paths served.
const PATHS: [&str; 3] = ["/", "/live.json", "/metrics"];

/// The server of one run's live view.
pub(crate) struct Server {
    state: Arc<Mutex<State>>,
    /// Tells the server's thread to stop (`None` once told).
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<Option<()>>>,
    /// Where it listens.
    pub(crate) addr: SocketAddr,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("addr", &self.addr).finish()
    }
}

/// `PORT` (loopback) or `ADDR:PORT`, as a socket address.
pub(crate) fn address(spec: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = spec.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    spec.parse::<SocketAddr>().map_err(|_| {
        format!("`{spec}` is not a port or an address with a port (8080, 127.0.0.1:8080, [::1]:8080, 0.0.0.0:8080)")
    })
}

impl Server {
    /// Listens on `addr` and serves from a thread of its own; `host` names this host in the
    /// metrics (and, on loopback, is a name requests may be addressed to).
    pub(crate) fn start(addr: SocketAddr, host: &str, failure: Failure) -> Result<(Server, Feed)> {
        let listener = std::net::TcpListener::bind(addr)
            .with_context(|| format!("cannot serve the live view on {addr}"))?;
        listener
            .set_nonblocking(true)
            .with_context(|| format!("cannot serve the live view on {addr}"))?;
        let addr = listener
            .local_addr()
            .context("the live view's server has no address")?;
        // Everything that can fail is done here, so that the thread only serves.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .context("cannot start the live view's server (its tokio runtime)")?;
        let listener = {
            let _in_runtime = runtime.enter();
            TcpListener::from_std(listener)
                .with_context(|| format!("cannot serve the live view on {addr}"))?
        };
        let state = Arc::new(Mutex::new(State {
            host: host.to_string(),
            served_on: addr.to_string(),
            loopback: addr.ip().is_loopback(),
            phase: "starting".into(),
            ..State::default()
        }));
        let (stop, stopped) = oneshot::channel();
        let thread = {
            let state = Arc::clone(&state);
            std::thread::Builder::new()
                .name("storlab-serve".into())
                .spawn(move || {
                    failure.guard(WHO, || {
                        crate::fault::inject(crate::fault::Kind::Live);
                        serve(&runtime, listener, &state, stopped, &failure);
                    })
                })
                .context("cannot start the live view's thread")?
        };
        let feed = Feed {
            state: Arc::clone(&state),
        };
        let server = Server {
            state,
            stop: Some(stop),
            thread: Some(thread),
            addr,
        };
        Ok((server, feed))
    }

    /// The run is over: the page says so (with `result`'s CPU, when the run gave results), the
    /// server keeps serving the final figures for `linger` or until `stop` is set (Ctrl-C),
    /// then stops, within about [`SHUTDOWN_GRACE`] whatever its clients do.
    pub(crate) fn finish(
        mut self,
        result: Option<&RunResult>,
        linger: Duration,
        stop: &AtomicBool,
    ) {
        {
            let mut s = edit(&self.state);
            s.final_cpu = result.map(|r| r.host_cpu);
            s.final_verdict = (result.and_then(|r| r.verdict.as_ref())).map(|v| {
                v.note()
                    .unwrap_or_else(|| format!("{} (the results file's)", v.result))
            });
            s.done = true;
        }
        let end = Instant::now() + linger;
        while !stop.load(Ordering::Relaxed) {
            let Some(left) = end.checked_duration_since(Instant::now()) else {
                break;
            };
            std::thread::sleep(left.min(Duration::from_millis(50)));
        }
        self.stop();
    }

    /// Tells the server's thread to stop, and waits for it at most [`STOP_WAIT`] (a thread
    /// still going after that is left to end with the process).
    fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let Some(thread) = self.thread.take() else {
            return;
        };
        let start = Instant::now();
        while !thread.is_finished() && start.elapsed() < STOP_WAIT {
            std::thread::sleep(Duration::from_millis(10));
        }
        if thread.is_finished() {
            let _ = thread.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The server's thread: serves on `listener` until `stopped`, then closes every connection.
fn serve(
    runtime: &tokio::runtime::Runtime,
    listener: TcpListener,
    state: &Arc<Mutex<State>>,
    stopped: oneshot::Receiver<()>,
    failure: &Failure,
) {
    runtime.block_on(accept(listener, state, stopped, failure));
    // Dropping the runtime (the thread's end) drops every connection still open.
}

/// Accepts connections until `stopped`, each served on a task of its own while a slot is
/// free; then gives those open [`SHUTDOWN_GRACE`] to finish.
async fn accept(
    listener: TcpListener,
    state: &Arc<Mutex<State>>,
    mut stopped: oneshot::Receiver<()>,
    failure: &Failure,
) {
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT)
        .max_header_size(MAX_HEAD_BYTES)
        .max_buf_size(2 * MAX_HEAD_BYTES)
        .keep_alive(true);
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let graceful = GracefulShutdown::new();
    loop {
        let stream = tokio::select! {
            _ = &mut stopped => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of descriptors, or a connection reset before it was accepted: try again
                // a little later rather than spin.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            refuse(&stream);
            continue;
        };
        let (state, failure) = (Arc::clone(state), failure.clone());
        let service = service_fn(move |request| {
            // A panic while answering is the run's failure too (tokio would only end the
            // connection's task).
            let response =
                (failure.guard(WHO, || respond(&request, &state))).unwrap_or_else(|| {
                    let mut r = reply(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        TEXT,
                        "the live view failed\n",
                    );
                    (r.headers_mut()).insert(header::CONNECTION, HeaderValue::from_static("close"));
                    r
                });
            std::future::ready(Ok::<_, Infallible>(response))
        });
        let connection =
            graceful.watch(http.serve_connection(TokioIo::new(Timed::new(stream)), service));
        tokio::spawn(async move {
            let _ = connection.await;
            drop(slot);
        });
    }
    drop(listener);
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await;
}

/// A connection over the limit: a 503 if the socket takes it at once, then closed.
fn refuse(stream: &TcpStream) {
    const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n\
        Content-Length: 57\r\nRetry-After: 5\r\nConnection: close\r\n\r\n\
        the live view is serving as many clients as it can; retry\n";
    let _ = stream.try_write(BUSY);
}

/// The answer to `request`, made from `state` (whose lock it holds only while it renders).
fn respond<B: Body>(request: &Request<B>, state: &Mutex<State>) -> Response<Full<Bytes>> {
    let to = match authority(request) {
        Ok(to) => to,
        Err(why) => {
            let mut r = reply(StatusCode::BAD_REQUEST, TEXT, why);
            (r.headers_mut()).insert(header::CONNECTION, HeaderValue::from_static("close"));
            return r;
        }
    };
    let here = {
        let s = lock(state);
        addressed_here(&to, s.loopback, &s.host)
    };
    if !here {
        return reply(
            StatusCode::FORBIDDEN,
            TEXT,
            "the live view on loopback answers requests addressed to an IP address, localhost or this host's name only\n",
        );
    }
    let path = request.uri().path();
    if !PATHS.contains(&path) {
        return reply(
            StatusCode::NOT_FOUND,
            TEXT,
            "not found: / (the page), /live.json, /metrics\n",
        );
    }
    if request.method() != Method::GET && request.method() != Method::HEAD {
        let mut r = reply(
            StatusCode::METHOD_NOT_ALLOWED,
            TEXT,
            format!("{path} answers GET and HEAD only\n"),
        );
        (r.headers_mut()).insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    if !request.body().is_end_stream() {
        let mut r = reply(
            StatusCode::PAYLOAD_TOO_LARGE,
            TEXT,
            "a request to the live view has no body\n",
        );
        (r.headers_mut()).insert(header::CONNECTION, HeaderValue::from_static("close"));
        return r;
    }
    let (body, kind) = match path {
        "/" => (page::html(&lock(state)).into(), "text/html; charset=utf-8"),
        "/live.json" => (lock(state).json(), "application/json"),
        _ => {
            let accept = (request.headers().get(header::ACCEPT)).and_then(|a| a.to_str().ok());
            let format = metrics::Format::negotiate(accept);
            (
                metrics::encode(&lock(state), format).into(),
                format.content_type(),
            )
        }
    };
    reply(StatusCode::OK, kind, body)
}

/// Plain text's content type.
const TEXT: &str = "text/plain; charset=utf-8";

/// An answer of `status` with `body` of type `kind`, and the headers every answer carries: the
/// page's Content-Security-Policy, no content sniffing, no caching, no referrer, and no
/// reading by another site's page.
fn reply(status: StatusCode, kind: &'static str, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(page::content_security_policy()),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
    r
}

/// The host a request is addressed to: its one `Host` header, a host and an optional port
/// and nothing else (no user information: `127.0.0.1:1@evil.example` names evil.example),
/// and the request's target in origin form (`/live.json`) or, in absolute form, naming that
/// same authority over http. Anything else is a malformed request (400): no `Host` or two,
/// a `Host` that is not an authority, an absolute target naming another host than `Host`
/// (whichever of the two a proxy or the client would take).
fn authority<B>(request: &Request<B>) -> Result<String, &'static str> {
    let mut hosts = request.headers().get_all(header::HOST).iter();
    let (Some(value), None) = (hosts.next(), hosts.next()) else {
        return Err("a request to the live view carries exactly one Host header\n");
    };
    let text = value.to_str().unwrap_or_default();
    let host = host_of(text).ok_or(
        "the Host header of a request to the live view is a host and a port, nothing else\n",
    )?;
    let uri = request.uri();
    match uri.authority() {
        None if uri.scheme().is_none() => Ok(host.to_string()),
        Some(target)
            if uri.scheme_str() == Some("http") && target.as_str().eq_ignore_ascii_case(text) =>
        {
            Ok(host.to_string())
        }
        _ => Err(
            "the target of a request to the live view is a path (/live.json), or http:// with the Host header's own host\n",
        ),
    }
}

/// The host of `authority` when it is one as `Host` carries it: a name or an IPv4 address of
/// letters, digits, `-`, `.` and `_`, or an IPv6 address in brackets, then at most a port of
/// digits below 65536.
fn host_of(authority: &str) -> Option<&str> {
    let (host, port) = match authority.strip_prefix('[') {
        Some(rest) => {
            let (v6, after) = rest.split_once(']')?;
            v6.parse::<Ipv6Addr>().ok()?;
            let port = match after {
                "" => None,
                p => Some(p.strip_prefix(':')?),
            };
            (&authority[..v6.len() + 2], port)
        }
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    let name_ok = host.starts_with('[')
        || (!host.is_empty()
            && host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_')));
    let port_ok = port.is_none_or(|p| {
        !p.is_empty()
            && p.len() <= 5
            && p.bytes().all(|b| b.is_ascii_digit())
            && p.parse::<u16>().is_ok()
    });
    (name_ok && port_ok).then_some(host)
}

/// Whether a request addressed to the host `to` (of its `Host` header) is for this server:
/// always when it serves beyond loopback (the user chose to expose it); on loopback when `to`
/// names an IP address, `localhost` (or a name under it) or this host (`host`), not a name
/// someone else controls. Any port: a tunnel (`ssh -L 8080:localhost:9100`) forwards to the
/// server from another one.
fn addressed_here(to: &str, loopback: bool, host: &str) -> bool {
    if !loopback {
        return true;
    }
    if let Some(v6) = to.strip_prefix('[') {
        return v6
            .strip_suffix(']')
            .is_some_and(|a| a.parse::<Ipv6Addr>().is_ok());
    }
    let name = to.strip_suffix('.').unwrap_or(to).to_ascii_lowercase();
    name.parse::<IpAddr>().is_ok()
        || name == "localhost"
        || name.ends_with(".localhost")
        || name.eq_ignore_ascii_case(host)
}

/// A client connection whose answers must be written out in time: once a write has to wait
/// for the client, what hyper holds must be written within [`WRITE_TIMEOUT`] (until hyper
/// flushes), else the connection fails with a timeout and is closed. Reads are hyper's to time
/// ([`HEAD_TIMEOUT`]).
struct Timed {
    stream: TcpStream,
    deadline: Pin<Box<Sleep>>,
    /// Whether `deadline` runs: a write is waiting.
    waiting: bool,
}

impl Timed {
    fn new(stream: TcpStream) -> Timed {
        Timed {
            stream,
            deadline: Box::pin(tokio::time::sleep(WRITE_TIMEOUT)),
            waiting: false,
        }
    }

    /// A write that has to wait: starts the deadline (if it does not run yet); past it, fails.
    fn wait<T>(&mut self, cx: &mut TaskContext<'_>) -> Poll<io::Result<T>> {
        if !self.waiting {
            self.waiting = true;
            (self.deadline.as_mut()).reset(tokio::time::Instant::now() + WRITE_TIMEOUT);
        }
        match self.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client did not read the live view's answer in time",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncRead for Timed {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Timed {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.stream).poll_write(cx, buf) {
            Poll::Pending => this.wait(cx),
            done => done,
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.stream).poll_write_vectored(cx, bufs) {
            Poll::Pending => this.wait(cx),
            done => done,
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    /// hyper flushes once it has written all it holds: the answer is out, the deadline stops.
    fn poll_flush(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.stream).poll_flush(cx) {
            Poll::Pending => this.wait(cx),
            done => {
                this.waiting = false;
                done
            }
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.stream).poll_shutdown(cx) {
            Poll::Pending => this.wait(cx),
            done => done,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{State, address, addressed_here, respond};
    use bytes::Bytes;
    use http_body_util::{BodyExt, Empty, Full};
    use hyper::{Method, Request, StatusCode};
    use std::sync::Mutex;

    #[test]
    fn a_port_alone_is_loopback_and_another_address_must_be_given_whole() {
        assert_eq!(address("9100").unwrap().to_string(), "127.0.0.1:9100");
        assert_eq!(address("0.0.0.0:9100").unwrap().to_string(), "0.0.0.0:9100");
        assert_eq!(address("[::1]:80").unwrap().to_string(), "[::1]:80");
        let e = address("localhost").unwrap_err();
        assert!(e.contains("`localhost` is not a port or an address"), "{e}");
    }

    #[test]
    fn on_loopback_a_request_must_be_addressed_to_an_ip_localhost_or_this_host() {
        let s = state();
        let status = |host: &str| respond(&request(Method::GET, "/live.json", host), &s).status();
        for to in [
            "127.0.0.1:9100",
            "127.0.0.1",
            "[::1]:9100",
            "localhost:9100",
            "LOCALHOST",
            "app.localhost:9100",
            "db1:9100",
            "db1.:9100",
        ] {
            assert_eq!(status(to), StatusCode::OK, "{to}");
        }
        for to in ["attacker.example:9100", "db1.attacker.example"] {
            assert_eq!(status(to), StatusCode::FORBIDDEN, "{to}");
            assert!(
                !addressed_here(to.split(':').next().unwrap(), true, "db1"),
                "{to}"
            );
            assert!(addressed_here(to, false, "db1"), "{to} beyond loopback");
        }
        // Not an authority at all (issue 44: `127.0.0.1:1@evil.example` names evil.example).
        for to in [
            "127.0.0.1:1@evil.example",
            "",
            "127.0.0.1:x",
            "a b",
            "127.0.0.1:99999",
        ] {
            assert_eq!(status(to), StatusCode::BAD_REQUEST, "{to:?}");
        }
    }

    #[test]
    fn exactly_one_host_header_and_a_target_that_names_no_other_host() {
        let s = state();
        let send = |builder: hyper::http::request::Builder| {
            respond(&builder.body(Empty::<Bytes>::new()).unwrap(), &s)
        };
        let two = Request::builder()
            .uri("/live.json")
            .header("host", "127.0.0.1:9100")
            .header("host", "evil.example");
        let r = send(two);
        assert_eq!(r.status(), StatusCode::BAD_REQUEST);
        assert!(body(r).contains("exactly one Host header"));
        assert_eq!(
            send(Request::builder().uri("/live.json")).status(),
            StatusCode::BAD_REQUEST
        );
        // Absolute form: only naming the Host's own authority, over http.
        let absolute = |target: &str| {
            Request::builder()
                .uri(target)
                .header("host", "127.0.0.1:9100")
        };
        assert_eq!(
            send(absolute("http://127.0.0.1:9100/live.json")).status(),
            StatusCode::OK
        );
        for target in [
            "http://evil.example/live.json",
            "http://127.0.0.1:9101/live.json",
            "https://127.0.0.1:9100/live.json",
            "http://u@127.0.0.1:9100/live.json",
        ] {
            assert_eq!(
                send(absolute(target)).status(),
                StatusCode::BAD_REQUEST,
                "{target}"
            );
        }
    }

    fn state() -> Mutex<State> {
        Mutex::new(State {
            host: "db1".into(),
            served_on: "127.0.0.1:9100".into(),
            loopback: true,
            ..State::default()
        })
    }

    fn request(method: Method, path: &str, host: &str) -> Request<Empty<Bytes>> {
        Request::builder()
            .method(method)
            .uri(path)
            .header("host", host)
            .body(Empty::new())
            .unwrap()
    }

    fn body(r: hyper::Response<Full<Bytes>>) -> String {
        let bytes = futures_executor(r.into_body().collect());
        String::from_utf8(bytes.unwrap().to_bytes().to_vec()).unwrap()
    }

    /// Runs a future that is ready at once (a full body's).
    fn futures_executor<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn get_and_head_of_the_known_paths_only_with_the_security_headers() {
        let s = state();
        let here = "127.0.0.1:9100";
        for (path, kind) in [
            ("/", "text/html; charset=utf-8"),
            ("/live.json?x=1", "application/json"),
            ("/metrics", "text/plain; version=0.0.4; charset=utf-8"),
        ] {
            for method in [Method::GET, Method::HEAD] {
                let r = respond(&request(method.clone(), path, here), &s);
                assert_eq!(r.status(), StatusCode::OK, "{method} {path}");
                assert_eq!(r.headers()["content-type"], kind);
                assert_eq!(r.headers()["x-content-type-options"], "nosniff");
                let csp = r.headers()["content-security-policy"].to_str().unwrap();
                assert!(csp.contains("script-src 'sha256-"), "{csp}");
            }
            for method in [Method::POST, Method::PUT, Method::DELETE, Method::OPTIONS] {
                let r = respond(&request(method.clone(), path, here), &s);
                assert_eq!(
                    r.status(),
                    StatusCode::METHOD_NOT_ALLOWED,
                    "{method} {path}"
                );
                assert_eq!(r.headers()["allow"], "GET, HEAD");
            }
        }
        let r = respond(&request(Method::GET, "/etc/passwd", here), &s);
        assert_eq!(r.status(), StatusCode::NOT_FOUND);
        assert!(body(r).contains("/live.json"));
        let r = respond(&request(Method::GET, "/", "rebound.example:9100"), &s);
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
        assert!(r.headers().contains_key("content-security-policy"));
        // A GET with a body is refused, and its connection closed.
        let with_body = Request::builder()
            .uri("/live.json")
            .header("host", here)
            .body(Full::new(Bytes::from_static(b"x")))
            .unwrap();
        let r = respond(&with_body, &s);
        assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(r.headers()["connection"], "close");
        let r = respond(&request(Method::GET, "/live.json", here), &s);
        let json: serde_json::Value = serde_json::from_str(&body(r)).unwrap();
        assert_eq!(json["host"], "db1");
    }
}
