#!/usr/bin/env python3
"""The server's memory per TCP connection, measured while the connections are open (issue 24): a fresh
pigsty-dns (1,000 names) per phase, its RSS and PSS before, then with N connections open in each state:

- idle: each connection has sent one query and read its answer (so its buffers exist), then waits;
- pipelining, not reading: each sends P queries at once with a 4 KiB receive window and reads nothing,
  so the server's writes to it stall with answers pending (the most a pipelining connection holds);
- pipelining, reading: `dnsperf -m tcp -c N -T N/250 -q 10*N` (ten queries in flight on each connection;
  one thread per 250, as dnsperf opens at most 256 sockets a thread), sampled
  every 0.25 s during the run (the median sample and the largest).

Per connection = (memory during - memory before) / N. The kernel's socket buffers are not in the process's
memory; /proc/net/sockstat's TCP `mem` (pages) is recorded beside it. Phases are interleaved across
rounds; medians. `--tcp-idle-timeout 60` so that no connection is closed while being measured (the
timeout does not change what a connection holds).

Run through bench/tcp_memory.sh (a private network namespace, the release binary); prints a Markdown table.
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

PHASES = ["idle", "pipelining, not reading", "pipelining, reading (dnsperf)"]
PORT = 15450


def query(name, qid):
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    q += b"".join(bytes([len(p)]) + p.encode() for p in name.rstrip(".").split(".")) + b"\0"
    q += struct.pack(">HH", 1, 1)
    return struct.pack(">H", len(q)) + q


def read_answer(s):
    data = b""
    while len(data) < 2 or len(data) < 2 + struct.unpack(">H", data[:2])[0]:
        chunk = s.recv(65535)
        if not chunk:
            raise RuntimeError("closed before the answer")
        data += chunk


def tcp_mem_pages():
    for line in open("/proc/net/sockstat"):
        if line.startswith("TCP:"):
            f = line.split()
            return int(f[f.index("mem") + 1])
    return None


def open_fds(srv):
    try:
        return len(os.listdir(f"/proc/{srv.main_pid()}/fd"))
    except (OSError, TypeError):
        return None


def memory(srv):
    rss_main, _, pss = srv.rss_kib()
    return {"rss_kib": rss_main, "pss_kib": pss, "tcp_mem_pages": tcp_mem_pages(), "fds": open_fds(srv)}


def settle(srv, limit=10.0):
    """Waits until the server's RSS stops moving (three samples 0.2 s apart within 64 KiB)."""
    last, steady, end = None, 0, time.monotonic() + limit
    while time.monotonic() < end and steady < 3:
        time.sleep(0.2)
        now = srv.rss_kib()[0]
        steady = steady + 1 if last is not None and abs(now - last) <= 64 else 0
        last = now


def idle(srv, data, n, _p):
    conns = []
    name = data["probe"][0]
    for i in range(n):
        s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
        s.sendall(query(name, i & 0xFFFF))
        read_answer(s)
        conns.append(s)
    settle(srv)
    m = memory(srv)
    for s in conns:
        s.close()
    return m


def pipelining_not_reading(srv, data, n, p):
    conns = []
    burst = b"".join(query(data["names"][k % len(data["names"])][0] + "." + bench.ZONE, k) for k in range(p))
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(10)
        s.connect(("127.0.0.1", PORT))
        s.sendall(burst)
        conns.append(s)
    settle(srv)
    m = memory(srv)
    for s in conns:
        s.close()
    return m


