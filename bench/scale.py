#!/usr/bin/env python3
"""Issue 13's table in one run: time to get a change live, start time, memory across swaps, check/load time,
generation size and UDP CPU per query against the echo floor, with NSD (`nsd-control reload`) and Knot
(`knotc zone-reload`) time-to-new-serial at 100,000 names measured in the same run.

Run through bench/scale.sh (it builds what this needs and runs it in a private network namespace). Only the
CLI is used (`pigsty-dns load/check/export/serve`, DNS queries, /proc), so it works whatever the generation
format. Interleaved rounds (the order of the systems rotates each round), medians, servers pinned to CPU 0 and
clients (dnsperf, `load`, the control tools) to CPU 1, as in bench.py, whose server machinery this reuses.
"""

import argparse
import datetime
import json
import os
import platform
import random
import re
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
from bench import CLIENT_CPU, ZONE, log, loadavg  # noqa: E402

HERE = bench.HERE
BIG, SMALL = 100_000, 10
PORTS = {"pigsty-dns": 15400, "nsd": 15401, "knot": 15402, "echo": 15403}


def pin_client():
    os.sched_setaffinity(0, {CLIENT_CPU})


# ---------------------------------------------------------------------------------------------- probes

def soa_serial(port, timeout=0.05):
    """The serial the server answers for the zone's SOA over UDP, or None."""
    qid = random.randrange(65536)
    q = struct.pack(">HHHHHH", qid, 0, 1, 0, 0, 0)
    q += b"".join(bytes([len(p)]) + p.encode() for p in ZONE.split(".")) + b"\0" + struct.pack(">HH", 6, 1)
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(timeout)
            s.sendto(q, ("127.0.0.1", port))
            while True:
                r, _ = s.recvfrom(65535)
                if len(r) >= 12 and struct.unpack(">H", r[:2])[0] == qid:
                    break
    except OSError:
        return None

    def skip_name(p):
        while True:
            ln = r[p]
            if ln >= 0xC0:
                return p + 2
            if ln == 0:
                return p + 1
            p += 1 + ln
    try:
        qd, an = struct.unpack(">HH", r[4:8])
        pos = 12
        for _ in range(qd):
            pos = skip_name(pos) + 4
        for _ in range(an):
            pos = skip_name(pos)
            typ, _c, _t, rdlen = struct.unpack(">HHIH", r[pos:pos + 10])
            pos += 10
            if typ == 6:
                p = skip_name(skip_name(pos))
                return struct.unpack(">I", r[p:p + 4])[0]
            pos += rdlen
    except (IndexError, struct.error):
        return None
    return None


def until_new_serial(port, old, t0, limit=15.0):
    """Seconds from t0 until the server answers a serial other than `old` (None if it never does)."""
    while time.monotonic() - t0 < limit:
        s = soa_serial(port)
        if s is not None and s != old:
            return time.monotonic() - t0, s
        time.sleep(0.001)
    return None, None


