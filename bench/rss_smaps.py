#!/usr/bin/env python3
"""Where `serve`'s memory is at 100,000 names, two binaries interleaved (issue 37): per round and binary (order
alternating), a server on a fresh state dir its own `load` wrote, 3 swaps confirmed live (scale.py's
`load --require-live`), and /proc/PID/smaps_rollup plus the mappings grouped (anonymous, the binary, each
library) 0.3 s after start and after the swaps. Uses bench.py's and scale.py's servers and pinning. Prints a
line per run to stderr and writes every figure to OUT (JSON). Run it as serve_compare.py runs:

  flock /tmp/pigsty-lab.lock unshare --net -- bash -c 'ip link set lo up && exec python3 "$@"' x \
      bench/rss_smaps.py NAME=BIN NAME=BIN [ROUNDS] [OUT]
"""
import os, sys, json, shutil, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench, scale

def smaps(pid):
    roll = {}
    for line in open(f"/proc/{pid}/smaps_rollup"):
        p = line.split()
        if len(p) >= 3 and p[-1] == "kB":
            roll[p[0].rstrip(":")] = int(p[1])
    maps, cur = [], None
    for line in open(f"/proc/{pid}/smaps"):
        p = line.split()
        if "-" in p[0] and len(p) >= 5 and not p[0].endswith(":"):
            cur = {"range": p[0], "name": p[5] if len(p) > 5 else "[anon]"}
            maps.append(cur)
        elif p[0] in ("Rss:", "Anonymous:", "Private_Dirty:", "Shared_Clean:", "Private_Clean:"):
            cur[p[0].rstrip(":")] = int(p[1])
    by = {}
    for m in maps:
        n = m["name"]
        key = "pigsty-dns binary" if n.endswith("pigsty-dns") else ("[anon]" if n == "[anon]" else n if n.startswith("[") else ("generation files" if "/generations/" in n else os.path.basename(n)))
        b = by.setdefault(key, {"Rss": 0, "Anonymous": 0, "n": 0})
        b["Rss"] += m.get("Rss", 0); b["Anonymous"] += m.get("Anonymous", 0); b["n"] += 1
    big = sorted(maps, key=lambda m: -m.get("Rss", 0))[:6]
    return roll, by, [(m["name"], m["range"], m.get("Rss"), m.get("Anonymous")) for m in big]

def main():
    bins = [tuple(x.split("=", 1)) for x in sys.argv[1:3]]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    out_path = sys.argv[4] if len(sys.argv) > 4 else "rss_smaps.json"
    class A: pass
    out = []
    work = tempfile.mkdtemp(prefix="pigsty-rss-")
    try:
        datas = {}
        for name, b in bins:
            a = A(); a.pigsty = b; a.hickory = None; a.echo = None; a.pigsty_alt = None
            env = bench.Env(a, os.path.join(work, name)); os.makedirs(env.work)
            datas[name] = (env, bench.prepare(env, 100_000))
        for rnd in range(1, rounds + 1):
            order = bins if rnd % 2 else bins[::-1]
            for name, b in order:
                env, data = datas[name]
                ch = scale.Changes(data)
                port = scale.PORTS["pigsty-dns"]
                srv = bench.make_server(env, "pigsty-dns", data, port)
                srv.start(os.path.join(data["dir"], "rss.log"))
                try:
                    bench.wait_ready(srv, port, *data["probe"])
                    time.sleep(0.3)
                    pid = srv.main_pid()
                    r0 = smaps(pid)
                    for _ in range(3):
                        scale.pigsty_load_live(env, data, ch, port)
                    time.sleep(0.3)
                    r3 = smaps(pid)
                    threads = len(os.listdir(f"/proc/{pid}/task"))
                finally:
                    srv.stop()
                rec = {"name": name, "round": rnd, "start": r0, "after3": r3, "threads": threads, "load": bench.loadavg()}
                out.append(rec)
                bench.log(f"{name} r{rnd}: Rss {r0[0]['Rss']} -> {r3[0]['Rss']} kB, anon {r0[0].get('Anonymous')} -> {r3[0].get('Anonymous')}, threads {threads}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    json.dump(out, open(out_path, "w"), indent=1)

main()
