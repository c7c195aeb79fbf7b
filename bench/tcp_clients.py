#!/usr/bin/env python3
"""1,000 concurrent TCP clients (issue 24, risk 8): `dnsperf -m tcp -c 1000` against pigsty-dns (default
settings, and the previous default cap of 128 for comparison), NSD (its default tcp-count, and 1,100) and
Knot (defaults), 1,000 names, pinned as in bench.py (servers on CPU 0, dnsperf on CPU 1), interleaved rounds.
Records queries sent / completed / lost, qps, and the server's RSS before and after.

Run through bench/tcp_clients.sh (a private network namespace, the release binary); it prints a Markdown table.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

CONFIGS = ["pigsty-dns", "pigsty-dns --tcp-max-connections 128", "nsd", "nsd tcp-count 1100", "knot"]


def server(env, config, data, port):
    if config.startswith("pigsty-dns"):
        extra = config.split()[1:]
        return bench.Server([env.pigsty, "serve", "--listen", f"127.0.0.1:{port}", "--state-dir", data["state"]]
                            + extra, env=dict(os.environ, RUST_LOG="warn"))
    srv = bench.make_server(env, config.split()[0], data, port)
    if config == "nsd tcp-count 1100":
        conf = srv.cmd[-1]
        with open(conf) as f:
            text = f.read()
        with open(conf, "w") as f:
            f.write(text.replace("server:\n", "server:\n  tcp-count: 1100\n", 1))
    return srv


def dnsperf_clients(port, qfile, seconds, clients):
    # dnsperf opens at most 256 sockets a thread and cuts -c to that without a word (2.10's MAX_SOCKETS;
    # later versions warn): one thread per 250 clients, so -c 1000 is 1,000 connections.
    threads = max(1, -(-clients // 250))
    cmd = ["dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d", qfile, "-l", str(seconds), "-m", "tcp",
           "-c", str(clients), "-T", str(threads), "-q", str(clients), "-t", "5"]
    p = subprocess.run(cmd, capture_output=True, text=True,
                       preexec_fn=lambda: os.sched_setaffinity(0, {bench.CLIENT_CPU}))
    out = p.stdout + p.stderr

    def num(pat):
        m = re.search(pat, out)
        return float(m.group(1)) if m else None
    return {"cmd": " ".join(cmd), "sent": num(r"Queries sent:\s+(\d+)"),
            "completed": num(r"Queries completed:\s+(\d+)"), "lost": num(r"Queries lost:\s+(\d+)"),
            "qps": num(r"Queries per second:\s+([\d.]+)"), "tail": out[-600:] if p.returncode else ""}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pigsty", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--clients", type=int, default=1000)
    ap.add_argument("--out", default=os.path.join(bench.HERE, "results-tcp-clients.json"))
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="pigsty-bench-tcp-")
    env = bench.Env(argparse.Namespace(pigsty=args.pigsty, hickory=None, echo=None), work)
    runs = []
    try:
        data = bench.prepare(env, 1000)
        for rnd in range(1, args.rounds + 1):
            order = CONFIGS[(rnd - 1) % len(CONFIGS):] + CONFIGS[:(rnd - 1) % len(CONFIGS)]
            for i, config in enumerate(order):
                port = 15400 + CONFIGS.index(config)
                srv = server(env, config, data, port).start(os.path.join(work, f"{i}.log"))
                rec = {"config": config, "round": rnd}
                try:
                    q, a = data["probe"]
                    bench.wait_ready(srv, port, q, a)
                    time.sleep(0.2)
                    rec["rss_before_kib"] = srv.rss_kib()[2]
                    rec.update(dnsperf_clients(port, data["queries"], args.seconds, args.clients))
                    rec["rss_after_kib"] = srv.rss_kib()[2]
                except Exception as e:  # recorded; the others still run
                    rec["error"] = str(e)
                finally:
                    srv.stop()
                runs.append(rec)
                bench.log(f"round {rnd} {config}: sent {rec.get('sent')}, lost {rec.get('lost')}, "
                          f"{rec.get('qps')} qps, PSS {rec.get('rss_before_kib')} -> {rec.get('rss_after_kib')} KiB")
    finally:
        with open(args.out, "w") as f:
            json.dump({"args": vars(args), "runs": runs}, f, indent=1)
        shutil.rmtree(work, ignore_errors=True)
    print(f"| server (`dnsperf -m tcp -c {args.clients} -T {max(1, -(-args.clients // 250))} -q {args.clients} "
          f"-l {args.seconds}`, 1,000 names) "
          "| queries sent | lost (median; each round) | qps (median) | PSS before → after (median, KiB) |")
    print("|---|---:|---:|---:|---:|")
    for config in CONFIGS:
        rs = [r for r in runs if r["config"] == config and r.get("sent") is not None]
        if not rs:
            print(f"| {config} | error: {[r.get('error') or r.get('tail') for r in runs if r['config'] == config][:1]} | | | |")
            continue
        med = lambda k: statistics.median(r[k] for r in rs)  # noqa: E731
        lost = ", ".join(f"{r['lost']:.0f}" for r in rs)
        print(f"| {config} | {med('sent'):,.0f} | {med('lost'):,.0f} ({lost}) | {med('qps'):,.0f} "
              f"| {med('rss_before_kib'):,.0f} → {med('rss_after_kib'):,.0f} |")


if __name__ == "__main__":
    main()
