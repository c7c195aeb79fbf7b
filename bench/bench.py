#!/usr/bin/env python3
"""The peer benchmark (issues 3 and 4): pigsty-dns beside NSD, Knot, BIND, Unbound, dnsmasq, hickory-dns and an
echo responder, on loopback, pinned (servers on CPU 0, dnsperf on CPU 1), interleaved, medians.

Run through bench/run.sh, which installs and builds what this needs and runs it inside a private network
namespace (only loopback exists there). Every server is started by this script in its own process group under
`timeout`, with PR_SET_PDEATHSIG, and killed by its process-group id when its run ends.
"""

import argparse
import ctypes
import datetime
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ZONE = "pigsty.test"
SERVER_CPU = 0
CLIENT_CPU = 1
SERVER_BOUND_S = 900  # `timeout` bound on every server process: nothing outlives a run
LIBC = ctypes.CDLL("libc.so.6", use_errno=True)

ALL_SERVERS = ["pigsty-dns", "nsd", "knot", "bind", "unbound", "dnsmasq", "hickory-dns", "echo"]
# Optional comparison builds (issue 13): another pigsty-dns binary and another echo responder, given by
# --pigsty-alt / --echo-alt, e.g. the one-datagram-per-system-call UDP loop and floor.
ALT_SERVERS = ["pigsty-dns-alt", "echo-alt"]


def log(*a):
    print(time.strftime("%H:%M:%S"), *a, file=sys.stderr, flush=True)


def loadavg():
    return os.getloadavg()[0]


# ---------------------------------------------------------------------------------------------- zone data

def names_for(n):
    """n served names: the node name `meta` (10.10.10.10) and n-1 vm_hosts names host-<i> on .9-.254."""
    hosts = [(f"host-{i}", f"10.10.10.{9 + i % 246}") for i in range(n - 1)]
    return [("meta", "10.10.10.10")] + hosts


def write_yml(path, names, changed=None):
    by_addr = {}
    for name, addr in names[1:]:
        if changed and name == changed[0]:
            addr = changed[1]
        by_addr.setdefault(addr, []).append(name)
    with open(path, "w") as f:
        f.write("all:\n  hosts: {10.10.10.10: {nodename: meta}}\n  vars:\n    vm_hosts:\n")
        for addr in sorted(by_addr, key=lambda a: int(a.rsplit(".", 1)[1])):
            f.write(f"      - address: {addr}\n        names:\n")
            for name in by_addr[addr]:
                f.write(f"          - {name}\n")


def write_queries(path, names, count=100_000, seed=3):
    rng = random.Random(seed)
    with open(path, "w") as f:
        for _ in range(count):
            if rng.random() < 0.9:
                f.write(f"{rng.choice(names)[0]}.{ZONE} A\n")
            else:
                f.write(f"nx-{rng.randrange(10**9)}.{ZONE} A\n")


def zone_records(zonefile):
    """(owner, type, rdata) lines of the exported master file, owners made absolute."""
    origin, out = ZONE + ".", []
    for line in open(zonefile):
        line = line.split(";", 1)[0].rstrip()
        if not line or line.startswith("$TTL"):
            continue
        if line.startswith("$ORIGIN"):
            origin = line.split()[1]
            continue
        out.append(line)
    return origin, out


# ---------------------------------------------------------------------------------------------- processes

def _child_setup():
    os.sched_setaffinity(0, {SERVER_CPU})
    LIBC.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: die with this script