def run_child(cmd, res):
    """Runs cmd pinned to the client CPU; fills res with its end time, exit code, output and CPU seconds
    (user + system, from its rusage: the figure that the other helpers' load on the machine disturbs least)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err, preexec_fn=pin_client)
        _, status, ru = os.wait4(p.pid, 0)
        res["end"] = time.monotonic()
        p.returncode = res["rc"] = os.waitstatus_to_exitcode(status)
        res["cpu"] = ru.ru_utime + ru.ru_stime
        out.seek(0)
        err.seek(0)
        res["stdout"], res["stderr"] = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    return res


def timed_command(cmd):
    """Starts cmd in a thread; returns (t0, thread, result), the result filled in when it ends."""
    res = {}
    t0 = time.monotonic()
    th = threading.Thread(target=run_child, args=(cmd, res))
    th.start()
    res["t0"] = t0
    return t0, th, res


def rss_mib(srv):
    pid = srv.main_pid()
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (OSError, TypeError):
        pass
    return None


# ---------------------------------------------------------------------------------------------- pigsty-dns

class Changes:
    """Successive changed versions of a names file: host-1 moves to a new address each time."""

    def __init__(self, data):
        self.data, self.i = data, 0

    def next(self):
        self.i += 1
        yml = os.path.join(self.data["dir"], "changed.yml")
        bench.write_yml(yml, self.data["names"], changed=("host-1", f"10.10.10.{100 + self.i % 100}"))
        return yml


def pigsty_load_live(env, data, changes, port):
    """`load` of a changed file into a running server: (to new serial answered, the command's wall time, path)."""
    old = soa_serial(port, timeout=1)
    yml = changes.next()
    t0, th, res = timed_command([env.pigsty, "load", yml, "--state-dir", data["state"], "--server",
                                 f"127.0.0.1:{port}", "--require-live", "--json"])
    live, _ = until_new_serial(port, old, t0)
    th.join()
    if res["rc"] != 0:
        raise RuntimeError(f"load exited {res['rc']}: {res['stderr'].strip()[-500:]}")
    try:
        path = json.loads(res["stdout"]).get("path")
    except ValueError:
        path = None
    return live, res["end"] - t0, path, res["cpu"]


def pigsty_block(env, data, changes, rnd, under_load):
    """One server run at this size: start → first answer, RSS, one idle change, optionally one under dnsperf."""
    port = PORTS["pigsty-dns"]
    srv = bench.make_server(env, "pigsty-dns", data, port)
    srv.start(os.path.join(data["dir"], "pigsty-dns-scale.log"))
    rec = {"n": data["n"], "round": rnd}
    try:
        q, a = data["probe"]
        rec["ready_s"] = bench.wait_ready(srv, port, q, a)
        time.sleep(0.3)
        rec["rss_start_mib"] = rss_mib(srv)
        rec["live_s"], rec["cmd_s"], _, rec["cmd_cpu_s"] = pigsty_load_live(env, data, changes, port)
        if under_load:
            p = subprocess.Popen(["dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d", data["queries"], "-l",
                                  str(env.args.load_seconds), "-c", "4", "-q", "100", "-t", "2"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, preexec_fn=pin_client)
            time.sleep(1.5)
            rec["busy_live_s"], rec["busy_cmd_s"], _, _ = pigsty_load_live(env, data, changes, port)
            out = p.communicate()[0].decode(errors="replace")
            m = re.search(r"Queries lost:\s+(\d+)", out)
            rec["busy_lost"] = int(m.group(1)) if m else None
            m = re.search(r"Queries per second:\s+([\d.]+)", out)
            rec["busy_qps"] = float(m.group(1)) if m else None
    finally:
        srv.stop()
    return rec


def small_block(env, data, changes, rnd, repeats=3):
    port = PORTS["pigsty-dns"]
    srv = bench.make_server(env, "pigsty-dns", data, port)
    srv.start(os.path.join(data["dir"], "pigsty-dns-scale.log"))
    out = []
    try:
        q, a = data["probe"]
        bench.wait_ready(srv, port, q, a)
        for _ in range(repeats):
            live, cmd, _, cpu = pigsty_load_live(env, data, changes, port)
            out.append({"round": rnd, "live_s": live, "cmd_s": cmd, "cmd_cpu_s": cpu})
    finally:
        srv.stop()
    return out


def check_load_block(env, data, changes, rnd):
    """Wall time of `check` and of `load` (no server) of the 100,000-name file; the new generation's size."""
    yml = changes.next()
    c = run_child([env.pigsty, "check", yml], {"t0": time.monotonic()})
    state = os.path.join(data["dir"], "state-load-only")
    r = run_child([env.pigsty, "load", yml, "--state-dir", state, "--json"], {"t0": time.monotonic()})
    if c["rc"] != 0 or r["rc"] != 0:
        raise RuntimeError(f"check {c['rc']} / load {r['rc']}: {r['stderr'].strip()[-500:]}")
    path = json.loads(r["stdout"]).get("path")
    if not path:  # a `load --json` without the path: the newest file under the generations directory
        gens = os.path.join(state, "generations")
        files = [os.path.join(gens, f) for f in os.listdir(gens)] if os.path.isdir(gens) else []
        path = max(files, key=os.path.getmtime, default=None)
    size = os.path.getsize(path) if path else None
    # Only the size is needed: keep the scratch state dir to one generation.
    shutil.rmtree(state, ignore_errors=True)
    return {"round": rnd, "check_s": c["end"] - c["t0"], "load_s": r["end"] - r["t0"], "check_cpu_s": c["cpu"],
            "load_cpu_s": r["cpu"], "gen_bytes": size}


def swaps_block(env, data, changes, swaps, budget):
    """RSS after start, after the first swap and after `swaps` swaps (each confirmed live), time-bounded.
    Generation files older than the previous one are deleted as it goes, to bound the disk used."""
    port = PORTS["pigsty-dns"]
    srv = bench.make_server(env, "pigsty-dns", data, port)
    srv.start(os.path.join(data["dir"], "pigsty-dns-swaps.log"))
    rec = {"target": swaps}
    paths = []
    try:
        q, a = data["probe"]
        bench.wait_ready(srv, port, q, a)
        time.sleep(0.3)
        rec["rss_start_mib"] = rss_mib(srv)
        t0 = time.monotonic()
        done = 0
        while done < swaps and time.monotonic() - t0 < budget:
            _, _, path, _ = pigsty_load_live(env, data, changes, port)
            done += 1
            if path:
                paths.append(path)
            if len(paths) > 2:
                try:
                    os.remove(paths.pop(0))
                except OSError:
                    pass
            if done == 1:
                time.sleep(0.3)
                rec["rss_one_mib"] = rss_mib(srv)
        time.sleep(0.3)
        rec["done"], rec["seconds"] = done, time.monotonic() - t0
        rec["rss_after_mib"] = rss_mib(srv)
    finally:
        srv.stop()
    return rec


# ---------------------------------------------------------------------------------------------- NSD, Knot

def changed_zone(text, bump, addr):
    """The exported zone with its SOA serial raised by `bump` and host-1 at `addr`."""
    text = re.sub(r"(\tSOA\t\S+ \S+ )(\d+)", lambda m: m.group(1) + str(int(m.group(2)) + bump), text, count=1)
    return re.sub(r"^(host-1\t.*\tA\t)\S+$", lambda m: m.group(1) + addr, text, count=1, flags=re.M)


def peer_reload(env, data, name, rnd):
    """Start → first answer and time from the reload command to the new serial answered, for NSD or Knot."""
    port = PORTS[name]
    own = dict(data, zone=os.path.join(data["dir"], f"{name}.zone"))
    base = open(data["zone"]).read()
    with open(own["zone"], "w") as f:
        f.write(base)
    srv = bench.make_server(env, name, own, port)
    d = os.path.join(data["dir"], name)
    if name == "nsd":
        conf = os.path.join(d, "nsd.conf")
        text = open(conf).read().replace("remote-control:\n  control-enable: no\n",
                                         f"remote-control:\n  control-enable: yes\n  control-interface: {d}/nsd.sock\n")
        with open(conf, "w") as f:
            f.write(text)
        cmd = ["nsd-control", "-c", conf, "reload", ZONE]
    else:
        cmd = ["knotc", "-s", os.path.join(d, "knot.sock"), "zone-reload", ZONE]
    srv.start(os.path.join(d, "scale.log"))
    rec = {"server": name, "round": rnd}
    try:
        q, a = data["probe"]
        rec["ready_s"] = bench.wait_ready(srv, port, q, a)
        time.sleep(0.3)
        old = soa_serial(port, timeout=1)
        tmp = own["zone"] + ".new"
        with open(tmp, "w") as f:
            f.write(changed_zone(base, 1000 + rnd, f"10.10.10.{200 + rnd % 50}"))
        os.replace(tmp, own["zone"])
        t0, th, res = timed_command(cmd)
        rec["live_s"], _ = until_new_serial(port, old, t0)
        th.join()
        rec["cmd_rc"] = res["rc"]
        if res["rc"] != 0:
            rec["error"] = (res["stdout"] + res["stderr"]).strip()[-300:]
    finally:
        srv.stop()
    return rec


# ---------------------------------------------------------------------------------------------- UDP CPU

def udp_block(env, data, name, rnd):
    r = bench.one_run(env, name, data, PORTS[name], ["udp"], rnd)
    u = r.get("udp", {})
    return {"server": name, "n": data["n"], "round": rnd, "cpu_us_per_q": u.get("cpu_us_per_q"),
            "qps": u.get("qps"), "lost": u.get("lost"), "error": r.get("error")}


# ---------------------------------------------------------------------------------------------- the table

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def ms(x):
    return "n/a" if x is None else f"{x * 1000:.0f} ms"


def verdict(value, target):
    if value is None:
        return "not measured"
    if value <= target:
        return "met"
    return f"missed ({value / target:.1f}× the target)"


def table(res):
    big = res["pigsty_big"]
    small = res["pigsty_small"]
    peers = res["peers"]
    rows = []
    live = med([r["live_s"] for r in big])
    nsd = med([r["live_s"] for r in peers if r["server"] == "nsd"])
    knot = med([r["live_s"] for r in peers if r["server"] == "knot"])
    beside = []
    if nsd:
        beside.append(f"NSD {ms(nsd)}, ours {live / nsd:.1f}×" if live else f"NSD {ms(nsd)}")
    if knot:
        beside.append(f"Knot {ms(knot)}, ours {live / knot:.1f}×" if live else f"Knot {ms(knot)}")
    cpu = med([r.get("cmd_cpu_s") for r in big])
    if cpu is not None:
        beside.append(f"`load` used {ms(cpu)} CPU")
    rows.append(("`load` of a changed 100,000-name file → new serial answered, server idle",
                 ms(live) + (f" ({'; '.join(beside)})" if beside else ""), "≤ 200 ms", verdict(live, 0.200)))
    busy = med([r.get("busy_live_s") for r in big])
    lost = [r.get("busy_lost") for r in big if r.get("busy_lost") is not None]
    v = verdict(busy, 0.400)
    if lost and max(lost) > 0:
        v = ("missed: " if v == "met" else v + "; ") + f"{max(lost)} queries lost"
    rows.append(("the same under full UDP load (dnsperf), 0 queries lost",
                 f"{ms(busy)}, lost {'/'.join(str(x) for x in lost)}", "≤ 400 ms", v))
    s_live = med([r["live_s"] for r in small])
    s_cmd = med([r["cmd_s"] for r in small])
    rows.append(("`load` of a changed 10-name file → new serial answered", ms(s_live), "≤ 25 ms",
                 verdict(s_live, 0.025)))
    s_cpu = med([r.get("cmd_cpu_s") for r in small])
    rows.append(("`load` of a changed 10-name file, the command's own wall time (it confirms live)",
                 ms(s_cmd) + (f" ({ms(s_cpu)} CPU)" if s_cpu is not None else ""),
                 "≤ 40 ms", verdict(s_cmd, 0.040)))
    ready = med([r["ready_s"] for r in big])
    knot_ready = med([r["ready_s"] for r in peers if r["server"] == "knot"])
    nsd_ready = med([r["ready_s"] for r in peers if r["server"] == "nsd"])
    rows.append(("`serve` start → first answer, 100,000 names",
                 f"{ready:.2f} s (Knot {knot_ready or 0:.2f} s, NSD {nsd_ready or 0:.2f} s)" if ready else "n/a",
                 "≤ 0.15 s (Knot 0.13)", verdict(ready, 0.15)))
    sw = res["swaps"]
    r0, r1, rn = sw.get("rss_start_mib"), sw.get("rss_one_mib"), sw.get("rss_after_mib")
    if r0 and rn:
        growth = rn - (r1 or r0)
        ok = max(r0, rn) <= 14 and growth <= 0.5
        v = "met" if ok else "missed (" + ", ".join(
            ([f"{max(r0, rn) / 14:.1f}× 14 MiB"] if max(r0, rn) > 14 else [])
            + ([f"+{growth:.1f} MiB from swap 1 to swap {sw['done']}"] if growth > 0.5 else [])) + ")"
        cell = f"{r0:.1f} → {rn:.1f} MiB (after swap 1: {r1:.1f} MiB; {sw['done']} swaps)"
    else:
        v, cell = "not measured", "n/a"
    rows.append(("RSS of `serve` at 100,000 names, after start and after 100 swaps", cell,
                 "≤ 14 MiB, no growth", v))
    cl = res["check_load"]
    chk, lod = med([r["check_s"] for r in cl]), med([r["load_s"] for r in cl])
    v1, v2 = verdict(chk, 0.10), verdict(lod, 0.15)
    c_cpu, l_cpu = med([r["check_cpu_s"] for r in cl]), med([r["load_cpu_s"] for r in cl])
    rows.append(("`check` / `load` of the 100,000-name file",
                 f"{chk:.2f} / {lod:.2f} s (CPU {c_cpu:.2f} / {l_cpu:.2f} s)" if chk and lod else "n/a",
                 "≤ 0.10 / 0.15 s",
                 "met" if v1 == v2 == "met" else f"check {v1}, load {v2}"))
    size = med([r["gen_bytes"] for r in cl])
    rows.append(("generation file at 100,000 names", f"{size / 1e6:.1f} MB" if size else "n/a", "≤ 4 MB",
                 verdict(size, 4e6)))
    udp = res["udp"]
    cells, worst = [], None
    nsd_cells = []
    for n in res["sizes"]:
        ratios, nsd_ratios = [], []
        for rnd in sorted({r["round"] for r in udp}):
            by = {r["server"]: r["cpu_us_per_q"] for r in udp if r["n"] == n and r["round"] == rnd}
            if by.get("echo"):
                if by.get("pigsty-dns"):
                    ratios.append(by["pigsty-dns"] / by["echo"])
                if by.get("nsd"):
                    nsd_ratios.append(by["nsd"] / by["echo"])
        r, nr = med(ratios), med(nsd_ratios)
        floor = med([x["cpu_us_per_q"] for x in udp if x["n"] == n and x["server"] == "echo"])
        ours = med([x["cpu_us_per_q"] for x in udp if x["n"] == n and x["server"] == "pigsty-dns"])
        cells.append(f"{r:.2f}×" if r else "n/a")
        nsd_cells.append(f"{nr:.2f}×" if nr else "n/a")
        res.setdefault("udp_detail", []).append(f"{n} names: ours {ours or 0:.2f} µs/q, echo floor "
                                                f"{floor or 0:.2f} µs/q, ratio {r or 0:.2f}, NSD {nr or 0:.2f}")
        worst = r if worst is None or (r and r > worst) else worst
    rows.append(("UDP CPU per query at 100 / 100,000 names, vs the echo floor in the same run",
                 f"{' / '.join(cells)} floor (NSD {' / '.join(nsd_cells)})", "≤ 1.10× floor, flat",
                 verdict(worst, 1.10)))
    return rows


def machine():
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
                 platform.processor())
    mem = next((line.split()[1] for line in open("/proc/meminfo") if line.startswith("MemTotal")), "?")
    return f"{platform.node()}, {platform.system()} {platform.release()} {platform.machine()}, {model}, " \
           f"{os.cpu_count()} CPUs, {int(mem) // 1024} MiB"


def render(res, rows):
    lines = [f"### {res['started']}: `{res['command']}`", "",
             "Wall times, medians; the CPU seconds beside them are the child's own user + system time, which "
             "the machine's other load disturbs less.", "",
             f"- tree: {res['tree']}", f"- machine: {res['machine']}",
             f"- load average (1 min): {res['load_start']:.2f} at the start, {res['load_end']:.2f} at the end; "
             f"{res['seconds']:.0f} s; {res['rounds']} interleaved rounds (medians), {res['args']['udp_seconds']} s "
             f"dnsperf per UDP run, {res['swaps'].get('done', 0)} swaps",
             "", "| figure | measured | target | |", "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    lines += [""] + [f"- UDP, {x}" for x in res.get("udp_detail", [])]
    nsd = [r for r in res["peers"] if r["server"] == "nsd"]
    knot = [r for r in res["peers"] if r["server"] == "knot"]
    lines.append("- time to new serial at 100,000 names, every round: ours "
                 + ", ".join(ms(r["live_s"]) for r in res["pigsty_big"])
                 + "; NSD (`nsd-control reload`) " + ", ".join(ms(r["live_s"]) for r in nsd)
                 + "; Knot (`knotc zone-reload`) " + ", ".join(ms(r["live_s"]) for r in knot))
    errs = [r.get("error") for r in res["peers"] + res["udp"] if r.get("error")] + res.get("errors", [])
    if errs:
        lines.append("- errors: " + "; ".join(str(e) for e in errs))
    return "\n".join(lines) + "\n"


SECTION = "## Scale (issue 13): `bench/scale.sh`"


def append_results(text):
    """Adds this run at the end of the scale section (created at the end of the file the first time)."""
    path = os.path.join(HERE, "RESULTS.md")
    body = open(path).read() if os.path.exists(path) else ""
    if SECTION not in body:
        body = body.rstrip("\n") + "\n\n" + SECTION + "\n\n" + (
            "One command prints issue 13's whole table: `bench/scale.sh` (`--quick` for a short run, "
            "`--rounds N`, `--swaps N`; about 5 to 8 minutes by default on the 2-core machine, 1 to 2 with "
            "`--quick`). Each run appends its table here, newest last: the tree it measured, the machine and "
            "the load average; medians of interleaved rounds; NSD and Knot time-to-new-serial and the echo "
            "floor measured in the same run.\n")
    start = body.index(SECTION)
    nxt = body.find("\n## ", start + len(SECTION))
    end = len(body) if nxt < 0 else nxt + 1
    head, tail = body[:end].rstrip("\n"), body[end:]
    with open(path, "w") as f:
        f.write(head + "\n\n" + text + ("\n" + tail if tail else ""))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pigsty", required=True)
    ap.add_argument("--echo", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--swaps", type=int, default=100)
    ap.add_argument("--swap-budget", type=float, default=240.0, help="seconds at most for the swaps")
    ap.add_argument("--udp-seconds", type=int, default=5)
    ap.add_argument("--load-seconds", type=int, default=6, help="dnsperf run around the busy load")
    ap.add_argument("--quick", action="store_true", help="1 round, 10 swaps, 2 s UDP runs")
    ap.add_argument("--command", default="bench/scale.sh")
    ap.add_argument("--tree", default="?")
    ap.add_argument("--no-append", action="store_true", help="print the table only")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.swaps, args.udp_seconds = 1, min(args.swaps, 10), 2
    # bench.one_run reads these from the options object.
    args.hickory, args.tcp_seconds, args.lat_seconds = None, 0, 0
    work = tempfile.mkdtemp(prefix="pigsty-scale-")
    env = bench.Env(args, work)
    started = time.time()
    res = {"started": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "command": args.command, "tree": args.tree, "machine": machine(), "load_start": loadavg(),
           "args": vars(args), "rounds": args.rounds, "sizes": [100, BIG], "pigsty_big": [],
           "pigsty_small": [], "peers": [], "check_load": [], "udp": [], "swaps": {}, "errors": []}
    try:
        log("preparing 10, 100 and 100,000 names")
        data = {n: bench.prepare(env, n) for n in (SMALL, 100, BIG)}
        changes = {n: Changes(data[n]) for n in data}
        for rnd in range(1, args.rounds + 1):
            steps = [
                ("pigsty-dns 100k", lambda: res["pigsty_big"].append(
                    pigsty_block(env, data[BIG], changes[BIG], rnd, True))),
                ("nsd 100k", lambda: res["peers"].append(peer_reload(env, data[BIG], "nsd", rnd))),
                ("knot 100k", lambda: res["peers"].append(peer_reload(env, data[BIG], "knot", rnd))),
                ("pigsty-dns 10", lambda: res["pigsty_small"].extend(
                    small_block(env, data[SMALL], changes[SMALL], rnd))),
                ("check/load 100k", lambda: res["check_load"].append(
                    check_load_block(env, data[BIG], changes[BIG], rnd))),
            ]
            for n in (100, BIG):
                for s in ("pigsty-dns", "nsd", "echo"):
                    steps.append((f"udp {s} {n}", lambda n=n, s=s: res["udp"].append(
                        udp_block(env, data[n], s, rnd))))
            k = (rnd - 1) % len(steps)
            for label, step in steps[k:] + steps[:k]:
                try:
                    step()
                except Exception as e:  # recorded; the other steps still run
                    res["errors"].append(f"round {rnd} {label}: {e}")
                    log(f"  {label}: {e}")
            log(f"round {rnd} done, load {loadavg():.2f}")
        log(f"swaps: up to {args.swaps} within {args.swap_budget:.0f} s")
        try:
            res["swaps"] = swaps_block(env, data[BIG], changes[BIG], args.swaps, args.swap_budget)
        except Exception as e:
            res["errors"].append(f"swaps: {e}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    res["seconds"], res["load_end"] = time.time() - started, loadavg()
    with open(os.path.join(HERE, ".cache", "scale.json"), "w") as f:
        json.dump(res, f, indent=1, default=str)
    rows = table(res)
    text = render(res, rows)
    print(text)
    if not args.no_append:
        append_results(text)
        log("appended to bench/RESULTS.md")


if __name__ == "__main__":
    main()
