//! The web workspace in a real browser: `lore demo` serves the example meetings, and
//! `tests/e2e/workspace.mjs` drives Debian's `chromium` through npm `playwright-core` (no browser
//! download), injecting npm `axe-core` into every page. It signs in with the printed link, walks
//! the scenarios of the workspace (search, evidence chips, history, override, merge and undo,
//! delete after the dry run, graph and connection inspector, review queue), screenshots every
//! page at 1280 px and 390 px into `target/e2e-screenshots/`, and fails on any serious or critical
//! accessibility violation.
//!
//! `.ci/install-test-clients` installs chromium, playwright-core and axe-core. Where one is missing
//! locally the test says so on stderr and passes; in CI (`CI` set) it fails instead.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use common::*;

/// `lore demo --addr 127.0.0.1:0` on a fresh database; killed when dropped.
struct Demo {
    child: Child,
    signin: String,
    log: Arc<Mutex<String>>,
}

impl Demo {
    fn start(dir: &Path) -> Demo {
        let db = dir.join("demo.db");
        let mut child = lore_command(dir, &db)
            .arg("demo")
            .arg("--examples")
            .arg(examples_dir())
            .args(["--addr", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("lore demo starts");
        // Keep draining stdout (the entity briefs) so the server never blocks on a full pipe.
        let mut stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            let mut rest = String::new();
            let _ = stdout.read_to_string(&mut rest);
        });
        // The sign-in line goes to stderr (with the bound port); the rest of stderr is the log.
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut signin = None;
        let mut seen = String::new();
        loop {
            let mut line = String::new();
            if stderr.read_line(&mut line).unwrap_or(0) == 0 {
                break;
            }
            seen.push_str(&line);
            if let Some(rest) = line.split("sign in at ").nth(1) {
                signin = Some(rest.trim().to_string());
                break;
            }
        }
        let Some(signin) = signin else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("lore demo printed no sign-in link on stderr:\n{seen}");
        };
        let log = Arc::new(Mutex::new(seen));
        let sink = log.clone();
        std::thread::spawn(move || {
            let mut line = String::new();
            while stderr.read_line(&mut line).unwrap_or(0) > 0 {
                sink.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        Demo { child, signin, log }
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn clients_dir() -> PathBuf {
    std::env::var_os("LORE_CLIENTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/lore-test-clients")
        })
}

/// Says why the browser tests cannot run: a failure in CI, a visible skip elsewhere.
fn missing(message: String) {
    if std::env::var_os("CI").is_some() {
        panic!("{message}");
    }
    // Written past the test harness's capture so that a skip is visible.
    let _ = writeln!(std::io::stderr(), "SKIPPED: {message}");
}

/// The first of `candidates` that exists.
fn find_executable(candidates: &[PathBuf]) -> Option<PathBuf> {
    candidates.iter().find(|path| path.is_file()).cloned()
}

/// Where the screenshots go: `<target>/e2e-screenshots`, next to the binary's profile folder.
fn screenshot_dir() -> PathBuf {
    let lore = Path::new(env!("CARGO_BIN_EXE_lore"));
    let target = lore
        .parent()
        .and_then(Path::parent)
        .expect("the lore binary lives in <target>/<profile>/");
    target.join("e2e-screenshots")
}

#[test]
fn workspace_in_a_real_browser() {
    let modules = clients_dir().join("npm/node_modules");
    let chromium = std::env::var_os("LORE_CHROMIUM")
        .map(PathBuf::from)
        .or_else(|| {
            find_executable(&[
                PathBuf::from("/usr/bin/chromium"),
                PathBuf::from("/usr/bin/chromium-browser"),
            ])
        });
    let Some(chromium) = chromium else {
        return missing(
            "chromium is not installed; run .ci/install-test-clients (or set LORE_CHROMIUM)".into(),
        );
    };
    for package in ["playwright-core", "axe-core"] {
        if !modules.join(package).join("package.json").is_file() {
            return missing(format!(
                "npm {package} is not installed in {}; run .ci/install-test-clients (or set LORE_CLIENTS_DIR)",
                modules.display()
            ));
        }
    }
    if Command::new("node").arg("--version").output().is_err() {
        return missing("node is not installed; run .ci/install-test-clients".into());
    }

    let shots = screenshot_dir();
    let _ = std::fs::remove_dir_all(&shots);
    std::fs::create_dir_all(&shots).expect("screenshot folder");

    let dir = tempfile::tempdir().unwrap();
    let demo = Demo::start(dir.path());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/workspace.mjs");
    let output = Command::new("node")
        .arg(&script)
        .arg(&demo.signin)
        .arg(&shots)
        .env("NODE_PATH", &modules)
        .env("LORE_CHROMIUM", &chromium)
        .stdin(Stdio::null())
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Printed whether or not it passed: the step list is the report.
    println!("{stdout}");
    let server_log = demo.log.lock().unwrap().clone();
    assert!(
        output.status.success(),
        "browser scenarios failed ({}):\n{stdout}\n--- node stderr ---\n{stderr}\n--- lore demo stderr ---\n{server_log}",
        output.status
    );
    assert!(
        !server_log.contains("panicked"),
        "lore demo panicked:\n{server_log}"
    );
    let pngs = std::fs::read_dir(&shots)
        .unwrap()
        .filter(|entry| {
            entry
                .as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "png"))
        })
        .count();
    assert!(pngs >= 18, "expected screenshots in {}", shots.display());
}
