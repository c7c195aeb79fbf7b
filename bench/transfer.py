#!/usr/bin/env python3
"""Zone transfer to a real secondary: swap -> Knot serving the new serial (NOTIFY, then IXFR), and the
client-side time of a full AXFR and of a one-name IXFR, for 100 and 100,000 names.

Usage: bench/transfer.py [runs]   (default 5; release build; needs knotd and kdig; loopback only)

Every process is started here, in its own temp dir and ports, and stopped by PID at the end.
"""
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target/release/pigsty-dns")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
        u.bind(("127.0.0.1", 0))
        return u.getsockname()[1]


def records(n, gen):
    per = max(1, -(-n // 240))
    out = ["all:\n  hosts: {10.10.10.254: {nodename: meta}}\n  vars:\n    vm_hosts:\n"]
    made = 0
    for a in range(10, 250):
        if made >= n:
            break
        names = [f"h{i}" for i in range(made, min(made + per, n))]
        made += len(names)
        out.append(f"      - {{address: 10.10.10.{a}, names: [{', '.join(names)}]}}\n")
    out.append(f"      - {{address: 10.10.10.251, names: [moving-{gen}]}}\n")
    return "".join(out)


def serial(port):
    r = subprocess.run(["kdig", "+short", "+retry=0", "+time=1", "-p", str(port), "@127.0.0.1",
                        "pigsty.test", "SOA"], capture_output=True, text=True)
    f = r.stdout.split()
    return int(f[2]) if len(f) >= 3 else None


def load(yml, state):
    r = subprocess.run([BIN, "load", yml, "--state-dir", state], capture_output=True, text=True)
    assert r.returncode == 0, f"load: {r.stdout}{r.stderr}"


def timed(cmd):
    t = time.monotonic()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.monotonic() - t


def bench(n, work):
    state = os.path.join(work, "state")
    os.mkdir(state, 0o700)
    yml = os.path.join(work, "names.yml")
    gen = 1
    open(yml, "w").write(records(n, gen))
    load(yml, state)
    pport, kport = free_port(), free_port()
    kdir = os.path.join(work, "knot")
    os.makedirs(os.path.join(kdir, "storage"))
    conf = os.path.join(kdir, "knot.conf")
    open(conf, "w").write(
        f"server:\n    rundir: \"{kdir}\"\n    listen: 127.0.0.1@{kport}\n"
        f"database:\n    storage: \"{kdir}/storage\"\n"
        f"control:\n    listen: \"{kdir}/knot.sock\"\n"
        f"log:\n  - target: stderr\n    any: info\n"
        f"remote:\n  - id: pigsty\n    address: 127.0.0.1@{pport}\n"
        f"acl:\n  - id: notify\n    address: 127.0.0.1\n    action: notify\n"
        f"template:\n  - id: default\n    storage: \"{kdir}\"\n    zonefile-sync: -1\n    zonefile-load: none\n"
        f"    journal-content: changes\n    master: pigsty\n    acl: notify\n"
        f"zone:\n  - domain: pigsty.test\n    file: \"{kdir}/z\"\n")
    klog = open(os.path.join(kdir, "log"), "w")
    knot = subprocess.Popen(["timeout", "600", "knotd", "-c", conf], stdout=klog, stderr=klog,
                            start_new_session=True)
    plog = open(os.path.join(work, "pigsty.log"), "w")
    pig = subprocess.Popen(["timeout", "600", BIN, "serve", "--listen", f"127.0.0.1:{pport}",
                            "--state-dir", state, "--allow-transfer", "127.0.0.1",
                            "--notify", f"127.0.0.1:{kport}"], stdout=plog, stderr=plog,
                           start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while serial(kport) != 1:
            assert time.monotonic() < deadline, "knot never got serial 1"
            time.sleep(0.05)
        swaps, axfr, ixfr = [], [], []
        for _ in range(RUNS):
            gen += 1
            open(yml, "w").write(records(n, gen))
            load(yml, state)
            t = time.monotonic()
            while serial(pport) != gen:
                time.sleep(0.005)
            # From the moment pigsty-dns serves the new serial to Knot serving it.
            while serial(kport) != gen:
                assert time.monotonic() - t < 60, "knot stuck"
                time.sleep(0.005)
            swaps.append(time.monotonic() - t)
            axfr.append(timed(["kdig", "-p", str(pport), "@127.0.0.1", "pigsty.test", "AXFR"]))
            ixfr.append(timed(["kdig", "-p", str(pport), "@127.0.0.1", "pigsty.test", f"IXFR={gen - 1}"]))
        return statistics.median(swaps), statistics.median(axfr), statistics.median(ixfr)
    finally:
        for p in (pig, knot):
            os.killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def main():
    assert os.path.exists(BIN), "cargo build --release first"
    print(f"{RUNS} swaps each; medians; kdig timings include kdig's own start-up")
    print("| names | swap -> Knot on the new serial (NOTIFY + IXFR) | kdig AXFR | kdig IXFR (one swap) |")
    print("|---|---|---|---|")
    # The served-name cap is 100,000: 99,998 + meta + the moving name.
    for n in (98, 99_998):
        work = tempfile.mkdtemp(prefix="pigsty-xfr-bench-")
        try:
            s, a, i = bench(n, work)
            print(f"| {n + 2:,} | {s * 1000:.0f} ms | {a * 1000:.0f} ms | {i * 1000:.0f} ms |")
        finally:
            shutil.rmtree(work, ignore_errors=True)


main()
