//! The `lore` command line: parses arguments, opens the database chosen by `--db`, calls the engine,
//! and prints results. Exit codes: 0 success, 1 runtime error, 2 bad usage or bad input.

#![forbid(unsafe_code)]

mod commands;
mod identity_output;
mod output;
mod portable;
mod read_output;
mod serve;
mod transcripts;
mod web;

use std::process::ExitCode;

use clap::Parser;

/// Every row the engine reads or writes is a handful of short-lived allocations; mimalloc serves
/// them with less work than the system allocator (BENCHMARKS.md, fifth round). It does not replace
/// `malloc` for the bundled SQLite: that saved 2 % of the writes' instructions, which no timing
/// showed (BENCHMARKS.md, twentieth round).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = match commands::Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() { 2 } else { 0 });
        }
    };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("LORE_LOG").unwrap_or_else(|_| {
                // A server logs one line per request; other commands only warnings.
                if matches!(cli.command, commands::Command::Serve(_)) {
                    "info".into()
                } else {
                    "warn".into()
                }
            }),
        )
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .without_time()
        .with_target(false)
        .init();
    match commands::run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(commands::exit_code(&error))
        }
    }
}