class Server:
    def __init__(self, cmd, cwd=None, env=None):
        self.cmd = ["timeout", "-s", "KILL", str(SERVER_BOUND_S)] + cmd
        self.cwd, self.env = cwd, env
        self.proc = None

    def start(self, logpath):
        self.log = open(logpath, "ab")
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(self.cmd, cwd=self.cwd, env=self.env, stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=self.log, start_new_session=True,
                                     preexec_fn=_child_setup)
        return self

    def tree(self):
        """PIDs of our process group's members (the `timeout` wrapper, the server, its children)."""
        pids = []
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    with open(f"/proc/{d}/stat") as f:
                        st = f.read()
                    fields = st[st.rindex(")") + 2:].split()
                    if int(fields[2]) == self.proc.pid:  # pgrp
                        pids.append(int(d))
                except (OSError, ValueError):
                    pass
        return pids

    def main_pid(self):
        """The server process itself: the direct child of `timeout`."""
        for pid in self.tree():
            try:
                with open(f"/proc/{pid}/stat") as f:
                    st = f.read()
                if int(st[st.rindex(")") + 2:].split()[1]) == self.proc.pid:
                    return pid
            except OSError:
                pass
        return None

    def cpu_s(self):
        """utime+stime (incl. exited threads) of every process in the group, in seconds."""
        tick = os.sysconf("SC_CLK_TCK")
        total = 0
        for pid in self.tree():
            try:
                with open(f"/proc/{pid}/stat") as f:
                    st = f.read()
                fields = st[st.rindex(")") + 2:].split()
                total += int(fields[11]) + int(fields[12])
            except OSError:
                pass
        return total / tick

    def rss_kib(self):
        def rss(pid):
            try:
                for line in open(f"/proc/{pid}/status"):
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
            except OSError:
                pass
            return 0
        def pss(pid):
            try:
                for line in open(f"/proc/{pid}/smaps_rollup"):
                    if line.startswith("Pss:"):
                        return int(line.split()[1])
            except OSError:
                pass
            return 0
        main = self.main_pid()
        tree = [p for p in self.tree() if p != self.proc.pid]
        return (rss(main) if main else 0), sum(rss(p) for p in tree), sum(pss(p) for p in tree)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            except ProcessLookupError:
                pass
        # Members that outlived the leader (NSD's children) are still in our group.
        for pid in self.tree():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.log.close()


# ---------------------------------------------------------------------------------------------- DNS probe

def query_a(port, name, timeout=0.2, tcp=False):
    """A hand-built A query for the benchmark's readiness check; returns (rcode, [addresses]) or None."""
    qid = random.randrange(65536)
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    q += b"".join(bytes([len(p)]) + p.encode() for p in name.rstrip(".").split(".")) + b"\0"
    q += struct.pack(">HH", 1, 1)
    try:
        if tcp:
            with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
                s.sendall(struct.pack(">H", len(q)) + q)
                data = b""
                while len(data) < 2 or len(data) < 2 + struct.unpack(">H", data[:2])[0]:
                    chunk = s.recv(65535)
                    if not chunk:
                        return None
                    data += chunk
                r = data[2:]
        else:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.settimeout(timeout)
                s.sendto(q, ("127.0.0.1", port))
                r, _ = s.recvfrom(65535)
    except OSError:
        return None
    if len(r) < 12 or struct.unpack(">H", r[:2])[0] != qid:
        return None
    flags, qd, an = struct.unpack(">HHH", r[2:8])
    # Skip the question, then read answers (names may be compressed).
    pos = 12

    def skip_name(p):
        while True:
            ln = r[p]
            if ln >= 0xC0:
                return p + 2
            if ln == 0:
                return p + 1
            p += 1 + ln
    try:
        for _ in range(qd):
            pos = skip_name(pos) + 4
        addrs = []
        for _ in range(an):
            pos = skip_name(pos)
            typ, _cls, _ttl, rdlen = struct.unpack(">HHIH", r[pos:pos + 10])
            pos += 10
            if typ == 1 and rdlen == 4:
                addrs.append(socket.inet_ntoa(r[pos:pos + 4]))
            pos += rdlen
    except (IndexError, struct.error):
        return None
    return flags & 0xF, addrs


