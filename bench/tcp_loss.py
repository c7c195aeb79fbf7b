#!/usr/bin/env python3
"""Where `dnsperf -m tcp -c 1000` loses queries (issue 24): Knot lost exactly 1,000 in every round of
bench/tcp_clients.sh, pigsty-dns none. Runs one server at a time (as bench/tcp_clients.py starts them:
1,000 names, pinned, one worker) under variations that tell the explanations apart:

- the run's length (-l 5 / 10 / 20): a loss per connection that does not grow with the run is an event at
  the start or the end, not a rate;
- the queries in flight (-q 1000 / 2000 / 4000 over 1,000 clients): if the loss follows -q, it is the
  queries in flight when something closes the connections;
- Knot's TCP settings (tcp-idle-timeout, tcp-io-timeout, tcp-max-clients);
- dnsperf's own `Reconnections` count: a connection closed by the server and opened again.

Run through bench/tcp_loss.sh (a private network namespace, the release binary); prints a Markdown table.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
import tcp_clients  # noqa: E402

# (server config, knot.conf additions, dnsperf -l, -c, -q, -T)
CASES = [
    ("knot", "", 10, 1000, 1000, 1),
    ("knot", "", 5, 1000, 1000, 1),
    ("knot", "", 20, 1000, 1000, 1),
    ("knot", "", 10, 1000, 2000, 1),
    ("knot", "", 10, 1000, 4000, 1),
    ("knot", "", 10, 100, 100, 1),
    ("knot", "tcp-idle-timeout: 60", 10, 1000, 1000, 1),
    ("knot", "tcp-io-timeout: 0", 10, 1000, 1000, 1),
    ("knot", "tcp-max-clients: 5000", 10, 1000, 1000, 1),
    ("knot", "", 10, 1000, 1000, 4),
    ("pigsty-dns", "", 10, 1000, 1000, 1),
    ("pigsty-dns", "", 10, 1000, 4000, 1),
    ("pigsty-dns", "", 10, 1000, 1000, 4),
]


def listen_counters():
    """This namespace's accept-queue overflows and drops since it was made (nstat's absolute values)."""
    out = subprocess.run(["nstat", "-azs", "TcpExtListenOverflows", "TcpExtListenDrops"],
                         capture_output=True, text=True).stdout
    return {k: int(v) for k, v in re.findall(r"^(TcpExt\w+)\s+(\d+)", out, re.M)}


def backlog(port):
    """The listening socket's accept-queue limit (ss shows it as Send-Q)."""
    out = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True).stdout.split()
    return int(out[2]) if len(out) > 2 else None


def run(port, qfile, seconds, clients, inflight, threads):
    # dnsperf opens at most 256 sockets a thread (2.10 cuts -c to that silently): -T 4 for 1,000.
    cmd = ["dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d", qfile, "-l", str(seconds), "-m", "tcp",
           "-c", str(clients), "-T", str(threads), "-q", str(inflight), "-t", "5"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         preexec_fn=lambda: os.sched_setaffinity(0, {bench.CLIENT_CPU}))
    # The connections the server holds, 3 s into the run.
    time.sleep(3)
    held = subprocess.run(["ss", "-tnH", "state", "established", f"sport = :{port}"], capture_output=True,
                          text=True).stdout.count("\n")
    out = p.communicate()[0]

    def num(pat):
        m = re.search(pat, out)
        return float(m.group(1)) if m else None
    timeouts = len(re.findall(r"\[Timeout\]", out))
    return {"cmd": " ".join(cmd), "connections": held, "sent": num(r"Queries sent:\s+(\d+)"), "lost": num(r"Queries lost:\s+(\d+)"),
            "reconnections": num(r"Reconnections:\s+(\d+)"), "timeout_lines": timeouts,
            "qps": num(r"Queries per second:\s+([\d.]+)"), "stats": out[out.find("Statistics:"):][:900]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pigsty", required=True)
    ap.add_argument("--out", default=os.path.join(bench.HERE, "results-tcp-loss.json"))
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="pigsty-bench-tcploss-")
    env = bench.Env(argparse.Namespace(pigsty=args.pigsty, hickory=None, echo=None), work)
    runs = []
    try:
        data = bench.prepare(env, 1000)
        for i, (config, extra, seconds, clients, inflight, threads) in enumerate(CASES):
            port = 15460 + i
            srv = tcp_clients.server(env, config, data, port)
            if extra:
                conf = srv.cmd[-1]
                with open(conf) as f:
                    text = f.read()
                with open(conf, "w") as f:
                    f.write(text.replace("server:\n", f"server:\n  {extra}\n", 1))
            srv.start(os.path.join(work, f"{i}.log"))
            rec = {"config": config, "extra": extra}
            try:
                q, a = data["probe"]
                bench.wait_ready(srv, port, q, a)
                time.sleep(0.2)
                rec["backlog"] = backlog(port)
                before = listen_counters()
                rec.update(run(port, data["queries"], seconds, clients, inflight, threads))
                after = listen_counters()
                rec["listen_overflows"] = {k: after.get(k, 0) - before.get(k, 0) for k in after}
            except Exception as e:  # recorded; the others still run
                rec["error"] = str(e)
            finally:
                srv.stop()
            runs.append(rec)
            bench.log(f"{config} {extra} -l {seconds} -c {clients} -q {inflight} -T {threads}: sent {rec.get('sent')}, "
                      f"lost {rec.get('lost')}, reconnections {rec.get('reconnections')}, "
                      f"timeouts {rec.get('timeout_lines')}, held {rec.get('connections')}, backlog {rec.get('backlog')}, {rec.get('listen_overflows')}")
    finally:
        with open(args.out, "w") as f:
            json.dump({"runs": runs}, f, indent=1)
        shutil.rmtree(work, ignore_errors=True)
    print("| server | dnsperf `-m tcp -t 5` | connections held at 3 s | queries sent | lost | reconnections | listen backlog | "
          "accept-queue overflows | qps |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in runs:
        cmd = ""
        args_ = re.sub(r"-d \S+ ", "", r.get("cmd", "")).replace("dnsperf -s 127.0.0.1 ", "")
        name = r["config"] + (f" ({r['extra']})" if r["extra"] else "")
        if "error" in r:
            print(f"| {name} | {cmd} | error: {r['error']} | | | | | | |")
            continue
        over = r.get("listen_overflows", {}).get("TcpExtListenOverflows")
        print(f"| {name} | `{args_}` | {r.get('connections')} | {r['sent']:,.0f} | {r['lost']:,.0f} | {r['reconnections']:.0f} "
              f"| {r.get('backlog')} | {over} | {r['qps']:,.0f} |")


if __name__ == "__main__":
    main()
