//! `pigsty-dns status`, text and `--json`, byte for byte against tests/golden/status/ (`UPDATE_GOLDEN=1`
//! rewrites them): a running server of the README's sample (zone and reverse zone probed), then the
//! same state dir after the server stopped. What differs from run to run is replaced by placeholders:
//! the temporary state dir, the repository, the server's port, and — on the lines that carry them —
//! the pid, times, uptime and answer counters (their digits become `N`), and the digest in the
//! generation's file name.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::*;

/// Keys whose values vary between runs: their digits are scrubbed.
const VOLATILE_KEYS: &[&str] = &[
    "pid",
    "started",
    "started_unix",
    "updated",
    "loaded_at",
    "noerror",
    "nxdomain",
    "refused",
    "formerr",
    "notimp",
    "servfail",
    "badvers",
    "other",
    "dropped",
    "truncated",
    "tcp_accepted",
    "tcp_evicted",
    "tcp_refused",
];
/// Text lines (by their start) that carry the same values.
const VOLATILE_LINES: &[&str] = &["status file (", "  listen ", "  loaded ", "  answers: "];

fn scrub_digits(s: &str) -> String {
    let mut out = String::new();
    let mut in_digits = false;
    for c in s.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('N');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

fn norm(s: &str, state: &Path, port: u16) -> String {
    let s = s
        .replace(&state.display().to_string(), "<state>")
        .replace(env!("CARGO_MANIFEST_DIR"), "<repo>")
        .replace(&format!(":{port}"), ":<port>");
    let mut out = String::new();
    for line in s.split_inclusive('\n') {
        let t = line.trim_start();
        let volatile = VOLATILE_KEYS
            .iter()
            .any(|k| t.starts_with(&format!("\"{k}\": ")))
            || VOLATILE_LINES.iter().any(|p| line.starts_with(p));
        out.push_str(&if volatile {
            scrub_digits(line)
        } else {
            generation_hash(line)
        });
    }
    out
}

/// A generation's file name ends in a digest of its content, load time included: `<hash>` then.
fn generation_hash(line: &str) -> String {
    const AT: &str = "/generations/gen-";
    let Some(i) = line.find(AT) else {
        return line.to_string();
    };
    let name = &line[i + AT.len()..];
    match (name.find('-'), name.find(".json")) {
        (Some(dash), Some(end)) if dash < end => {
            format!("{}{AT}{}-<hash>{}", &line[..i], &name[..dash], &name[end..])
        }
        _ => line.to_string(),
    }
}

fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/status")
        .join(name);
    if std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()));
    assert_eq!(actual, want, "{name} differs from its golden file");
}

fn status_json(state: &Path) -> Option<serde_json::Value> {
    serde_json::from_slice(&std::fs::read(state.join("status.json")).ok()?).ok()
}

/// `serve` of the sample on a free port, until its status file says it runs; killed by PID on drop.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        stop(&mut self.0, Duration::ZERO, false);
    }
}

fn start(state: &Path) -> (Server, u16) {
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/zones/pigsty.test.yml");
    let child = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--records", sample])
        .arg("--state-dir")
        .arg(state)
        .env_remove("PIGSTY_DNS_LISTEN")
        .env_remove("PIGSTY_DNS_STATE_DIR")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn serve");
    let server = Server(child);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(st) =
            status_json(state).filter(|st| st["pid"] == server.0.id() && st["state"] == "running")
        {
            let addr: std::net::SocketAddr = st["listen"][0].as_str().unwrap().parse().unwrap();
            return (server, addr.port());
        }
        assert!(Instant::now() < deadline, "serve did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn both(name: &str, state: &Path, port: u16, code: i32) {
    let st = state.to_str().unwrap();
    let text = run(&["status", "--state-dir", st]);
    assert_eq!(text.code, code, "{}{}", text.stdout, text.stderr);
    golden(&format!("{name}.txt"), &norm(&text.stdout, state, port));
    let json = run(&["status", "--json", "--state-dir", st]);
    assert_eq!(json.code, code, "{}{}", json.stdout, json.stderr);
    golden(&format!("{name}.json"), &norm(&json.stdout, state, port));
}

#[test]
fn status_golden_running_then_stopped() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let (mut server, port) = start(&state);
    both("status-running", &state, port, 0);
    // SIGTERM: the server drains and leaves a status file that says it stopped.
    stop(&mut server.0, Duration::from_secs(10), false);
    both("status-stopped", &state, port, 1);
}
