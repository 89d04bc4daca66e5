//! The live view (`--serve`): while a real run goes, the page in headless Chromium updates
//! without reloading and shows new points; `/metrics` parsed by Prometheus's own Python client
//! (Debian's python3-prometheus-client, OpenMetrics parser, asked as Prometheus asks) has the
//! run's counters and histograms, and once the run is over (`--serve-linger`) they are exactly
//! the results file's; the text format 0.0.4 (asked for by `Accept`) is clean under `promtool
//! check metrics`, and Prometheus's `histogram_quantile` over it is within 1 % of the results'
//! p50, p99 and p99.9,
//! and the page's charts have time and value axes with units and the machine's busy share it
//! shows is the results file's.

use crate::harness::{STORLAB, load_json, scratch, skip};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// `GET path` from `addr`: the body (`None`: no answer).
pub(crate) fn get(addr: &str, path: &str) -> Option<String> {
    get_as(addr, path, "*/*")
}

/// What Prometheus 2.42 sends as its `Accept` header when it scrapes.
const PROMETHEUS_ACCEPT: &str = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

/// `GET path` from `addr` accepting `accept`: the body (`None`: no answer).
fn get_as(addr: &str, path: &str, accept: &str) -> Option<String> {
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.0\r\nHost: {addr}\r\nAccept: {accept}\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.").then(|| body.to_string())
}

/// Every sample of an OpenMetrics text, as Prometheus's Python client parses it: a list of
/// `[name, labels, value]`.
fn parse_metrics(text: &str) -> Vec<Value> {
    let script = "import sys, json\n\
        from prometheus_client.openmetrics.parser import text_string_to_metric_families\n\
        out = []\n\
        for f in text_string_to_metric_families(sys.stdin.read()):\n\
        \x20   for s in f.samples:\n\
        \x20       out.append([s.name, s.labels, s.value])\n\
        print(json.dumps(out))\n";
    let mut child = Command::new("/usr/bin/python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the OpenMetrics parser refused /metrics: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// `promtool check metrics` (Debian's prometheus) finds nothing to say about `text`.
fn promtool_is_clean(text: &str) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (Debian: prometheus) runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && said.trim().is_empty(),
        "promtool check metrics: {said}"
    );
}

/// Prometheus's `histogram_quantile(q, sum by (le) (...))` over the cumulative `buckets`
/// (upper bound, count), sorted by bound and ending with +Inf, as promql/quantile.go computes
/// it: the first bucket whose count reaches the rank, interpolated linearly within it.
fn histogram_quantile(q: f64, buckets: &[(f64, f64)]) -> f64 {
    let total = buckets.last().unwrap().1;
    let rank = q * total;
    let b = buckets.iter().position(|&(_, c)| c >= rank).unwrap();
    if b == buckets.len() - 1 {
        return buckets[b - 1].0;
    }
    if b == 0 && buckets[0].0 <= 0.0 {
        return buckets[0].0;
    }
    let (start, below) = if b == 0 { (0.0, 0.0) } else { buckets[b - 1] };
    let (end, count) = buckets[b];
    start + (end - start) * ((rank - below) / (count - below))
}

/// The quantiles Prometheus computes from the text exposition `text`, summed over workers per
/// direction, are within 1 % of the results file's p50, p99 and p99.9.
fn quantiles_are_within_one_percent(text: &str, r: &Value) {
    for dir_name in ["read", "write"] {
        let mut sums: std::collections::BTreeMap<String, f64> = Default::default();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("storlab_latency_seconds_bucket{") else {
                continue;
            };
            if !rest.contains(&format!("direction=\"{dir_name}\"")) {
                continue;
            }
            let le = rest
                .split("le=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            let v: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
            *sums.entry(le.to_string()).or_default() += v;
        }
        let mut buckets: Vec<(f64, f64)> = (sums.iter())
            .map(|(le, v)| (le.parse::<f64>().unwrap_or(f64::INFINITY), *v))
            .collect();
        buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
        let l = &r["classes"]["worker"][dir_name]["latency_ns"];
        for (q, key) in [(0.5, "p50"), (0.99, "p99"), (0.999, "p99_9")] {
            let want = l[key].as_f64().unwrap() / 1e9;
            let got = histogram_quantile(q, &buckets);
            assert!(
                (got - want).abs() <= want * 0.01,
                "{dir_name} {key}: Prometheus {got} s, results {want} s ({} buckets)",
                buckets.len()
            );
        }
    }
}

/// The value of sample `name` with `labels` (all of them must match).
fn sample(samples: &[Value], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    samples.iter().find_map(|s| {
        let ok = s[0] == name && labels.iter().all(|(k, v)| s[1][*k] == *v);
        ok.then(|| s[2].as_f64().unwrap())
    })
}

