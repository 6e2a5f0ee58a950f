//! The web workspace from the command line: `lore user` (password from stdin, never echoed or
//! stored in clear) and `lore demo`, which serves the workspace and prints a one-time sign-in link.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Stdio;

use common::*;

/// Runs `lore ARGS` with `input` on stdin.
fn run_with_stdin(dir: &std::path::Path, db: &std::path::Path, args: &[&str], input: &str) -> Run {
    let mut command = lore_command(dir, db);
    command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("lore runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    Run {
        args: args.iter().map(|a| a.to_string()).collect(),
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

#[test]
fn users_are_added_from_stdin_listed_and_removed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("lore.db");
    let added = run_with_stdin(
        dir.path(),
        &db,
        &["user", "add", "dana", "--password-stdin"],
        "correct horse battery\n",
    )
    .success();
    assert!(
        added.stdout.contains("user dana created"),
        "{}",
        added.describe()
    );
    assert!(!added.stdout.contains("correct horse") && !added.stderr.contains("correct horse"));
    // Without --password-stdin, a non-terminal stdin is read the same way.
    run_with_stdin(
        dir.path(),
        &db,
        &["user", "add", "erin"],
        "another password\n",
    )
    .success();
    let again = run_with_stdin(
        dir.path(),
        &db,
        &["user", "add", "dana", "--password-stdin"],
        "correct horse battery\n",
    );
    assert_ne!(again.code, 0, "{}", again.describe());
    assert!(
        again.stderr.contains("already exists"),
        "{}",
        again.describe()
    );
    let short = run_with_stdin(dir.path(), &db, &["user", "add", "fay"], "short\n");
    assert_eq!(short.code, 2, "{}", short.describe());
    let empty = run_with_stdin(dir.path(), &db, &["user", "add", "gus"], "");
    assert_eq!(empty.code, 2, "{}", empty.describe());

    let mut list = lore_command(dir.path(), &db);
    list.args(["--json", "user", "list"]);
    let listed = Run::from_command(list).success();
    let users = listed.json();
    assert_eq!(users.as_array().unwrap().len(), 2, "{}", listed.describe());
    assert_eq!(users[0]["name"], "dana");
    assert!(
        !listed.stdout.contains("argon2"),
        "hashes are never printed"
    );

    let mut remove = lore_command(dir.path(), &db);
    remove.args(["user", "remove", "dana"]);
    Run::from_command(remove).success();
    let mut missing = lore_command(dir.path(), &db);
    missing.args(["user", "remove", "dana"]);
    assert_eq!(Run::from_command(missing).code, 2);
}

/// One HTTP/1.1 request; returns the head (status line and headers) and the body.
fn http(addr: &str, path: &str, cookie: Option<&str>) -> (String, String) {
    let mut stream = TcpStream::connect(addr).expect("connect");
    let cookie = cookie
        .map(|c| format!("Cookie: {c}\r\n"))
        .unwrap_or_default();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{cookie}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    (head.to_string(), body.to_string())
}

#[test]
fn demo_serves_the_workspace_and_prints_a_one_time_signin_link() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_lore"));
    command
        .current_dir(dir.path())
        .env_remove("LORE_DB")
        .env_remove("LORE_OWNER")
        .env("LORE_NOW", NOW)
        .args(["demo", "--addr", "127.0.0.1:0", "--examples"])
        .arg(examples_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = command.spawn().expect("lore demo starts");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut link = None;
    let mut seen = String::new();
    for _ in 0..200 {
        let mut line = String::new();
        if stdout.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        seen.push_str(&line);
        if let Some(rest) = line.split("Open the workspace: ").nth(1) {
            link = Some(rest.trim().to_string());
            break;
        }
    }
    let link = link.unwrap_or_else(|| {
        let _ = child.kill();
        panic!("no sign-in link on stdout:\n{seen}")
    });
    assert!(
        seen.contains("Alice Chen"),
        "the briefs come first:\n{seen}"
    );
    let rest = link.strip_prefix("http://").unwrap();
    let (addr, path) = rest.split_at(rest.find('/').unwrap());
    assert!(path.starts_with("/signin?token="), "{link}");

    let (head, _) = http(addr, path, None);
    assert!(head.starts_with("HTTP/1.1 303"), "{head}");
    let cookie = head
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .expect("a session cookie")
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let (home_head, home) = http(addr, "/", Some(&cookie));
    assert!(home_head.starts_with("HTTP/1.1 200"), "{home_head}");
    assert!(home.contains("Alice Chen"), "{home}");
    let (again, _) = http(addr, path, None);
    assert!(
        again.starts_with("HTTP/1.1 403"),
        "the link works once: {again}"
    );
    let _ = child.kill();
    let _ = child.wait();
}
