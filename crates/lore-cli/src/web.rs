//! `lore user`: web workspace users with passwords (hosted mode). A user's name is the owner it
//! signs in as. The password is read from stdin (one line), never from an argument, never echoed.

use std::io::{BufRead, IsTerminal, Write};

use clap::Subcommand;
use lore_engine::Engine;

use crate::commands::BadInput;
use crate::output;

#[derive(Subcommand, Debug)]
pub enum UserAction {
    /// Create a user; the password is read from stdin (typed without echo on a terminal)
    Add {
        name: String,
        /// Read the password from stdin without prompting (for scripts); the default when stdin is not a terminal
        #[arg(long)]
        password_stdin: bool,
    },
    /// List users (names and creation times; never password hashes)
    List,
    /// Remove a user; the owner's data stays
    Remove { name: String },
}

/// Reads one line from stdin; on a terminal, prompts on stderr and turns echo off while typing.
fn read_password(prompt: bool) -> anyhow::Result<String> {
    let stdin = std::io::stdin();
    let terminal = stdin.is_terminal() && prompt;
    let echo_off = terminal
        && std::process::Command::new("stty")
            .arg("-echo")
            .stdin(std::process::Stdio::inherit())
            .status()
            .is_ok_and(|s| s.success());
    if terminal {
        eprint!("Password: ");
        let _ = std::io::stderr().flush();
    }
    let mut line = String::new();
    let read = stdin.lock().read_line(&mut line);
    if echo_off {
        let _ = std::process::Command::new("stty")
            .arg("echo")
            .stdin(std::process::Stdio::inherit())
            .status();
        eprintln!();
    }
    read?;
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}

pub fn user(engine: &Engine, action: UserAction, json: bool) -> anyhow::Result<()> {
    match action {
        UserAction::Add {
            name,
            password_stdin,
        } => {
            let password = read_password(!password_stdin)?;
            if password.is_empty() {
                return Err(BadInput("no password given on stdin".into()).into());
            }
            let user = engine.create_user(&name, &password)?;
            output::print_value(json, &user, |u| {
                format!(
                    "user {} created; it signs in to the web workspace as owner {}",
                    u.name, u.name
                )
            });
        }
        UserAction::List => {
            let users = engine.list_users()?;
            output::print_value(json, &users, |users| {
                if users.is_empty() {
                    return "no users; create one with `lore user add NAME`".into();
                }
                users
                    .iter()
                    .map(|u| format!("{}  created {}", u.name, &u.created_at.to_rfc3339()[..10]))
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        }
        UserAction::Remove { name } => {
            engine.remove_user(&name)?;
            output::print_value(json, &serde_json::json!({"removed": name}), |_| {
                format!("user {name} removed")
            });
        }
    }
    Ok(())
}