/// The lines storlab writes on stderr, as they come.
pub(crate) fn lines(stderr: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

/// Waits for a line of `rx` containing `text`, at most `limit`.
pub(crate) fn wait_line(rx: &Receiver<String>, text: &str, limit: Duration) -> String {
    let start = Instant::now();
    while let Some(left) = limit.checked_sub(start.elapsed()) {
        match rx.recv_timeout(left) {
            Ok(l) if l.contains(text) => return l,
            Ok(_) => {}
            Err(_) => break,
        }
    }
    panic!("storlab never said `{text}`");
}

/// The page's DOM as headless Chromium has it after running its script a few (virtual)
/// seconds.
pub(crate) fn dom_in_chromium(url: &str, profile: &std::path::Path) -> String {
    let out = Command::new("chromium")
        .args(crate::harness::HEADLESS_CHROMIUM)
        .args(["--dump-dom", "--virtual-time-budget=3000"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(url)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Attribute `name` of the first element of `dom` at or after `after`.
pub(crate) fn attr<'a>(dom: &'a str, after: &str, name: &str) -> &'a str {
    let at = dom
        .find(after)
        .unwrap_or_else(|| panic!("{after} not in the page: {dom}"));
    let rest = &dom[at..];
    let start = rest
        .find(&format!("{name}=\""))
        .unwrap_or_else(|| panic!("no {name} after {after}: {dom}"))
        + name.len()
        + 2;
    &rest[start..start + rest[start..].find('"').unwrap()]
}

/// The page as headless Chromium has it: how many updates it drew and how many points its
/// IOPS chart has.
fn page_in_chromium(url: &str, profile: &std::path::Path) -> (u64, u64) {
    let dom = dom_in_chromium(url, profile);
    (
        attr(&dom, "<body", "data-updates").parse().unwrap(),
        attr(&dom, "data-chart=\"iops\"", "data-points")
            .parse()
            .unwrap(),
    )
}

/// The tick labels on axis `axis` (`x` or `y`) of chart `chart` in `dom`.
fn ticks(dom: &str, chart: &str, axis: &str) -> Vec<String> {
    let at = dom
        .find(&format!("data-chart=\"{chart}\""))
        .unwrap_or_else(|| panic!("no chart {chart}: {dom}"));
    let svg = &dom[at..at + dom[at..].find("</svg>").unwrap()];
    (svg.split(&format!("<text data-axis=\"{axis}\"")).skip(1))
        .map(|t| {
            let text = &t[t.find('>').unwrap() + 1..];
            text[..text.find("</text>").unwrap()].to_string()
        })
        .collect()
}

/// The page once the run is over (`dom`, of the run whose results are `r`): every chart has a
/// time axis in seconds and a value axis with its unit, and it shows the machine's busy share
/// as the results file has it (user and kernel time; iowait is idle), as the terminal's
/// summary writes it.
fn the_page_after_the_run(dom: &str, r: &Value) {
    assert_eq!(attr(dom, "<body", "data-done"), "1", "{dom}");
    for (chart, units) in [
        ("iops", &[" IOPS"][..]),
        ("mbps", &[" MB/s"]),
        ("p99", &[" µs", " ms"]),
        ("mean", &[" µs", " ms"]),
        ("machine-cpu", &["%"]),
        ("storlab-cpu", &["%"]),
        ("devices", &["%"]),
    ] {
        let x = ticks(dom, chart, "x");
        assert!(
            x.len() >= 3 && x[0] == "0 s" && x.iter().all(|t| t.ends_with(" s")),
            "{chart}: time axis {x:?}"
        );
        let y = ticks(dom, chart, "y");
        assert!(
            y.len() >= 2 && y.iter().all(|t| units.iter().any(|u| t.ends_with(u))),
            "{chart}: value axis {y:?}"
        );
        if ["machine-cpu", "devices"].contains(&chart) {
            assert_eq!(y.last().unwrap(), "100%", "{chart}: 0-100%: {y:?}");
        }
    }
    let cpu = &r["host_cpu"];
    let pct = |k: &str| cpu[k].as_f64().unwrap();
    let busy = storlab::units::format_pct(pct("system_user_pct") + pct("system_system_pct"));
    assert_eq!(attr(dom, "id=\"cpu\"", "data-machine-busy"), busy, "{dom}");
    let idle = storlab::units::format_pct(pct("system_idle_pct") + pct("system_iowait_pct"));
    assert!(
        dom.contains(&format!("the machine was {busy} busy, {idle} idle")),
        "{busy} busy, {idle} idle: {dom}"
    );
}

#[test]
fn the_live_page_updates_and_metrics_match_the_results() {
    let test = "the_live_page_updates_and_metrics_match_the_results";
    let chromium = Command::new("chromium").arg("--version").output().is_ok();
    let python = std::path::Path::new("/usr/bin/python3").exists()
        && Command::new("/usr/bin/python3")
            .args(["-c", "import prometheus_client.openmetrics.parser"])
            .status()
            .is_ok_and(|s| s.success());
    let promtool = Command::new("promtool").arg("--version").output().is_ok();
    if !chromium || !python || !promtool {
        skip(
            test,
            "chromium, Debian's python3-prometheus-client and promtool are needed (apt-get install chromium python3-prometheus-client prometheus)",
        );
        return;
    }
    let dir = scratch();
    let results = dir.path().join("run.json");
    let mut child = Command::new(STORLAB)
        .current_dir(dir.path())
        .args([
            "run",
            "--target",
            "data.dat",
            "--size",
            "16MiB",
            "--duration",
            "20s",
            "--ramp",
            "0s",
            "--interval",
            "250ms",
            "--read",
            "70",
            "--qd",
            "2",
            "--serve",
            "0",
            "--serve-linger",
            "30s",
            "-o",
        ])
        .arg(&results)
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
    assert!(
        addr.starts_with("127.0.0.1:"),
        "loopback by default: {addr}"
    );
    // The page, loaded twice a second and a half apart: each load draws several updates
    // without reloading, and the second has more points.
    let profile = dir.path().join("chromium");
    let mut first = (0, 0);
    let start = Instant::now();
    while (first.0 < 2 || first.1 < 2) && start.elapsed() < Duration::from_secs(30) {
        first = page_in_chromium(&format!("http://{addr}/"), &profile);
    }
    std::thread::sleep(Duration::from_millis(1500));
    // Beside CPU hogs a load may see one update in Chromium's time: load again, as the first.
    let mut second = (0, 0);
    let start = Instant::now();
    while second.0 < 2 && start.elapsed() < Duration::from_secs(30) {
        second = page_in_chromium(&format!("http://{addr}/"), &profile);
    }
    assert!(
        first.0 >= 2 && second.0 >= 2,
        "updates without reloading: {first:?} {second:?}"
    );
    assert!(
        second.1 > first.1,
        "new points while the run goes: {first:?} then {second:?}"
    );
    // /metrics during the run: parsed, and counting.
    let during = parse_metrics(&get_as(&addr, "/metrics", PROMETHEUS_ACCEPT).expect("/metrics"));
    let reads = [("class", "worker"), ("direction", "read")];
    let so_far = sample(&during, "storlab_ios_total", &reads).expect("a read counter");
    assert!(so_far > 0.0);
    let live: Value = serde_json::from_str(&get(&addr, "/live.json").unwrap()).unwrap();
    assert_eq!(live["loopback"], true);
    assert!(live["verdict"].as_str().unwrap().contains("so far"));
    // After the run (the server lingers): exactly the results file's figures.
    wait_line(&rx, "results: ", Duration::from_secs(120));
    let after = parse_metrics(&get_as(&addr, "/metrics", PROMETHEUS_ACCEPT).expect("lingering"));
    let r = load_json(&results);
    let text = get_as(&addr, "/metrics", "text/plain;version=0.0.4").unwrap();
    promtool_is_clean(&text);
    quantiles_are_within_one_percent(&text, &r);
    for dir_name in ["read", "write"] {
        let labels = [("class", "worker"), ("direction", dir_name)];
        let d = &r["classes"]["worker"][dir_name];
        let ops = d["ops"].as_u64().unwrap() as f64;
        assert_eq!(
            sample(&after, "storlab_ios_total", &labels),
            Some(ops),
            "{dir_name} I/Os"
        );
        assert_eq!(
            sample(&after, "storlab_io_bytes_total", &labels),
            Some(d["bytes"].as_u64().unwrap() as f64),
            "{dir_name} bytes"
        );
        let lat = [("class", "worker"), ("direction", dir_name)];
        assert_eq!(
            sample(&after, "storlab_latency_seconds_count", &lat),
            Some(ops)
        );
        let inf = [("class", "worker"), ("direction", dir_name), ("le", "+Inf")];
        assert_eq!(
            sample(&after, "storlab_latency_seconds_bucket", &inf),
            Some(ops)
        );
        let sum = sample(&after, "storlab_latency_seconds_sum", &lat).unwrap();
        let want = d["latency_ns"]["mean"].as_f64().unwrap() * ops / 1e9;
        assert!(
            (sum - want).abs() <= want * 1e-6,
            "{dir_name}: sum {sum} s, results {want} s"
        );
        // Every label a counter and a histogram has.
        for metric in ["storlab_ios_total", "storlab_latency_seconds_count"] {
            let one = (after.iter())
                .find(|s| s[0] == metric && s[1]["direction"] == dir_name)
                .unwrap();
            for key in ["class", "direction", "worker", "target", "host"] {
                assert!(one[1].get(key).is_some(), "{metric} label {key}: {one}");
            }
        }
    }
    assert!(so_far <= sample(&after, "storlab_ios_total", &reads).unwrap());
    // /metrics's machine busy share is the page's last point's.
    let live: Value = serde_json::from_str(&get(&addr, "/live.json").unwrap()).unwrap();
    let last = live["points"].as_array().unwrap().last().unwrap().clone();
    let busy_gauge = sample(&after, "storlab_machine_busy_percent", &[]).expect("the gauge");
    let busy_point = last["cpu"]["machine_busy_pct"].as_f64().unwrap();
    assert!(
        (busy_gauge - busy_point).abs() < 1e-9,
        "{busy_gauge} {last}"
    );
    let dom = dom_in_chromium(&format!("http://{addr}/"), &profile);
    the_page_after_the_run(&dom, &r);
    let status = child.wait().unwrap();
    assert!(status.success());
}
