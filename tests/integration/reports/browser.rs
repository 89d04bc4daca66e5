//! Every page in headless Chromium: printed to PNG and PDF, and its DOM dumped and checked
//! for the same structure. Without Chromium these tests skip (a failure under CI).

use super::scanner::{Expected, charts, h2_headings};
use super::{CMP_LABELS, COMPARISON, compare, expected, render_report};
use crate::harness::{scratch, skip};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Headless Chromium, or `None` after [`skip`] said why `test` cannot run (under CI its
/// absence is a failure).
pub(super) fn chromium(test: &str) -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|p| p.join(name))
                .find(|p| p.is_file())
        })
    });
    if found.is_none() {
        skip(
            test,
            "chromium is not installed (apt-get install chromium; .ci/run installs it)",
        );
    }
    found
}

/// Runs Chromium headless on `url` with `args` (add `--hide-scrollbars` for pictures without
/// them), its stdout to `stdout`; kills its process group after 60 s.
pub(super) fn run_chromium(
    browser: &Path,
    scratch: &Path,
    url: &str,
    args: &[String],
    stdout: &Path,
) {
    let profile = tempfile::Builder::new()
        .prefix("chromium-profile-")
        .tempdir_in(scratch)
        .expect("a Chromium profile directory");
    let stdout_file = std::fs::File::create(stdout).expect("create Chromium's stdout file");
    // To a file, not a pipe: nobody reads a pipe while Chromium runs, and a full one would
    // block it.
    let stderr_path = stdout.with_extension("stderr");
    let stderr_file = std::fs::File::create(&stderr_path).expect("create Chromium's stderr file");
    let mut command = Command::new(browser);
    command
        .args(crate::harness::HEADLESS_CHROMIUM)
        .arg("--disable-dev-shm-usage")
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(stdout_file)
        .stderr(stderr_file);
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn().expect("start chromium");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for chromium") {
            break status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            }
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium {args:?} {url} did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    assert!(
        status.success(),
        "chromium {args:?} {url} failed ({status}):\n{stderr}"
    );
}

/// Loads `page` in Chromium: prints it to PNG and PDF and checks both, and dumps its DOM and
/// checks its structure against `expected`.
fn check_in_browser(browser: &Path, dir: &Path, what: &str, page: &Path, expected: &Expected) {
    let page = page.canonicalize().expect("canonical page path");
    let url = format!("file://{}", page.display());
    let stem = page.file_stem().unwrap().to_string_lossy().into_owned();
    let noise = dir.join(format!("{stem}.stdout"));

    let png = dir.join(format!("{stem}.png"));
    run_chromium(
        browser,
        dir,
        &url,
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1280,4000".into(),
            "--hide-scrollbars".into(),
        ],
        &noise,
    );
    let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("{what}: no screenshot: {e}"));
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{what}: the screenshot is not a PNG"
    );
    assert!(
        bytes.len() > 10 * 1024,
        "{what}: the screenshot is only {} bytes",
        bytes.len()
    );

    let pdf = dir.join(format!("{stem}.pdf"));
    run_chromium(
        browser,
        dir,
        &url,
        &[
            format!("--print-to-pdf={}", pdf.display()),
            "--no-pdf-header-footer".into(),
            "--hide-scrollbars".into(),
        ],
        &noise,
    );
    let bytes = std::fs::read(&pdf).unwrap_or_else(|e| panic!("{what}: no PDF: {e}"));
    assert!(bytes.starts_with(b"%PDF"), "{what}: the PDF is not a PDF");
    let count = |needle: &[u8]| bytes.windows(needle.len()).filter(|w| *w == needle).count();
    let pages = count(b"/Type /Page").saturating_sub(count(b"/Type /Pages"));
    eprintln!(
        "{what}: PNG {} bytes, PDF {} bytes, {pages} page(s)",
        std::fs::metadata(&png).map_or(0, |m| m.len()),
        bytes.len()
    );
    assert!(
        pages > 1 || bytes.len() > 20 * 1024,
        "{what}: the PDF has {pages} page(s) and only {} bytes",
        bytes.len()
    );

    let dom = dir.join(format!("{stem}.dom.html"));
    run_chromium(
        browser,
        dir,
        &url,
        &["--dump-dom".into(), "--hide-scrollbars".into()],
        &dom,
    );
    let dom = std::fs::read_to_string(&dom).expect("the dumped DOM");
    // The serialised DOM has no doctype; the structure is what matters.
    let charts = charts(&dom);
    let ids: Vec<&str> = charts.iter().map(|c| c.id.as_str()).collect();
    let want: Vec<&str> = expected.charts.iter().map(|c| c.0).collect();
    assert_eq!(ids, want, "{what} in Chromium: the charts in order");
    for (chart, (id, series)) in charts.iter().zip(expected.charts) {
        let want: BTreeSet<String> = series.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            chart.drawn, want,
            "{what} in Chromium: chart {id}: the series drawn with real geometry"
        );
    }
    assert_eq!(
        h2_headings(&dom),
        expected.headings,
        "{what} in Chromium: the <h2> headings"
    );
}