def wait_ready(srv, port, name, addr, limit=60.0, echo=False):
    """Seconds from exec to the first correct answer for `name` (the last name of the zone)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if srv.proc.poll() is not None:
            raise RuntimeError(f"server exited with {srv.proc.returncode}: {' '.join(srv.cmd)}")
        r = query_a(port, name, timeout=0.05)
        if r is not None and (echo or (r[0] == 0 and addr in r[1])):
            return time.monotonic() - srv.t0
        time.sleep(0.005)
    raise RuntimeError(f"no correct answer for {name} within {limit} s: {' '.join(srv.cmd)}")


# ---------------------------------------------------------------------------------------------- dnsperf

def dnsperf(port, qfile, seconds, mode="udp", qps=None, verbose=False):
    cmd = ["dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d", qfile, "-l", str(seconds),
           "-c", "4", "-q", "100", "-t", "2", "-m", mode]
    if qps:
        cmd += ["-Q", str(qps)]
    if verbose:
        cmd += ["-v"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         preexec_fn=lambda: os.sched_setaffinity(0, {CLIENT_CPU}))
    out = p.stdout.read().decode(errors="replace")
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)

    def num(pat, default=None):
        m = re.search(pat, out)
        return float(m.group(1)) if m else default
    res = {
        "cmd": " ".join(cmd),
        "sent": num(r"Queries sent:\s+(\d+)", 0),
        "completed": num(r"Queries completed:\s+(\d+)", 0),
        "lost": num(r"Queries lost:\s+(\d+)", 0),
        "qps": num(r"Queries per second:\s+([\d.]+)", 0.0),
        "runtime": num(r"Run time \(s\):\s+([\d.]+)", float(seconds)),
        "client_cpu": (ru.ru_utime + ru.ru_stime),
        "rcodes": dict((k, int(v)) for k, v in re.findall(r"([A-Z]+) (\d+) \(", out.split("Response codes:")[-1].split("\n")[0])),
    }
    if verbose:
        lat = [float(x) for x in re.findall(r"^> \S+ \S+ \S+ ([\d.]+)$", out, re.M)]
        lat.sort()
        if lat:
            res["p50_us"] = lat[len(lat) // 2] * 1e6
            res["p99_us"] = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1e6
            res["lat_n"] = len(lat)
    if p.returncode != 0 and not res["completed"]:
        res["error"] = out[-2000:]
    return res


# ---------------------------------------------------------------------------------------------- servers

class Env:
    def __init__(self, args, work):
        self.args, self.work = args, work
        self.pigsty = args.pigsty
        self.hickory = args.hickory
        self.echo = args.echo


def export_zone(pigsty, state, out):
    """The forward zone file of ZONE. A generation of several zones (the default since issue 37) refuses
    `--format zone` without `--zone`; a build from before zone sets has no such option."""
    cmd = [pigsty, "export", "--format", "zone", "--state-dir", state, "-o", out]
    if subprocess.run(cmd, capture_output=True).returncode != 0:
        subprocess.run(cmd + ["--zone", ZONE], check=True, capture_output=True)


def load_state(pigsty, yml, state):
    """A state dir with one generation of `yml`, written by this binary's own `load`."""
    subprocess.run([pigsty, "load", yml, "--state-dir", state], check=True, capture_output=True)


def prepare(env, n):
    """Per size: the state dir with one generation, the exported zone and hosts files, the query file; with
    --pigsty-alt, a second state dir written by that binary (a build of another generation format or zone
    set serves what its own `load` wrote)."""
    d = os.path.join(env.work, f"n{n}")
    os.makedirs(d, exist_ok=True)
    names = names_for(n)
    yml = os.path.join(d, "names.yml")
    write_yml(yml, names)
    state = os.path.join(d, "state")
    load_state(env.pigsty, yml, state)
    state_alt = None
    if getattr(env.args, "pigsty_alt", None):
        state_alt = os.path.join(d, "state-alt")
        load_state(env.args.pigsty_alt, yml, state_alt)
    zonefile = os.path.join(d, "pigsty.test.zone")
    export_zone(env.pigsty, state, zonefile)
    hosts = os.path.join(d, "hosts")
    subprocess.run([env.pigsty, "export", "--format", "hosts", "--state-dir", state, "-o", hosts],
                   check=True, capture_output=True)
    qfile = os.path.join(d, "queries.txt")
    write_queries(qfile, names)
    last = names[-1]
    return {"dir": d, "n": n, "names": names, "yml": yml, "state": state, "state_alt": state_alt,
            "zone": zonefile, "hosts": hosts, "queries": qfile, "probe": (f"{last[0]}.{ZONE}", last[1])}


