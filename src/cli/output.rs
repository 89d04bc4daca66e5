//! Where a run's results go and how they are shown while it goes: the results path, signal
//! handling, the live line, the live view (`--serve`), then the HTML report, the JSON or the
//! summary, and the exit code.

use super::{OutputArgs, write_html};
use crate::Usage;
use crate::report::console;
use crate::results::description::Description;
use crate::results::file::timeseries_path;
use crate::results::{Invocation, RunResult};
use crate::run::{RunOptions, Signals};
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Whether `path` is `-`: standard output.
pub(super) fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Refuses, before anything is read, run or written, an output path that cannot be one: a
/// device, a pipe, a socket or a directory there (exit 2); `-` is standard output.
pub(super) fn check(what: &str, path: &Path) -> Result<()> {
    if is_stdout(path) {
        return Ok(());
    }
    crate::files::check_output(what, path)
}

/// Writes `text`, the output `what`, to `path` (atomically, as every file storlab writes), or
/// on standard output for `-`.
pub(super) fn emit(what: &str, path: &Path, text: &str) -> Result<()> {
    if is_stdout(path) {
        console::print_text(text.trim_end());
        return Ok(());
    }
    crate::files::write_output(what, path, text.as_bytes())
}

impl OutputArgs {
    /// Runs `body` with the results path, signal handling and live progress these flags ask
    /// for, then writes the HTML report, prints the JSON or the summary, and returns the exit
    /// code.
    pub(super) fn run(
        &self,
        kind: &str,
        invocation: Invocation,
        description: Description,
        body: impl FnOnce(&RunOptions, &Signals, &mut console::Live) -> Result<RunResult>,
    ) -> Result<i32> {
        let results_path = self.output.clone().unwrap_or_else(|| {
            PathBuf::from("storlab-results").join(format!(
                "{kind}-{}.json",
                chrono::Local::now().format("%Y%m%d-%H%M%S")
            ))
        });
        self.check_outputs(&results_path)?;
        let mut opts = RunOptions::new(results_path.clone(), std::env::args().collect());
        opts.invocation = invocation;
        opts.description = Some(description);
        let signals = Signals::install()?;
        let mut live = console::Live::new(self.quiet || self.json);
        let server = match &self.serve {
            Some(spec) => Some(serve(spec, &mut live, &signals)?),
            None => None,
        };
        let result = body(&opts, &signals, &mut live);
        let linger = self.serve_linger.map_or(Duration::ZERO, |d| d.0);
        let result = match result {
            Ok(r) => r,
            Err(e) => {
                if let Some(s) = server {
                    s.finish(None, Duration::ZERO, &signals.stop);
                }
                return Err(e);
            }
        };
        if let Some(path) = &self.html {
            write_html(path, &result)?;
        }
        if self.json {
            console::print_results_json(&result);
        } else {
            console::print_summary_after(&result, live.steps_printed());
            console::note(&format!(
                "results: {} (time series: {})",
                results_path.display(),
                timeseries_path(&results_path).display()
            ));
        }
        if let Some(s) = server {
            s.finish(Some(&result), linger, &signals.stop);
        }
        Ok(crate::exit::of_result(&result))
    }
}

impl OutputArgs {
    /// Refuses outputs that cannot be written before anything runs: the results file and
    /// its time series (files, written as the run goes: never standard output) and the HTML
    /// report.
    fn check_outputs(&self, results: &Path) -> Result<()> {
        if is_stdout(results) {
            return Err(Usage(
                "-o -: a run's results file is written as the run goes, with its time series beside it, so it cannot be standard output; give a file (-o FILE), and --json to print the results as well".into(),
            )
            .into());
        }
        check("the results file", results)?;
        check("the time series", &timeseries_path(results))?;
        if let Some(html) = &self.html {
            check("the HTML report", html)?;
        }
        Ok(())
    }
}

/// Starts the live view's server on `spec` (`--serve`), fed by `live`.
fn serve(spec: &str, live: &mut console::Live, signals: &Signals) -> Result<crate::live::Server> {
    let addr = crate::live::address(spec).map_err(|e| Usage(format!("--serve: {e}")))?;
    let host = rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned();
    let (server, feed) = crate::live::Server::start(addr, &host, signals.failure.clone())
        .map_err(|e| Usage(format!("--serve: {e:#}")))?;
    live.also(Box::new(feed));
    let exposed = if server.addr.ip().is_loopback() {
        ""
    } else {
        " (not loopback: anyone who can reach this address can read it)"
    };
    console::note(&format!(
        "live view: http://{0}/ · metrics: http://{0}/metrics{exposed}",
        server.addr
    ));
    Ok(server)
}
