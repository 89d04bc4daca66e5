//! The live view against hostile clients, over real loopback sockets: a client that sends
//! pipelined requests and never reads stalls neither other clients nor storlab's exit, and is
//! cut off; a 64 MiB request line is cut off early without the process growing; 2,000 idle
//! connections make no thread each and lock nobody out for good; a class name that is markup
//! stays text in headless Chromium; every answer carries the Content-Security-Policy; GET and
//! HEAD of the known paths answer, other methods get 405, other paths 404, a body 413, a
//! request addressed to another name 403. Runs use the null engine at a low rate (no I/O, little CPU), so each
//! bound below is a hang's or a leak's, never this machine's speed.

use crate::harness::{STORLAB, scratch, skip, write_job};
use crate::live::{attr, dom_in_chromium, lines, wait_line};
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// A storlab run serving its live view.
struct Served {
    child: Child,
    /// `127.0.0.1:PORT`.
    addr: String,
    /// Its stderr, line by line.
    rx: Receiver<String>,
}

/// `storlab run ARGS --serve 0` in `dir`, the null engine at 200 I/Os a second, once it
/// serves.
fn serve(dir: &Path, args: &[&str]) -> Served {
    let mut child = Command::new(STORLAB)
        .current_dir(dir)
        .arg("run")
        .args(args)
        .args(["--engine", "null", "--rate", "200", "--ramp", "0s"])
        .args(["--interval", "250ms", "--serve", "0", "-o", "run.json"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rx = lines(child.stderr.take().unwrap());
    let line = wait_line(&rx, "live view: http://", Duration::from_secs(60));
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .unwrap()
        .to_string();
    Served { child, addr, rx }
}

impl Served {
    /// A figure of `/proc/PID/status` (`VmRSS:` in KiB, `Threads:`).
    fn status(&self, key: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        (status.lines())
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("no {key} in {status}"))
    }

    /// Waits for the "results:" line: the run is over, the linger starts.
    fn run_over(&self) {
        wait_line(&self.rx, "results: ", Duration::from_secs(120));
    }

    /// Whether storlab is still running.
    fn child_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Asks storlab to stop as Ctrl-C would (ends its linger).
    fn interrupt(&self) {
        let status = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits for storlab to exit, at most `limit` (a hang's bound).
    fn exit_within(mut self, limit: Duration, what: &str) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                start.elapsed() < limit,
                "storlab still running {limit:?} after {what}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Served {
    /// A test that failed leaves no storlab serving.
    fn drop(&mut self) {
        if self.child.try_wait().is_ok_and(|s| s.is_none()) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// What a server said to one request: the status line and headers, and the body.
struct Answer {
    head: String,
    body: String,
}

impl Answer {
    /// The status code (`None`: no status line, the connection closed without an answer).
    fn status(&self) -> Option<u16> {
        let rest = self.head.strip_prefix("HTTP/1.")?;
        rest.get(2..5)?.parse().ok()
    }

    /// The value of header `name` (case-insensitive).
    fn header(&self, name: &str) -> Option<&str> {
        (self.head.lines()).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// Sends `request` (whole, with its blank line) to `addr` and reads the answer until the
/// server closes: `Err` when it does not answer or close within 20 s (a hang).
fn ask(addr: &str, request: &str) -> std::io::Result<Answer> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(20)))?;
    s.set_write_timeout(Some(Duration::from_secs(20)))?;
    s.write_all(request.as_bytes())?;
    let mut bytes = Vec::new();
    s.read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    Ok(Answer {
        head: head.to_string(),
        body: body.to_string(),
    })
}

/// `METHOD path` over HTTP/1.0 (the server closes after answering).
fn request(addr: &str, method: &str, path: &str) -> std::io::Result<Answer> {
    ask(
        addr,
        &format!("{method} {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n"),
    )
}

/// `/live.json` answers 200 with the run's JSON.
#[track_caller]
fn live_json_answers(addr: &str) {
    let a = request(addr, "GET", "/live.json").expect("/live.json answers");
    assert!(a.status() == Some(200), "{}", a.head);
    let json: serde_json::Value = serde_json::from_str(&a.body).unwrap();
    assert!(json["points"].is_array(), "{}", a.body);
}

/// A client on `addr` that sends pipelined requests until the server stops taking them (its
/// answers fill the sockets' buffers, since this client never reads them).
fn stall(addr: &str) -> TcpStream {
    let mut hog = TcpStream::connect(addr).unwrap();
    hog.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
    let requests = format!("GET /live.json HTTP/1.1\r\nHost: {addr}\r\n\r\n").repeat(1000);
    let mut written = 0usize;
    while written < 256 << 20 {
        match hog.write(requests.as_bytes()) {
            Ok(n) => written += n,
            Err(_) => break,
        }
    }
    assert!(
        written < 256 << 20,
        "the server read 256 MiB of requests without answering"
    );
    hog
}

#[test]
fn a_client_that_never_reads_stalls_neither_other_clients_nor_the_exit() {
    let dir = scratch();
    let served = serve(dir.path(), &["--duration", "5s", "--serve-linger", "2s"]);
    let hog = stall(&served.addr);
    // The server is stuck writing to the hog: others are still served, and the run goes on.
    for _ in 0..3 {
        live_json_answers(&served.addr);
    }
    served.run_over();
    // The linger is 2 s; storlab then exits within about a second whatever the hog does. The
    // bound is a hang's (storlab stayed about 100 s with tiny_http), not a speed.
    let status = served.exit_within(Duration::from_secs(20), "a linger of 2 s");
    assert!(status.success(), "{status}");
    drop(hog);
}

#[test]
fn a_client_that_never_reads_is_cut_off() {
    let dir = scratch();
    let mut served = serve(dir.path(), &["--duration", "1s", "--serve-linger", "120s"]);
    served.run_over();
    let mut hog = stall(&served.addr);
    // The server cuts the hog off (10 s after its answer stopped going out): the hog's next
    // write fails (the server closed with requests unread, so the connection is reset), where
    // it would wait while the server kept it. The bound is a hang's; storlab still serves.
    hog.set_write_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let start = Instant::now();
    let cut = loop {
        match hog.write(b"GET / HTTP/1.1\r\n") {
            Err(e) if e.kind() != ErrorKind::WouldBlock && e.kind() != ErrorKind::TimedOut => {
                break Some(e);
            }
            _ if start.elapsed() > Duration::from_secs(60) => break None,
            _ => std::thread::sleep(Duration::from_millis(200)),
        }
    };
    assert!(
        cut.is_some(),
        "the server kept for 60 s a connection that read none of its answers"
    );
    assert!(
        served.child_running(),
        "storlab ended before the hog was cut off"
    );
    live_json_answers(&served.addr);
    served.interrupt();
    let status = served.exit_within(Duration::from_secs(20), "Ctrl-C in the linger");
    assert!(status.success(), "{status}");
}

#[test]
fn a_huge_request_line_is_cut_off_without_the_process_growing() {
    let dir = scratch();
    let served = serve(dir.path(), &["--duration", "1s", "--serve-linger", "120s"]);
    served.run_over();
    live_json_answers(&served.addr);
    let before_kib = served.status("VmRSS:");
    // 64 MiB of request line and no newline: the server stops reading at its limit (16 KiB)
    // and closes; the writes fail long before 64 MiB (the sockets' buffers hold a few MiB).
    let mut s = TcpStream::connect(&served.addr).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(b"GET /").unwrap();
    let chunk = vec![b'a'; 1 << 20];
    let mut written = 0usize;
    let cut = loop {
        if written >= 64 << 20 {
            break None;
        }
        match s.write(&chunk) {
            Ok(n) => written += n,
            Err(e) => break Some(e),
        }
    };
    let e = cut.unwrap_or_else(|| panic!("the server took a 64 MiB request line"));
    assert!(
        e.kind() != std::io::ErrorKind::WouldBlock && e.kind() != std::io::ErrorKind::TimedOut,
        "the server neither read nor closed: {e} after {written} bytes"
    );
    let peak_kib = served.status("VmHWM:");
    assert!(
        peak_kib < before_kib + 100 * 1024,
        "resident {before_kib} KiB before the request, peak {peak_kib} KiB after"
    );
    drop(s);
    live_json_answers(&served.addr);
    // A line over the limit (16 KiB) that the sockets take whole gets its answer: 431.
    let long = ask(
        &served.addr,
        &format!("GET /{} HTTP/1.0\r\n\r\n", "a".repeat(20 << 10)),
    )
    .unwrap();
    assert!(long.status() == Some(431), "{}", long.head);
    served.interrupt();
    let status = served.exit_within(Duration::from_secs(20), "Ctrl-C in the linger");
    assert!(status.success(), "{status}");
}

#[test]
fn two_thousand_idle_connections_make_no_threads_and_lock_nobody_out() {
    let test = "two_thousand_idle_connections_make_no_threads_and_lock_nobody_out";
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut files = getrlimit(Resource::Nofile);
    if files.current.is_some_and(|n| n < 2200) {
        files.current = files.maximum.map(|m| m.min(4096));
        let _ = setrlimit(Resource::Nofile, files);
    }
    if getrlimit(Resource::Nofile)
        .current
        .is_some_and(|n| n < 2200)
    {
        skip(
            test,
            "2,000 connections need an open-file limit of 2,200 (ulimit -n)",
        );
        return;
    }
    let dir = scratch();
    let served = serve(dir.path(), &["--duration", "3s", "--serve-linger", "120s"]);
    let idle: Vec<TcpStream> = (0..2000)
        .filter_map(|_| {
            TcpStream::connect_timeout(&served.addr.parse().unwrap(), Duration::from_secs(10)).ok()
        })
        .collect();
    assert!(idle.len() >= 1000, "only {} connections made", idle.len());
    let threads = served.status("Threads:");
    assert!(
        threads < 30,
        "{threads} threads with {} connections open",
        idle.len()
    );
    // A new client meanwhile is served or cleanly refused (an answer, or the connection
    // closed), never left hanging.
    match request(&served.addr, "GET", "/live.json") {
        Ok(a) => assert!(
            a.head.is_empty() || a.status() == Some(200) || a.status() == Some(503),
            "{}",
            a.head
        ),
        Err(e) => assert!(
            e.kind() != std::io::ErrorKind::WouldBlock && e.kind() != std::io::ErrorKind::TimedOut,
            "a new client was left hanging: {e}"
        ),
    }
    // The idle connections that were taken are closed after 5 s without a request: then a
    // client is served again, the 2,000 still open on this side. The bound is a hang's.
    let start = Instant::now();
    let served_again = loop {
        if let Ok(a) = request(&served.addr, "GET", "/live.json") {
            if a.status() == Some(200) {
                break true;
            }
        }
        if start.elapsed() > Duration::from_secs(60) {
            break false;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    assert!(
        served_again,
        "no client served in 60 s after 2,000 idle connections"
    );
    assert!(served.status("Threads:") < 30);
    for s in &idle {
        let _ = s.shutdown(Shutdown::Both);
    }
    served.run_over();
    served.interrupt();
    let status = served.exit_within(Duration::from_secs(20), "Ctrl-C in the linger");
    assert!(status.success(), "{status}");
}

#[test]
fn get_and_head_of_the_known_paths_only_each_answer_with_the_policy() {
    let dir = scratch();
    let served = serve(dir.path(), &["--duration", "1s", "--serve-linger", "120s"]);
    served.run_over();
    // Every answer carries the policy and nosniff; the page's policy allows no inline script
    // but its own.
    let page = request(&served.addr, "GET", "/").unwrap();
    let policy = page.header("content-security-policy").expect("a policy");
    assert!(
        policy.starts_with("default-src 'none'; script-src 'sha256-"),
        "{policy}"
    );
    assert!(!policy.contains("unsafe-inline"), "{policy}");
    for path in ["/", "/live.json", "/metrics", "/nowhere"] {
        let a = request(&served.addr, "GET", path).unwrap();
        assert_eq!(a.header("content-security-policy"), Some(policy), "{path}");
        assert_eq!(
            a.header("x-content-type-options"),
            Some("nosniff"),
            "{path}"
        );
    }
    assert!(request(&served.addr, "GET", "/nowhere").unwrap().status() == Some(404));
    // HEAD: the headers of GET, no body; another method: 405, with what is allowed.
    let head = request(&served.addr, "HEAD", "/live.json").unwrap();
    assert!(head.status() == Some(200), "{}", head.head);
    assert!(
        head.body.is_empty() && head.header("content-length").is_some(),
        "{}",
        head.head
    );
    for method in ["POST", "PUT", "DELETE", "OPTIONS"] {
        let a = request(&served.addr, method, "/live.json").unwrap();
        assert!(a.status() == Some(405), "{method}: {}", a.head);
        assert_eq!(a.header("allow"), Some("GET, HEAD"), "{method}");
    }
    // A request with a body (413), or addressed to a name that is not this host's (403,
    // DNS rebinding), is refused.
    let body = ask(
        &served.addr,
        &format!(
            "GET /live.json HTTP/1.0\r\nHost: {}\r\nContent-Length: 3\r\n\r\nabc",
            served.addr
        ),
    )
    .unwrap();
    assert!(body.status() == Some(413), "{}", body.head);
    let port = served.addr.rsplit_once(':').unwrap().1;
    let rebound = ask(
        &served.addr,
        &format!("GET /live.json HTTP/1.0\r\nHost: rebound.example:{port}\r\n\r\n"),
    )
    .unwrap();
    assert!(rebound.status() == Some(403), "{}", rebound.head);
    assert!(!rebound.body.contains("points"), "{}", rebound.body);
    // Issue 44: exactly one Host header, an authority and nothing else, and a target that
    // names no other host (each of these was answered 200).
    let here = &served.addr;
    for (what, head) in [
        (
            "two Host headers",
            format!("GET /live.json HTTP/1.1\r\nHost: {here}\r\nHost: evil.example\r\n"),
        ),
        (
            "user information",
            "GET /live.json HTTP/1.1\r\nHost: 127.0.0.1:1@evil.example\r\n".to_string(),
        ),
        (
            "another host's target",
            format!("GET http://evil.example/live.json HTTP/1.1\r\nHost: {here}\r\n"),
        ),
        ("no Host header", "GET /live.json HTTP/1.1\r\n".to_string()),
    ] {
        let a = ask(here, &format!("{head}Connection: close\r\n\r\n")).unwrap();
        assert!(a.status() == Some(400), "{what}: {}", a.head);
        assert!(!a.body.contains("points"), "{what}: {}", a.body);
    }
    let own = ask(
        here,
        &format!(
            "GET http://{here}/live.json HTTP/1.1\r\nHost: {here}\r\nConnection: close\r\n\r\n"
        ),
    )
    .unwrap();
    assert!(
        own.status() == Some(200),
        "the absolute form of its own address: {}",
        own.head
    );
    served.interrupt();
    let status = served.exit_within(Duration::from_secs(20), "Ctrl-C in the linger");
    assert!(status.success(), "{status}");
}

#[test]
fn a_class_named_as_markup_stays_text_in_the_page() {
    let test = "a_class_named_as_markup_stays_text_in_the_page";
    if Command::new("chromium").arg("--version").output().is_err() {
        skip(test, "chromium is needed (apt-get install chromium)");
        return;
    }
    let dir = scratch();
    let class = "<img src=x onerror=document.title='pwned'>";
    let job = format!(
        "[[target]]\npath = \"t.dat\"\nsize = \"16MiB\"\n\n[[worker]]\nqueue_depth = 1\n\n\
         [[worker.access]]\nclass = \"{class}\"\nblock_size = \"4k\"\nread = \"100%\"\nrandom = \"100%\"\n"
    );
    let job = write_job(dir.path(), "job.toml", &job);
    let served = serve(
        dir.path(),
        &[
            job.to_str().unwrap(),
            "--duration",
            "2s",
            "--serve-linger",
            "120s",
        ],
    );
    served.run_over();
    let json = request(&served.addr, "GET", "/live.json").unwrap().body;
    assert!(json.contains(class), "the class is in /live.json: {json}");
    // In headless Chromium: the page drew the class's series (its script ran under the
    // policy), with the class's name as text; no image element, the title unchanged.
    let profile = dir.path().join("chromium");
    let dom = dom_in_chromium(&format!("http://{}/", served.addr), &profile);
    assert!(
        attr(&dom, "<body", "data-updates").parse::<u64>().unwrap() >= 1,
        "the page's script did not run: {dom}"
    );
    assert_eq!(attr(&dom, "<body", "data-done"), "1", "{dom}");
    assert!(!dom.contains("<img"), "an image element: {dom}");
    assert!(
        dom.contains("&lt;img src=x onerror=document.title='pwned'&gt; read"),
        "the class's name as text in the legend: {dom}"
    );
    let title = &dom[dom.find("<title>").unwrap() + 7..dom.find("</title>").unwrap()];
    assert!(
        title.starts_with("storlab live · ") && !title.contains("pwned"),
        "{title}"
    );
    served.interrupt();
    let status = served.exit_within(Duration::from_secs(20), "Ctrl-C in the linger");
    assert!(status.success(), "{status}");
}
