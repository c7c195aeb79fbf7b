//! Slow transfer readers (issue 24, risk 9): clients that ask for the whole zone and never read pin at
//! most a bounded amount of kernel memory — transfers run at most 32 at once, each socket's send
//! buffer is capped — measured in the kernel's own send queues (`/proc/net/tcp`).

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use hickory_proto::rr::RecordType;

use crate::transfer_clients::{load_text, request, socket_with, start, state_dir, yaml};

/// The bytes queued for sending on every socket of local port `port` (IPv4, loopback).
fn send_queued(port: u16) -> u64 {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
    table
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let local_port = u16::from_str_radix(f.get(1)?.rsplit(':').next()?, 16).ok()?;
            let tx = u64::from_str_radix(f.get(4)?.split(':').next()?, 16).ok()?;
            (local_port == port).then_some(tx)
        })
        .sum()
}

#[test]
fn slow_transfer_readers_pin_bounded_kernel_memory() {
    const STALLED: usize = 64;
    let tmp = tempfile::tempdir().unwrap();
    let (dir, state) = (tmp.path(), state_dir(tmp.path()));
    load_text(dir, &state, &yaml(20_000, ""));
    let server = start(
        dir,
        &state,
        &["--allow-transfer", "127.0.0.1", "--tcp-idle-timeout", "20"],
    );
    let q = request(94, "pigsty.test.", RecordType::AXFR, None);
    let mut framed = (q.len() as u16).to_be_bytes().to_vec();
    framed.extend_from_slice(&q);
    let _stalled: Vec<TcpStream> = (0..STALLED)
        .map(|_| {
            let mut s = socket_with("127.0.0.1", server.addr, Some(4096)).unwrap();
            s.write_all(&framed).unwrap();
            s
        })
        .collect();
    // The queues fill within moments; take the peak over 3 s.
    let started = Instant::now();
    let mut peak = 0;
    while started.elapsed() < Duration::from_secs(3) {
        peak = peak.max(send_queued(server.addr.port()));
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!(
        "slow readers: {STALLED} stalled AXFRs of 20,000 names queue at most {peak} bytes in the kernel"
    );
    // 32 transfers × (2 × 64 KiB + a message) is under 5 MiB; unbounded, 10.9 MB was measured here.
    assert!(peak < 5 << 20, "{peak} bytes queued for {STALLED} readers");
    assert!(peak > 0, "nothing queued: the measurement saw no transfer");
}