/// One Chromium at a time: each is a burst of processes, CPU and memory, and two at once on
/// a small machine crowd each other towards the 60 s limit. (No other test's assertions
/// depend on the CPU they leave.)
pub(super) static BROWSER: Mutex<()> = Mutex::new(());

/// The report of fixture `name`, in Chromium.
fn browser_report(test: &str, name: &str) {
    let Some(browser) = chromium(test) else {
        return;
    };
    let _one = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch();
    let (page, _) = render_report(dir.path(), name);
    check_in_browser(
        &browser,
        dir.path(),
        &format!("report of {name}.json"),
        &page,
        expected(name),
    );
}

#[test]
fn browser_prints_the_plain_report() {
    browser_report("browser_prints_the_plain_report", "plain");
}

#[test]
fn browser_prints_the_steps_report() {
    browser_report("browser_prints_the_steps_report", "steps");
}

#[test]
fn browser_prints_the_curve_report() {
    browser_report("browser_prints_the_curve_report", "curve");
}

#[test]
fn browser_prints_the_exchange_report() {
    browser_report("browser_prints_the_exchange_report", "exchange");
}

#[test]
fn browser_prints_the_steady_state_report() {
    browser_report("browser_prints_the_steady_state_report", "steady");
}

#[test]
fn browser_prints_the_cache_tier_report() {
    browser_report("browser_prints_the_cache_tier_report", "tier");
}

#[test]
fn browser_prints_the_cache_comparison_report() {
    browser_report("browser_prints_the_cache_comparison_report", "compare");
}

#[test]
fn browser_prints_the_report_of_a_run_over_many_hosts() {
    browser_report(
        "browser_prints_the_report_of_a_run_over_many_hosts",
        "hosts",
    );
}

#[test]
fn browser_prints_the_comparison() {
    let Some(browser) = chromium("browser_prints_the_comparison") else {
        return;
    };
    let _one = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch();
    compare(dir.path(), &["plain", "plain-b"], &CMP_LABELS, true, &[]).expect_ok();
    check_in_browser(
        &browser,
        dir.path(),
        "comparison plain vs plain-b",
        &dir.path().join("cmp.html"),
        &COMPARISON,
    );
}

/// Text that sets the page's title if a page runs it: as an element's event handler, and as
/// a script after closing an attribute.
const HOSTILE: &str =
    "<img src=x onerror=document.title='pwned'>\"><script>document.title='pwned'</script>";

/// The text of the `<title>` in a DOM Chromium dumped.
fn dumped_title(browser: &Path, dir: &Path, page: &Path) -> String {
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let dom = dir.join(format!(
        "{}.dom.html",
        page.file_stem().unwrap().to_string_lossy()
    ));
    run_chromium(browser, dir, &url, &["--dump-dom".into()], &dom);
    let dom = std::fs::read_to_string(&dom).expect("the dumped DOM");
    let from = dom.find("<title>").map(|i| i + "<title>".len());
    let to = dom.find("</title>");
    match (from, to) {
        (Some(from), Some(to)) if from <= to => dom[from..to].to_string(),
        _ => panic!("no <title> in the dumped DOM:\n{dom}"),
    }
}

#[test]
fn browser_runs_no_markup_from_a_results_file() {
    let Some(browser) = chromium("browser_runs_no_markup_from_a_results_file") else {
        return;
    };
    let _one = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch();
    // The control: this Chromium runs such markup when a page holds it as it is, so a title
    // unchanged below means the report holds it as text.
    let control = dir.path().join("control.html");
    std::fs::write(
        &control,
        format!(
            "<!DOCTYPE html><html><head><title>report</title></head><body>{HOSTILE}</body></html>"
        ),
    )
    .unwrap();
    assert_eq!(dumped_title(&browser, dir.path(), &control), "pwned");

    // The run's description (the page's title), its class, its target and a warning.
    let text = std::fs::read_to_string(super::fixture("plain")).expect("the plain fixture");
    let text = text.replace("\"worker\"", &serde_json::to_string(HOSTILE).unwrap());
    let mut results: serde_json::Value = serde_json::from_str(&text).unwrap();
    results["job"]["description"] = HOSTILE.into();
    results["targets"][0]["name"] = HOSTILE.into();
    results["warnings"] = serde_json::json!([HOSTILE]);
    let file = dir.path().join("hostile.json");
    std::fs::write(&file, serde_json::to_string(&results).unwrap()).unwrap();
    let page = dir.path().join("hostile.html");
    crate::harness::run_in(
        dir.path(),
        [Path::new("report"), &file, Path::new("-o"), &page],
    )
    .expect_ok();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("<img") && !html.contains("<script"),
        "{html}"
    );
    // The title is the description, as text: Chromium writes its `<` and `>` escaped.
    let escaped = HOSTILE.replace('<', "&lt;").replace('>', "&gt;");
    assert_eq!(dumped_title(&browser, dir.path(), &page), escaped);
}
