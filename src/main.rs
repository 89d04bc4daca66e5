//! The `storlab` binary: parse, run, print the error chain, exit with its code.

#![allow(clippy::print_stderr)]

fn main() {
    let code = match storlab::cli::run(std::env::args_os()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("storlab: error: {e:#}");
            storlab::cli::exit_code(&e)
        }
    };
    std::process::exit(code)
}
