#!/usr/bin/env python3
"""Two pigsty-dns binaries on the serving path, interleaved (issue 22: a change that must not move the serving
figures): `serve` start → first correct answer, and UDP server CPU per query against the echo floor measured in
the same round, at 100 and 100,000 names. The order of the binaries alternates per round; medians are printed.
Nothing is written: the caller copies the lines into bench/RESULTS.md.

Uses bench.py's servers, dnsperf runs and pinning (servers on CPU 0, dnsperf on CPU 1). Run it inside a private
network namespace whose only interface is loopback, as bench/run.sh does, under the lab lock:

  flock /tmp/pigsty-lab.lock unshare --net -- bash -c 'ip link set lo up && exec python3 "$@"' x \
      bench/serve_compare.py --a NAME=BIN --b NAME=BIN --echo ECHO_BIN [--rounds 5] [--udp-seconds 4]
"""

import argparse
import os
import statistics
import sys
import tempfile
import shutil
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
import scale  # noqa: E402

SIZES = (100, 100_000)
PORT = 15410


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True, help="NAME=BINARY")
    ap.add_argument("--b", required=True, help="NAME=BINARY")
    ap.add_argument("--echo", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--udp-seconds", type=int, default=4)
    args = ap.parse_args()
    bins = [tuple(x.split("=", 1)) for x in (args.a, args.b)]
    # bench.one_run and bench.prepare read these from the options object: --a runs as bench.py's
    # pigsty-dns, --b as pigsty-dns-alt, each serving the state dir its own `load` wrote.
    args.pigsty, args.pigsty_alt = bins[0][1], bins[1][1]
    args.hickory, args.tcp_seconds, args.lat_seconds = None, 0, 0
    work = tempfile.mkdtemp(prefix="pigsty-serve-compare-")
    env = bench.Env(args, work)
    load_start, started = bench.loadavg(), time.time()
    runs = []  # (name, n, round, ready_s, cpu_us_per_q, qps, lost, error)
    try:
        data = {n: bench.prepare(env, n) for n in SIZES}
        for rnd in range(1, args.rounds + 1):
            order = bins if rnd % 2 else bins[::-1]
            for n in SIZES:
                for name, binary in list(order) + [("echo", None)]:
                    server = "echo" if binary is None else "pigsty-dns" if binary == bins[0][1] else "pigsty-dns-alt"
                    r = bench.one_run(env, server, data[n], PORT, ["udp"], rnd)
                    u = r.get("udp", {})
                    runs.append((name, n, rnd, r.get("ready_s"), u.get("cpu_us_per_q"), u.get("qps"),
                                 u.get("lost"), r.get("error")))
            bench.log(f"round {rnd} done, load {bench.loadavg():.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"- machine: {scale.machine()}")
    print(f"- load average (1 min): {load_start:.2f} at the start, {bench.loadavg():.2f} at the end; "
          f"{time.time() - started:.0f} s; {args.rounds} interleaved rounds, {args.udp_seconds} s dnsperf per UDP run")
    print()
    print("| binary | n | `serve` start → first answer | UDP server CPU µs/q | × echo floor (median of per-round ratios) | qps | lost |")
    print("|---|---|---|---|---|---|---|")
    for n in SIZES:
        floor = {r[2]: r[4] for r in runs if r[0] == "echo" and r[1] == n}
        for name, _ in bins + [("echo", None)]:
            rs = [r for r in runs if r[0] == name and r[1] == n]
            ratios = [r[4] / floor[r[2]] for r in rs if r[4] and floor.get(r[2])]
            ready = med([r[3] for r in rs]) if name != "echo" else None
            cpu, qps, lost = med([r[4] for r in rs]), med([r[5] for r in rs]), sum(r[6] or 0 for r in rs)
            print(f"| {name} | {n} | {'—' if ready is None else f'{ready * 1000:.0f} ms'} | "
                  f"{'n/a' if cpu is None else f'{cpu:.2f}'} | "
                  f"{'—' if name == 'echo' or not ratios else f'{med(ratios):.2f}'} | "
                  f"{'n/a' if qps is None else f'{qps:.0f}'} | {lost:.0f} |")
    errors = [r for r in runs if r[7]]
    for r in errors:
        print(f"- error: {r[0]} n={r[1]} round {r[2]}: {r[7]}")
    print()
    print("Every run (binary, n, round, start ms, µs/q):")
    for r in runs:
        start = "—" if r[3] is None else f"{r[3] * 1000:.0f}"
        cpu = "n/a" if r[4] is None else f"{r[4]:.2f}"
        print(f"  {r[0]} {r[1]} r{r[2]} {start} {cpu}")


if __name__ == "__main__":
    main()
