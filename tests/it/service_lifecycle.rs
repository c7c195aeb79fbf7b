//! The daemon's side of running as a service, with the real binary: READY=1 over NOTIFY_SOCKET only
//! once the sockets are bound and the generation is loaded (and never after a bind failure), STOPPING=1
//! on SIGTERM, the last good generation after `kill -9`, a taken port failing fast, a stale lock file
//! not blocking a start. Every server started here is stopped by PID (a guard does it even on panic),
//! and every wait is bounded.

use std::net::{SocketAddr, UdpSocket};
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pigsty_dns::dns::name::Zone;
use pigsty_dns::dns::probe;
use pigsty_dns::dns::transport::Transport;

const BIN: &str = env!("CARGO_BIN_EXE_pigsty-dns");
const WAIT: Duration = Duration::from_secs(10);

/// A server we started; stopped (TERM, then KILL) by its PID when dropped.
struct Server {
    child: Option<Child>,
}

impl Server {
    fn pid(&self) -> i32 {
        self.child.as_ref().unwrap().id() as i32
    }

    fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on the PID of our own child, which has not been reaped yet.
        unsafe { libc::kill(self.pid(), sig) };
    }

    /// Waits (bounded) for the exit code; None on timeout.
    fn wait(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        let child = self.child.as_mut()?;
        while Instant::now() < deadline {
            if let Some(s) = child.try_wait().unwrap() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    fn stderr(&mut self) -> String {
        use std::io::Read;
        let mut s = String::new();
        if let Some(mut e) = self.child.as_mut().and_then(|c| c.stderr.take()) {
            let _ = e.read_to_string(&mut s);
        }
        s
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            crate::util::stop(&mut c, Duration::from_secs(3), false);
        }
    }
}

fn serve(state: &Path, listen: &str, notify: Option<&Path>, extra: &[&str]) -> Server {
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--listen", listen, "--state-dir"])
        .arg(state)
        .args(extra)
        .env_remove("PIGSTY_DNS_LISTEN")
        .env("PIGSTY_DNS_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    match notify {
        Some(p) => cmd.env("NOTIFY_SOCKET", p),
        None => cmd.env_remove("NOTIFY_SOCKET"),
    };
    Server {
        child: Some(cmd.spawn().unwrap()),
    }
}

fn notify_socket(dir: &Path) -> (UnixDatagram, PathBuf) {
    let path = dir.join("notify.sock");
    let sock = UnixDatagram::bind(&path).unwrap();
    (sock, path)
}

fn recv(sock: &UnixDatagram, limit: Duration) -> Option<String> {
    sock.set_read_timeout(Some(limit)).unwrap();
    let mut buf = [0u8; 4096];
    match sock.recv(&mut buf) {
        Ok(n) => Some(String::from_utf8_lossy(&buf[..n]).into_owned()),
        Err(_) => None,
    }
}

fn records(dir: &Path, name: &str, host: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(
        &p,
        format!("all:\n  hosts:\n    10.10.10.10: {{nodename: {host}}}\n"),
    )
    .unwrap();
    p
}

