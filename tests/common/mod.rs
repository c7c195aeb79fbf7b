//! Shared helpers: run the real binary on real files.
#![allow(dead_code, unused_imports)]

mod dns;
pub use dns::*;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_pigsty-dns");

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The `error:` line, asserting the two-line error form.
    pub fn error_line(&self) -> &str {
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(
            lines.len(),
            2,
            "want exactly error: and next: lines, got {:?}",
            self.stderr
        );
        assert!(lines[0].starts_with("error: "), "{:?}", self.stderr);
        assert!(lines[1].starts_with("next: "), "{:?}", self.stderr);
        lines[0]
    }
}

fn finish(out: Output) -> Run {
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs pigsty-dns with a clean environment for the variables it reads.
pub fn run(args: &[&str]) -> Run {
    let out = Command::new(BIN)
        .args(args)
        .env_remove("PIGSTY_DNS_STATE_DIR")
        .env_remove("PIGSTY_DNS_ZONE")
        .env_remove("PIGSTY_DNS_LISTEN")
        .output()
        .expect("run pigsty-dns");
    finish(out)
}

pub fn run_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut c = Command::new(BIN);
    c.args(args)
        .env_remove("PIGSTY_DNS_STATE_DIR")
        .env_remove("PIGSTY_DNS_ZONE")
        .env_remove("PIGSTY_DNS_LISTEN");
    for (k, v) in env {
        c.env(k, v);
    }
    finish(c.output().expect("run pigsty-dns"))
}

pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write input");
    p
}

/// `check` on a YAML text; returns the run.
pub fn check_text(text: &str) -> Run {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = write(dir.path(), "host-names.yml", text);
    run(&["check", p.to_str().expect("utf-8 path")])
}

/// `check --json` on a YAML text that must be valid; returns served name → address pairs.
pub fn served(text: &str) -> Vec<(String, String)> {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = write(dir.path(), "host-names.yml", text);
    let r = run(&["check", "--json", p.to_str().expect("utf-8 path")]);
    assert_eq!(r.code, 0, "check failed: {}{}", r.stdout, r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    v["served"]
        .as_array()
        .expect("served")
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["address"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Asserts `check` refuses the text with exit 8 and an error line containing every needle.
pub fn refused(text: &str, needles: &[&str]) -> Run {
    let r = check_text(text);
    assert_eq!(
        r.code, 8,
        "want exit 8 for {text:?}, got {}: {}{}",
        r.code, r.stdout, r.stderr
    );
    let line = r.error_line().to_string();
    for n in needles {
        assert!(line.contains(n), "error line {line:?} lacks {n:?}");
    }
    assert!(
        r.stdout.is_empty(),
        "nothing on stdout on error: {:?}",
        r.stdout
    );
    r
}

pub fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// `load FILE --state-dir STATE [extra...]`.
pub fn load(state: &Path, file: &Path, extra: &[&str]) -> Run {
    let mut args = vec![
        "load",
        file.to_str().expect("utf-8 path"),
        "--state-dir",
        state.to_str().expect("utf-8 path"),
    ];
    args.extend_from_slice(extra);
    run(&args)
}