def make_server(env, name, data, port):
    d = os.path.join(data["dir"], name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    z = data["zone"]
    if name == "pigsty-dns":
        return Server([env.pigsty, "serve", "--listen", f"127.0.0.1:{port}", "--state-dir", data["state"]],
                      env=dict(os.environ, RUST_LOG="warn"))
    if name == "pigsty-dns-alt":
        return Server([env.args.pigsty_alt, "serve", "--listen", f"127.0.0.1:{port}", "--state-dir",
                       data.get("state_alt") or data["state"]], env=dict(os.environ, RUST_LOG="warn"))
    if name == "echo":
        return Server([env.echo, str(port), str(SERVER_BOUND_S)])
    if name == "echo-alt":
        return Server([env.args.echo_alt, str(port), str(SERVER_BOUND_S)])
    if name == "nsd":
        conf = os.path.join(d, "nsd.conf")
        with open(conf, "w") as f:
            f.write(f"""server:
  ip-address: 127.0.0.1
  port: {port}
  do-ip6: no
  server-count: 1
  reuseport: no
  username: ""
  chroot: ""
  database: ""
  zonesdir: "{d}"
  zonelistfile: "{d}/zone.list"
  xfrdfile: "{d}/xfrd.state"
  xfrdir: "{d}"
  pidfile: "{d}/nsd.pid"
  logfile: "{d}/nsd.log"
  verbosity: 0
  rrl-ratelimit: 0
  rrl-whitelist-ratelimit: 0
remote-control:
  control-enable: no
zone:
  name: {ZONE}
  zonefile: "{z}"
""")
        return Server(["nsd", "-d", "-c", conf])
    if name == "knot":
        conf = os.path.join(d, "knot.conf")
        with open(conf, "w") as f:
            f.write(f"""server:
  rundir: "{d}"
  listen: 127.0.0.1@{port}
  udp-workers: 1
  tcp-workers: 1
  background-workers: 1
database:
  storage: "{d}/db"
control:
  listen: "{d}/knot.sock"
log:
  - target: stderr
    any: error
template:
  - id: default
    storage: "{d}"
    zonefile-sync: -1
    zonefile-load: whole
    journal-content: none
zone:
  - domain: {ZONE}
    file: "{z}"
""")
        return Server(["knotd", "-c", conf])
    if name == "bind":
        conf = os.path.join(d, "named.conf")
        with open(conf, "w") as f:
            f.write(f"""options {{
  directory "{d}";
  pid-file none;
  session-keyfile "{d}/session.key";
  managed-keys-directory "{d}";
  recursion no;
  listen-on port {port} {{ 127.0.0.1; }};
  listen-on-v6 {{ none; }};
  dnssec-validation no;
  notify no;
}};
controls {{ }};
zone "{ZONE}" {{ type primary; file "{z}"; }};
""")
        return Server(["named", "-g", "-4", "-n", "1", "-c", conf])
    if name == "unbound":
        conf = os.path.join(d, "unbound.conf")
        origin, recs = zone_records(z)
        with open(conf, "w") as f:
            f.write(f"""server:
  interface: 127.0.0.1@{port}
  port: {port}
  num-threads: 1
  do-daemonize: no
  username: ""
  chroot: ""
  directory: "{d}"
  pidfile: ""
  use-syslog: no
  logfile: ""
  verbosity: 0
  do-ip6: no
  module-config: "iterator"
  auto-trust-anchor-file: ""
  do-not-query-localhost: yes
  local-zone: "." refuse
  local-zone: "{ZONE}." static
""")
            for line in recs:
                parts = line.split()
                owner = parts[0]
                if owner == "@":
                    owner = origin
                elif not owner.endswith("."):
                    owner = f"{owner}.{origin}"
                f.write(f'  local-data: "{owner} {" ".join(parts[1:])}"\n')
            f.write("remote-control:\n  control-enable: no\n")
        return Server(["unbound", "-d", "-c", conf])
    if name == "dnsmasq":
        return Server(["dnsmasq", "-k", "--conf-file=/dev/null", f"--port={port}", "--listen-address=127.0.0.1",
                       "--bind-interfaces", "--no-resolv", "--no-hosts", f"--local=/{ZONE}/",
                       f"--addn-hosts={data['hosts']}", "--user=root", "--pid-file=", "--log-facility=-"])
    if name == "hickory-dns":
        conf = os.path.join(d, "hickory.toml")
        shutil.copy(z, os.path.join(d, "pigsty.test.zone"))
        with open(conf, "w") as f:
            f.write(f"""listen_addrs_ipv4 = ["127.0.0.1"]
listen_port = {port}
directory = "{d}"
drop_privileges = false

[[zones]]
zone = "{ZONE}"
zone_type = "Primary"
file = "pigsty.test.zone"
""")
        return Server([env.hickory, "-q", "--workers", "1", "-c", conf, "-z", d, "-p", str(port)])
    raise ValueError(name)


# ---------------------------------------------------------------------------------------------- runs

def one_run(env, name, data, port, plan, round_no):
    """Start the server, measure ready time and RSS, then the planned dnsperf runs; stop it."""
    srv = make_server(env, name, data, port)
    srv.start(os.path.join(data["dir"], f"{name}.log"))
    rec = {"server": name, "n": data["n"], "round": round_no}
    try:
        q, a = data["probe"]
        rec["ready_s"] = wait_ready(srv, port, q, a, echo=name.startswith("echo"))
        if not name.startswith("echo"):
            # Every server must also answer the node name and NXDOMAIN an unknown one, over UDP and TCP.
            for tcp in (False, True):
                r = query_a(port, f"meta.{ZONE}", timeout=1, tcp=tcp)
                ok = r is not None and r[0] == 0 and "10.10.10.10" in r[1]
                rec.setdefault("checks", []).append(("tcp" if tcp else "udp", "meta", ok))
        time.sleep(0.2)
        rec["rss_kib"], rec["rss_tree_kib"], rec["pss_tree_kib"] = srv.rss_kib()
        for kind in plan:
            c0, l0 = srv.cpu_s(), loadavg()
            if kind == "udp":
                r = dnsperf(port, data["queries"], env.args.udp_seconds)
            elif kind == "tcp":
                r = dnsperf(port, data["queries"], env.args.tcp_seconds, mode="tcp")
            elif kind == "lat":
                r = dnsperf(port, data["queries"], env.args.lat_seconds, qps=10000, verbose=True)
            c1 = srv.cpu_s()
            r["server_cpu_s"] = c1 - c0
            r["cpu_us_per_q"] = (c1 - c0) / r["completed"] * 1e6 if r["completed"] else None
            r["load_before"], r["load_after"] = l0, loadavg()
            rec[kind] = r
            if srv.proc.poll() is not None:
                raise RuntimeError(f"{name} exited during the {kind} run")
        rec["rss_after_kib"] = srv.rss_kib()[0]
    except Exception as e:  # recorded and reported; the other servers still run
        rec["error"] = str(e)
        log(f"  {name} n={data['n']}: {e}")
    finally:
        srv.stop()
    return rec


def load_to_live(env, data, port, rounds):
    """pigsty-dns only: `load` of a changed 100,000-name file while dnsperf loads the server, to "live"."""
    d = data["dir"]
    srv = make_server(env, "pigsty-dns", data, port)
    srv.start(os.path.join(d, "pigsty-dns-live.log"))
    out = []
    try:
        q, a = data["probe"]
        wait_ready(srv, port, q, a)
        for i in range(rounds):
            yml = os.path.join(d, f"changed-{i}.yml")
            write_yml(yml, data["names"], changed=("host-1", f"10.10.10.{100 + i}"))
            p = subprocess.Popen(["dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d", data["queries"],
                                  "-l", "6", "-c", "4", "-q", "100", "-t", "2"], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT,
                                 preexec_fn=lambda: os.sched_setaffinity(0, {CLIENT_CPU}))
            time.sleep(1.5)
            l0 = loadavg()
            t0 = time.monotonic()
            lr = subprocess.run([env.pigsty, "load", yml, "--state-dir", data["state"], "--server",
                                 f"127.0.0.1:{port}", "--require-live"], capture_output=True, text=True,
                                preexec_fn=lambda: os.sched_setaffinity(0, {CLIENT_CPU}))
            dt = time.monotonic() - t0
            # Serving it: the changed name answers the new address.
            seen = query_a(port, f"host-1.{ZONE}", timeout=1)
            perf = p.stdout.read().decode(errors="replace")
            p.wait()
            lost = re.search(r"Queries lost:\s+(\d+)", perf)
            qps = re.search(r"Queries per second:\s+([\d.]+)", perf)
            out.append({"seconds": dt, "rc": lr.returncode, "stdout": lr.stdout.strip(),
                        "answer": seen[1] if seen else None, "expected": f"10.10.10.{100 + i}",
                        "lost": int(lost.group(1)) if lost else None,
                        "qps": float(qps.group(1)) if qps else None, "load": l0})
            log(f"  load-to-live {i}: {dt:.3f} s, {lr.stdout.strip()!r}, answer {out[-1]['answer']}")
    finally:
        srv.stop()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pigsty", required=True)
    ap.add_argument("--hickory", required=True)
    ap.add_argument("--echo", required=True)
    ap.add_argument("--pigsty-alt", help="a second pigsty-dns binary, run as server pigsty-dns-alt")
    ap.add_argument("--echo-alt", help="a second echo responder, run as server echo-alt")
    ap.add_argument("--servers", default=",".join(ALL_SERVERS))
    ap.add_argument("--sizes", default="100,1000,100000")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds of the UDP run")
    ap.add_argument("--full-rounds", type=int, default=3, help="of which this many also run TCP and latency")
    ap.add_argument("--udp-seconds", type=int, default=6)
    ap.add_argument("--tcp-seconds", type=int, default=4)
    ap.add_argument("--lat-seconds", type=int, default=4)
    ap.add_argument("--live-rounds", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "results.json"))
    args = ap.parse_args()
    servers = args.servers.split(",")
    sizes = [int(s) for s in args.sizes.split(",")]
    work = tempfile.mkdtemp(prefix="pigsty-bench-")
    env = Env(args, work)
    started = time.time()
    results = {"started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
               "args": vars(args), "runs": [], "live": [],
               "argv": [x for i, x in enumerate(sys.argv[1:]) if not (x in ("--pigsty", "--hickory", "--echo")
                        or (i > 0 and sys.argv[i] in ("--pigsty", "--hickory", "--echo")))]}
    try:
        data = {}
        for n in sizes:
            log(f"preparing {n} names")
            data[n] = prepare(env, n)
        port = {s: 15300 + i for i, s in enumerate(ALL_SERVERS + ALT_SERVERS)}
        for rnd in range(1, args.rounds + 1):
            plan = ["udp", "tcp", "lat"] if rnd <= args.full_rounds else ["udp"]
            # Interleaved: every server and size once per round; the server order rotates each round.
            order = servers[(rnd - 1) % len(servers):] + servers[:(rnd - 1) % len(servers)]
            for n in sizes:
                for s in order:
                    rec = one_run(env, s, data[n], port[s], plan, rnd)
                    results["runs"].append(rec)
                    u = rec.get("udp", {})
                    log(f"round {rnd} n={n} {s}: ready {rec.get('ready_s', 0):.3f} s, UDP {u.get('qps', 0):.0f} qps, "
                        f"lost {u.get('lost')}, {u.get('cpu_us_per_q') or 0:.2f} us/q, load {loadavg():.2f}"
                        + (f", TCP {rec['tcp']['qps']:.0f} qps, p50 {rec['lat'].get('p50_us', 0):.0f} us"
                           if "tcp" in rec else ""))
            with open(args.out, "w") as f:
                json.dump(results, f, indent=1)
        if "pigsty-dns" in servers and max(sizes) >= 100_000 and args.live_rounds:
            log("load to live under load, 100,000 names")
            results["live"] = load_to_live(env, data[max(sizes)], port["pigsty-dns"], args.live_rounds)
    finally:
        results["seconds"] = time.time() - started
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
        shutil.rmtree(work, ignore_errors=True)
    log(f"done in {results['seconds']:.0f} s; raw results in {args.out}")


if __name__ == "__main__":
    main()
