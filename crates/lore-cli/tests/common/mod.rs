//! Helpers shared by the end-to-end tests: run the real `lore` binary on a private temp folder.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The fixed clock every test runs under (`LORE_NOW`).
pub const NOW: &str = "2026-11-29T12:00:00Z";

/// The example bundles shipped with the repository.
pub fn examples_dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/meetings"
    ))
}

/// The example bundle whose file name starts with `prefix` (e.g. "07-").
pub fn example_file(prefix: &str) -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir(examples_dir())
        .expect("examples folder is readable")
        .map(|entry| entry.expect("readable entry").path())
        .filter(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with(prefix))
        })
        .collect();
    assert_eq!(found.len(), 1, "exactly one example starts with {prefix}");
    found.remove(0)
}

/// The `meeting.external_id` of the example bundle whose file name starts with `prefix`.
pub fn example_external_id(prefix: &str) -> String {
    let text = std::fs::read_to_string(example_file(prefix)).expect("example is readable");
    let bundle: Value = serde_json::from_str(&text).expect("example is JSON");
    bundle["meeting"]["external_id"]
        .as_str()
        .expect("external_id is a string")
        .to_string()
}

/// A `lore` command with a clean, deterministic environment, run inside `dir`.
pub fn lore_command(dir: &Path, db: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lore"));
    command
        .current_dir(dir)
        .env_remove("LORE_DB")
        .env_remove("LORE_OWNER")
        .env_remove("LORE_LOG")
        .env_remove("RUST_BACKTRACE")
        .env("LORE_NOW", NOW)
        .env("NO_COLOR", "1")
        .arg("--db")
        .arg(db);
    command
}

/// The outcome of one run of the binary.
#[derive(Debug)]
pub struct Run {
    pub args: Vec<String>,
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn from_command(mut command: Command) -> Run {
        let args = command
            .get_args()
            .map(|a| {
                let a = a.to_string_lossy();
                if a.chars().count() > 200 {
                    format!("{}…", a.chars().take(200).collect::<String>())
                } else {
                    a.into_owned()
                }
            })
            .collect();
        let output = command.output().expect("the lore binary runs");
        let run = Run {
            args,
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        };
        assert!(
            !run.stderr.contains("panicked"),
            "lore panicked: {}",
            run.describe()
        );
        run
    }

    /// A short description for assertion messages.
    pub fn describe(&self) -> String {
        let clip = |s: &str| {
            if s.len() > 4000 {
                let mut end = 4000;
                while !s.is_char_boundary(end) {
                    end -= 1;
                }
                format!("{}… ({} bytes)", &s[..end], s.len())
            } else {
                s.to_string()
            }
        };
        format!(
            "lore {:?}\nexit code: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.args,
            self.code,
            clip(&self.stdout),
            clip(&self.stderr)
        )
    }

    /// Asserts exit code 0.
    pub fn success(self) -> Run {
        assert_eq!(self.code, 0, "expected success: {}", self.describe());
        self
    }

    /// Asserts the given exit code.
    pub fn code(self, code: i32) -> Run {
        assert_eq!(
            self.code,
            code,
            "expected exit code {code}: {}",
            self.describe()
        );
        self
    }

    /// Parses stdout as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", self.describe()))
    }
}

/// One test's private workspace: a temp folder with a database path inside it.
pub struct Lore {
    pub dir: tempfile::TempDir,
    pub db: PathBuf,
}

impl Lore {
    pub fn new() -> Lore {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("lore.db");
        Lore { dir, db }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn command(&self) -> Command {
        lore_command(self.dir.path(), &self.db)
    }

    /// Runs `lore --db <db> ARGS`.
    pub fn run(&self, args: &[&str]) -> Run {
        let mut command = self.command();
        command.args(args);
        Run::from_command(command)
    }

    /// Runs `lore --db DB ARGS` on another database file.
    pub fn run_db(&self, db: &Path, args: &[&str]) -> Run {
        let mut command = lore_command(self.dir.path(), db);
        command.args(args);
        Run::from_command(command)
    }

    /// Runs `lore --db <db> --owner OWNER ARGS`.
    pub fn run_as(&self, owner: &str, args: &[&str]) -> Run {
        let mut command = self.command();
        command.arg("--owner").arg(owner).args(args);
        Run::from_command(command)
    }

    /// Runs `lore --db <db> ARGS --json`, asserts success and parses stdout.
    pub fn json(&self, args: &[&str]) -> Value {
        let mut all: Vec<&str> = args.to_vec();
        all.push("--json");
        self.run(&all).success().json()
    }

    /// As [`Lore::json`] for another owner.
    pub fn json_as(&self, owner: &str, args: &[&str]) -> Value {
        let mut all: Vec<&str> = args.to_vec();
        all.push("--json");
        self.run_as(owner, &all).success().json()
    }

    /// Ingests the example meetings and returns the `--json` report.
    pub fn ingest_examples(&self) -> Value {
        let examples = examples_dir();
        self.json(&["ingest", examples.to_str().expect("utf-8 path")])
    }

    /// Writes `value` as a bundle file in the temp folder and returns its path as a string.
    pub fn write_json(&self, name: &str, value: &Value) -> String {
        let path = self.dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create folder");
        }
        std::fs::write(&path, serde_json::to_vec_pretty(value).expect("serialize"))
            .expect("write bundle");
        path.to_str().expect("utf-8 path").to_string()
    }

    /// Writes raw bytes into the temp folder and returns the path as a string.
    pub fn write_bytes(&self, name: &str, bytes: &[u8]) -> String {
        let path = self.dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create folder");
        }
        std::fs::write(&path, bytes).expect("write file");
        path.to_str().expect("utf-8 path").to_string()
    }
}

/// True for `YYYY-MM-DDTHH:MM:SS.mmmZ` (RFC 3339, UTC, millisecond precision).
pub fn is_rfc3339_millis_z(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.len() != 24 {
        return false;
    }
    bytes.iter().enumerate().all(|(i, &b)| match i {
        4 | 7 => b == b'-',
        10 => b == b'T',
        13 | 16 => b == b':',
        19 => b == b'.',
        23 => b == b'Z',
        _ => b.is_ascii_digit(),
    })
}

/// A small deterministic pseudo-random byte generator (xorshift64*), so no extra crate is needed.
pub fn pseudo_random_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed | 1;
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let word = state.wrapping_mul(0x2545_F491_4F6C_DD1D);
        out.extend_from_slice(&word.to_le_bytes());
    }
    out.truncate(len);
    out
}
