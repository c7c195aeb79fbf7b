//! Shared helpers: run the real binary on real files.

mod dns;
pub use dns::*;
mod inert;
pub use inert::*;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_pigsty-dns");

/// Stops a child of ours: SIGTERM (to its process group when it leads one, `group`), up to `grace` to
/// exit, then SIGKILL; always reaped, so no test leaves a process behind.
pub fn stop(child: &mut Child, grace: Duration, group: bool) -> Option<ExitStatus> {
    if let Ok(Some(s)) = child.try_wait() {
        return Some(s);
    }
    let pid = child.id() as libc::pid_t;
    // SAFETY: kill(2) on the pid of our own child, not yet reaped.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if let Ok(Some(s)) = child.try_wait() {
            return Some(s);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: as above; `-pid` is the process group our child leads when `group`.
    unsafe { libc::kill(if group { -pid } else { pid }, libc::SIGKILL) };
    child.wait().ok()
}

/// `PIGSTY_DNS_E2E=1`: run the tests that need root or Debian's packages, and fail (never skip) when
/// a prerequisite is missing.
pub fn e2e() -> bool {
    std::env::var("PIGSTY_DNS_E2E").is_ok_and(|v| v == "1")
}

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

pub fn finish(out: Output) -> Run {
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
    check_text_with(text, &[])
}

/// `check FLAGS FILE` on a YAML text, in a directory of its own.
pub fn check_text_with(text: &str, flags: &[&str]) -> Run {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = write(dir.path(), "host-names.yml", text);
    let mut args = vec!["check"];
    args.extend_from_slice(flags);
    args.push(p.to_str().expect("utf-8 path"));
    run(&args)
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
/// `check` of a text refused for several problems at once: exit 8, one `error:`/`next:` pair per
/// problem (nothing else on stderr), the n-th `error:` line holding the n-th of `wants`.
pub fn refused_listing(text: &str, wants: &[&str]) {
    let r = check_text(text);
    assert_eq!(r.code, 8, "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 2 * wants.len(), "{}", r.stderr);
    let errors = r.stderr.lines().filter(|l| l.starts_with("error: "));
    for (l, want) in errors.zip(wants) {
        assert!(l.contains(want), "{l:?} lacks {want:?}");
    }
}

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

/// Every file under `root` (relative paths, sorted): what proves "nothing written" or "nothing left".
pub fn tree(root: &Path) -> Vec<String> {
    let mut v = vec![];
    walk(root, root, &mut v);
    v.sort();
    v
}

fn walk(base: &Path, d: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(d).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(base, &p, out);
        } else {
            out.push(p.strip_prefix(base).unwrap().display().to_string());
        }
    }
}
