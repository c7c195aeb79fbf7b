"""load -> live of a 10-name file against a running server, back to back and spaced 200 ms apart (issue 38
item 6: the pass gap made back-to-back loads wait), each binary in turn, interleaved. Medians printed.
Usage: load_gap.py WORK ROUNDS LOADS BIN..."""
import os, statistics, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
import bench  # noqa: E402  (bench/bench.py: names_for, write_yml, Server, query_a)

work, rounds, loads, bins = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
ZONE = bench.ZONE
res = {b: {} for b in bins}
os.sched_setaffinity(0, {bench.CLIENT_CPU})


def wait_answer(port, name, addr, limit=30.0):
    t_end = time.monotonic() + limit
    while time.monotonic() < t_end:
        r = bench.query_a(port, name, timeout=0.05)
        if r is not None and r[0] == 0 and addr in r[1]:
            return time.monotonic()
        time.sleep(0.001)
    raise RuntimeError(f"{name} never answered {addr}")


def load_live(b, yml, state, port, name, addr):
    """Seconds from exec of `load` to the changed name answered."""
    t0 = time.monotonic()
    p = subprocess.Popen([b, "load", yml, "--state-dir", state, "--server", f"127.0.0.1:{port}"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         preexec_fn=lambda: os.sched_setaffinity(0, {bench.CLIENT_CPU}))
    live = wait_answer(port, name, addr) - t0
    err = p.communicate()[1]
    if p.returncode != 0:
        raise RuntimeError(f"load failed: {err!r}")
    return live


def scenario(b, port, rnd):
    d = os.path.join(work, f"{os.path.basename(b)}-{rnd}")
    os.makedirs(d)
    names = bench.names_for(10)
    yml = os.path.join(d, "names.yml")
    bench.write_yml(yml, names)
    state = os.path.join(d, "state")
    subprocess.run([b, "load", yml, "--state-dir", state], check=True, capture_output=True)
    srv = bench.Server([b, "serve", "--listen", f"127.0.0.1:{port}", "--state-dir", state])
    srv.start(os.path.join(d, "serve.log"))
    try:
        last, addr = names[-1]
        wait_answer(port, f"{last}.{ZONE}", addr)
        time.sleep(0.5)
        i = 0
        for kind, pause in (("back-to-back", 0.0), ("200 ms apart", 0.2)):
            for _ in range(loads):
                want = f"10.10.10.{100 + i % 100}"
                y = os.path.join(d, f"c{i % 2}.yml")
                bench.write_yml(y, names, changed=("host-1", want))
                time.sleep(pause)
                res[b].setdefault(f"{kind} load -> live s", []).append(
                    load_live(b, y, state, port, f"host-1.{ZONE}", want))
                i += 1
    finally:
        srv.stop()
        subprocess.run(["rm", "-rf", d])


port = 25400
for rnd in range(rounds):
    for b in (bins if rnd % 2 == 0 else bins[::-1]):
        port += 1
        scenario(b, port, rnd)
        print(f"round {rnd} {b} done, load {os.getloadavg()[0]:.2f}", file=sys.stderr, flush=True)

print("figure | " + " | ".join(bins))
for k in dict.fromkeys(k for b in bins for k in res[b]):
    cells = []
    for b in bins:
        v = res[b].get(k, [])
        cells.append(f"{statistics.median(v) * 1000:.1f} ms (n={len(v)})" if v else "-")
    print(f"{k} | " + " | ".join(cells))
