//! A flood of file events against `serve --follow` (issue 33 item 4): renames of the followed file in
//! the watched directory and of a stray name in the generations directory, as fast as this process can
//! make them. The server must keep serving the last good serial, and the flood must cost it bounded
//! memory and CPU: passes are coalesced, not one per event. `bench/event_flood.sh` measures 10^6.

use std::net::UdpSocket;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::*;
use pigsty_dns::serve::pass_budget::{PASS_BUDGET, PASS_WINDOW};
use pigsty_dns::serve::reload::{PASS_GAP, RESCAN};

fn soa_serial(port: u16) -> Option<u32> {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut q = hex(b"abcd01000001000000000000");
    q.extend_from_slice(b"\x06pigsty\x04test\x00\x00\x06\x00\x01");
    s.send_to(&q, ("127.0.0.1", port)).unwrap();
    let mut buf = [0u8; 512];
    let n = s.recv(&mut buf).ok()?;
    Some(u32::from_be_bytes(buf[n - 20..n - 16].try_into().unwrap()))
}

fn hex(h: &[u8]) -> Vec<u8> {
    h.chunks(2)
        .map(|c| u8::from_str_radix(std::str::from_utf8(c).unwrap(), 16).unwrap())
        .collect()
}

/// (user + system CPU seconds, peak resident KiB) of a process.
fn usage(pid: u32) -> (f64, u64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let f: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    // SAFETY: sysconf has no preconditions.
    let tck = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let cpu = (f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()) as f64 / tck;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let hwm = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap();
    (cpu, hwm)
}

fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_flood_of_file_events_costs_bounded_cpu_and_memory_and_the_last_good_stays() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let watched = t.path().join("in");
    std::fs::create_dir(&watched).unwrap();
    let followed = watched.join("host-names.yml");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("zones/pigsty.test.yml"),
        &followed,
    )
    .unwrap();
    let port = free_port();
    let mut child = Command::new(BIN)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .arg("--state-dir")
        .arg(&state)
        .arg("--records")
        .arg(&followed)
        .arg("--follow")
        .env_remove("PIGSTY_DNS_LISTEN")
        .env_remove("PIGSTY_DNS_STATE_DIR")
        .env("PIGSTY_DNS_LOG", "pigsty_dns=debug")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(t.path().join("serve.log")).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let before = loop {
        if let Some(s) = soa_serial(port) {
            break s;
        }
        assert!(Instant::now() < deadline, "serve did not answer");
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(500));
    let pid = child.id();
    let (cpu0, _) = usage(pid);
    let aside = watched.join("host-names.yml-aside");
    let stray = [
        state.join("generations/stray-a"),
        state.join("generations/stray-b"),
    ];
    std::fs::write(&stray[0], "").unwrap();
    let t0 = Instant::now();
    const RENAMES: usize = 100_000;
    for _ in 0..RENAMES / 2 {
        std::fs::rename(&followed, &aside).unwrap();
        std::fs::rename(&aside, &followed).unwrap();
    }
    for _ in 0..RENAMES / 2 {
        std::fs::rename(&stray[0], &stray[1]).unwrap();
        std::fs::rename(&stray[1], &stray[0]).unwrap();
    }
    let wall = t0.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_millis(500));
    let (cpu1, hwm) = usage(pid);
    let after = soa_serial(port);
    stop(&mut child, Duration::from_secs(5), false);
    let log = std::fs::read_to_string(t.path().join("serve.log")).unwrap();
    let passes = log.lines().filter(|l| l.contains("reload pass")).count();
    eprintln!(
        "{} renames in {wall:.2} s: {passes} reload passes, server CPU {:.2} s, peak RSS {hwm} KiB",
        RENAMES * 2,
        cpu1 - cpu0,
    );
    assert_eq!(after, Some(before), "the last good serial is still served");
    assert!(hwm < 64 * 1024, "peak RSS {hwm} KiB");
    // The bound is by construction, so this holds on a loaded machine too: once the pass budget is
    // spent, a pass woken by events starts no sooner than PASS_GAP after the last one ended; the
    // budget adds at most PASS_BUDGET per PASS_WINDOW and the periodic rescan one per RESCAN. Before the bound, every burst the watcher reported was a pass of its own (thousands).
    // The CPU this saves is measured in bench/event_flood.sh, not here.
    let span = wall + 1.5; // the flood, the settle time and the start-up wait after the first answer
    let most = (span / PASS_GAP.as_secs_f64()).ceil() as usize
        + (span / RESCAN.as_secs_f64()).ceil() as usize
        + PASS_BUDGET * (span / PASS_WINDOW.as_secs_f64()).ceil() as usize
        + 4;
    assert!(passes >= 1, "no reload pass logged: {log}");
    assert!(
        passes <= most,
        "{passes} reload passes in {span:.2} s (at most {most})"
    );
}
