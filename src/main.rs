//! The `storlab` binary: parse, run, print the error chain, exit with its code.

#![allow(clippy::print_stderr)]

fn main() {
    let code = match storlab::cli::run(std::env::args_os()) {
        Ok(code) => code,
        Err(e) => {
            // An operating system's error reads as a sentence, without `(os error N)`.
            let text = storlab::units::strip_os_error(&format!("{e:#}"));
            // A message may name a file or a job's class: its control characters as text.
            eprintln!("storlab: error: {}", storlab::units::escape_lines(&text));
            storlab::cli::exit_code(&e)
        }
    };
    std::process::exit(code)
}