def pipelining_reading(srv, data, n, _p, seconds=8):
    cmd = ["dnsperf", "-s", "127.0.0.1", "-p", str(PORT), "-d", data["queries"], "-l", str(seconds),
           "-m", "tcp", "-c", str(n), "-T", str(max(1, -(-n // 250))), "-q", str(10 * n), "-t", "5"]
    perf = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            preexec_fn=lambda: os.sched_setaffinity(0, {bench.CLIENT_CPU}))
    samples = []
    time.sleep(1.0)  # connections opened and queries flowing
    while perf.poll() is None and len(samples) < 4 * (seconds - 2):
        samples.append(memory(srv))
        time.sleep(0.25)
    out = perf.communicate()[0].decode(errors="replace")
    if not samples:
        raise RuntimeError(f"dnsperf ended before a sample: {out[-400:]}")
    by = lambda k: [s[k] for s in samples if s[k] is not None]  # noqa: E731
    m = {k: statistics.median(by(k)) for k in ("rss_kib", "pss_kib", "tcp_mem_pages", "fds")}
    m.update({k + "_max": max(by(k)) for k in ("rss_kib", "pss_kib")})
    m["dnsperf"] = " ".join(cmd)
    m["dnsperf_tail"] = out[out.find("Queries sent"):][:300]
    return m


RUN = {PHASES[0]: idle, PHASES[1]: pipelining_not_reading, PHASES[2]: pipelining_reading}


def one(env, data, phase, n, p, work, tag):
    srv = bench.Server([env.pigsty, "serve", "--listen", f"127.0.0.1:{PORT}", "--state-dir", data["state"],
                        "--tcp-idle-timeout", "60"], env=dict(os.environ, RUST_LOG="warn"))
    srv.start(os.path.join(work, f"{tag}.log"))
    try:
        q, a = data["probe"]
        bench.wait_ready(srv, PORT, q, a)
        settle(srv)
        before = memory(srv)
        during = RUN[phase](srv, data, n, p)
    finally:
        srv.stop()
    # Per connection open in the server (its descriptors beyond those it had before), not per client
    # asked for: dnsperf may not hold all of its connections at once.
    n = max(1, during["fds"] - before["fds"]) if during.get("fds") and before.get("fds") else n
    per = lambda k: (during[k] - before[k]) / n  # noqa: E731
    rec = {"phase": phase, "before": before, "during": during,
           "rss_per_conn_kib": per("rss_kib"), "pss_per_conn_kib": per("pss_kib"),
           "kernel_per_conn_kib": (during["tcp_mem_pages"] - before["tcp_mem_pages"]) * 4 / n,
           "connections_open": during["fds"] - before["fds"]}
    if "rss_kib_max" in during:
        rec["rss_max_per_conn_kib"] = (during["rss_kib_max"] - before["rss_kib"]) / n
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pigsty", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--connections", type=int, default=1000)
    ap.add_argument("--pipelined", type=int, default=1000, help="queries each not-reading client sends")
    ap.add_argument("--out", default=os.path.join(bench.HERE, "results-tcp-memory.json"))
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="pigsty-bench-tcpmem-")
    env = bench.Env(argparse.Namespace(pigsty=args.pigsty, hickory=None, echo=None), work)
    runs = []
    try:
        data = bench.prepare(env, 1000)
        for rnd in range(1, args.rounds + 1):
            order = PHASES[(rnd - 1) % len(PHASES):] + PHASES[:(rnd - 1) % len(PHASES)]
            for i, phase in enumerate(order):
                try:
                    rec = one(env, data, phase, args.connections, args.pipelined, work, f"{rnd}-{i}")
                except Exception as e:  # recorded; the others still run
                    rec = {"phase": phase, "error": str(e)}
                rec["round"] = rnd
                runs.append(rec)
                bench.log(f"round {rnd} {phase}: RSS {rec.get('rss_per_conn_kib')} PSS "
                          f"{rec.get('pss_per_conn_kib')} kernel {rec.get('kernel_per_conn_kib')} KiB/conn "
                          f"{rec.get('error', '')}")
    finally:
        with open(args.out, "w") as f:
            json.dump({"args": vars(args), "runs": runs}, f, indent=1)
        shutil.rmtree(work, ignore_errors=True)
    n = args.connections
    print(f"| {n:,} connections | server RSS before → during (median, KiB) | RSS per connection (KiB; "
          "each round) | PSS per connection (KiB) | kernel TCP memory per connection (KiB) | server sockets open "
          "(median) |")
    print("|---|---:|---:|---:|---:|---:|")
    for phase in PHASES:
        rs = [r for r in runs if r["phase"] == phase and "error" not in r]
        if not rs:
            print(f"| {phase} | error: {[r.get('error') for r in runs if r['phase'] == phase][:1]} | | | |")
            continue
        med = lambda f: statistics.median(f(r) for r in rs)  # noqa: E731
        each = ", ".join(f"{r['rss_per_conn_kib']:.1f}" for r in rs)
        peak = ""
        if "rss_max_per_conn_kib" in rs[0]:
            peak = f"; largest sample {med(lambda r: r['rss_max_per_conn_kib']):.1f}"
        print(f"| {phase} | {med(lambda r: r['before']['rss_kib']):,.0f} → "
              f"{med(lambda r: r['during']['rss_kib']):,.0f} | {med(lambda r: r['rss_per_conn_kib']):.1f} "
              f"({each}){peak} | {med(lambda r: r['pss_per_conn_kib']):.1f} "
              f"| {med(lambda r: r['kernel_per_conn_kib']):.1f} | {med(lambda r: r['connections_open']):,.0f} |")


if __name__ == "__main__":
    main()