fn bound_addr(state: &Path) -> SocketAddr {
    let text = std::fs::read_to_string(state.join("status.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["listen"][0].as_str().unwrap().parse().unwrap()
}

fn soa_serial(addr: SocketAddr) -> Result<u32, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let zone = Zone::parse("pigsty.test").unwrap();
    rt.block_on(probe::soa(
        addr,
        Transport::Udp,
        &zone,
        Duration::from_millis(800),
    ))
    .map(|a| a.serial)
    .map_err(|e| e.to_string())
}

/// Waits (bounded) until the server answers with at least `serial`.
fn wait_serial(addr: SocketAddr, serial: u32) -> u32 {
    let deadline = Instant::now() + WAIT;
    let mut last = Err(String::new());
    while Instant::now() < deadline {
        last = soa_serial(addr);
        if matches!(last, Ok(s) if s >= serial) {
            return serial;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{addr} never served serial {serial}: {last:?}");
}

#[test]
fn ready_comes_after_bind_and_load_and_stopping_on_sigterm() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let (sock, path) = notify_socket(t.path());
    let file = records(t.path(), "h.yml", "meta");
    let mut srv = serve(
        &state,
        "127.0.0.1:0",
        Some(&path),
        &["--records", file.to_str().unwrap()],
    );
    let ready = recv(&sock, WAIT).expect("READY=1 within 10 s");
    assert!(ready.starts_with("READY=1\n"), "{ready:?}");
    assert!(
        ready.contains("STATUS=serving pigsty.test, pigsty serial 1"),
        "{ready:?}"
    );
    // At READY the status file names the bound port and the server already serves the loaded
    // generation: no wait, one probe.
    let addr = bound_addr(&state);
    assert_ne!(addr.port(), 0);
    assert_eq!(soa_serial(addr), Ok(1));
    srv.signal(libc::SIGTERM);
    let stopping = recv(&sock, WAIT).expect("STOPPING=1 after SIGTERM");
    assert!(stopping.starts_with("STOPPING=1"), "{stopping:?}");
    let status = srv.wait(WAIT).expect("exits after SIGTERM");
    assert_eq!(status.code(), Some(0));
    assert!(
        recv(&sock, Duration::from_millis(200)).is_none(),
        "nothing after STOPPING"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn ready_also_for_an_empty_state_dir_and_an_abstract_socket() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let name = format!("pigsty-dns-lifecycle-{}", std::process::id());
    use std::os::linux::net::SocketAddrExt;
    let a = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let sock = UnixDatagram::bind_addr(&a).unwrap();
    let _srv = serve(
        &state,
        "127.0.0.1:0",
        Some(Path::new(&format!("@{name}"))),
        &[],
    );
    let ready = recv(&sock, WAIT).expect("READY=1");
    assert!(ready.contains("serial 0"), "{ready:?}");
    assert_eq!(soa_serial(bound_addr(&state)), Ok(0));
}

#[test]
fn a_taken_port_fails_fast_without_ready() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let (sock, path) = notify_socket(t.path());
    // The test holds the UDP port; the server must not share it (no SO_REUSEADDR/SO_REUSEPORT on UDP).
    let holder = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = holder.local_addr().unwrap().port();
    let started = Instant::now();
    let mut srv = serve(&state, &format!("127.0.0.1:{port}"), Some(&path), &[]);
    let status = srv
        .wait(Duration::from_secs(5))
        .expect("exits quickly, no retry loop");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(status.code(), Some(6), "resource error (port in use)");
    let err = srv.stderr();
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("error:") || l.starts_with("next:"))
        .collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].contains(&format!("127.0.0.1:{port}")) && lines[0].contains("in use"),
        "{err}"
    );
    assert!(lines[1].starts_with("next:"), "{err}");
    assert!(
        recv(&sock, Duration::from_millis(300)).is_none(),
        "no READY after a bind failure"
    );
    drop(holder);
}

#[test]
fn after_kill_9_a_restart_serves_the_last_good_generation() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let (sock, path) = notify_socket(t.path());
    let first = records(t.path(), "a.yml", "meta");
    let mut srv = serve(
        &state,
        "127.0.0.1:0",
        Some(&path),
        &["--records", first.to_str().unwrap()],
    );
    recv(&sock, WAIT).expect("READY");
    let addr = bound_addr(&state);
    let second = records(t.path(), "b.yml", "other");
    let out = Command::new(BIN)
        .args(["load", second.to_str().unwrap(), "--state-dir"])
        .arg(&state)
        .args(["--server", &addr.to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    wait_serial(addr, 2);
    srv.signal(libc::SIGKILL);
    assert!(srv.wait(WAIT).is_some());
    // A corrupt file with a higher serial must not be what comes back.
    let gens = state.join("generations");
    let bad = gens.join(pigsty_dns::store::file_name(3, &"0".repeat(64)));
    std::fs::write(&bad, "not a generation").unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&bad, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    // The killed server left its lock file and a "running" status with a dead pid behind.
    assert!(state.join("serve.lock").exists());
    let (sock2, path2) = {
        let p = t.path().join("notify2.sock");
        (UnixDatagram::bind(&p).unwrap(), p)
    };
    let _srv2 = serve(&state, "127.0.0.1:0", Some(&path2), &[]);
    let ready = recv(&sock2, WAIT).expect("READY after restart");
    assert!(ready.contains("serial 2"), "{ready:?}");
    assert_eq!(soa_serial(bound_addr(&state)), Ok(2));
}

#[test]
fn a_stale_lock_file_does_not_block_a_start() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let file = records(t.path(), "h.yml", "meta");
    let out = Command::new(BIN)
        .args(["load", file.to_str().unwrap(), "--state-dir"])
        .arg(&state)
        .output()
        .unwrap();
    assert!(out.status.success());
    // A lock file naming a process that is long gone, with no flock held on it.
    std::fs::write(state.join("serve.lock"), "4194303\n").unwrap();
    let (sock, path) = notify_socket(t.path());
    let _srv = serve(&state, "127.0.0.1:0", Some(&path), &[]);
    let ready = recv(&sock, WAIT).expect("READY despite the stale lock file");
    assert!(ready.contains("serial 1"), "{ready:?}");
    assert_eq!(soa_serial(bound_addr(&state)), Ok(1));
    // While it runs the lock is real: a second server on the same state dir is refused at once.
    let mut second = serve(&state, "127.0.0.1:0", None, &[]);
    let status = second
        .wait(Duration::from_secs(5))
        .expect("refused quickly");
    assert_eq!(status.code(), Some(6));
    assert!(second.stderr().contains("already serving"));
}
