"""Change path figures for each binary, interleaved: generation size, serve start -> first answer, RSS after
start, load -> changed name answered (server idle) and load's own wall time at 100,000 and 10 names, RSS
after 1 and after SWAPS swaps. Medians printed. Usage: change_path.py WORK ROUNDS SWAPS BIN..."""
import os, statistics, subprocess, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(sys.argv[0])), ""))
import bench  # noqa: E402  (bench/bench.py: names_for, write_yml, Server, query_a)

work, rounds, swaps, bins = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
ZONE = bench.ZONE
res = {b: {} for b in bins}
def add(b, k, v):
    res[b].setdefault(k, []).append(v)

def rss_kib(srv):
    return srv.rss_kib()[0]

# The poller shares the client core with `load`, and asks every 2 ms, so it does not take a core of its own.
os.sched_setaffinity(0, {bench.CLIENT_CPU})


def wait_answer(port, name, addr, limit=30.0):
    t_end = time.monotonic() + limit
    while time.monotonic() < t_end:
        r = bench.query_a(port, name, timeout=0.05)
        if r is not None and r[0] == 0 and addr in r[1]:
            return time.monotonic()
        time.sleep(0.002)
    raise RuntimeError(f"{name} never answered {addr}")

def load_live(b, yml, state, port, name, addr):
    """Seconds from exec of `load` to the changed name answered, and load's own wall time."""
    t0 = time.monotonic()
    p = subprocess.Popen([b, "load", yml, "--state-dir", state, "--server", f"127.0.0.1:{port}",
                          "--require-live"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         preexec_fn=lambda: os.sched_setaffinity(0, {bench.CLIENT_CPU}))
    t_live = wait_answer(port, name, addr) - t0
    out = p.communicate()[0]
    wall = time.monotonic() - t0
    if p.returncode != 0:
        raise RuntimeError(f"load failed: {out!r}")
    return t_live, wall

def scenario(b, n, tag, port, rnd, changes, swaps_here):
    d = os.path.join(work, f"{tag}-{os.path.basename(b)}-{rnd}")
    os.makedirs(d)
    names = bench.names_for(n)
    yml = os.path.join(d, "names.yml")
    bench.write_yml(yml, names)
    state = os.path.join(d, "state")
    subprocess.run([b, "load", yml, "--state-dir", state], check=True, capture_output=True)
    gen = os.listdir(os.path.join(state, "generations"))[0]
    add(b, f"{tag} generation bytes", os.path.getsize(os.path.join(state, "generations", gen)))
    srv = bench.Server([b, "serve", "--listen", f"127.0.0.1:{port}", "--state-dir", state])
    srv.start(os.path.join(d, "serve.log"))
    try:
        last, addr = names[-1]
        add(b, f"{tag} serve start -> first answer s", wait_answer(port, f"{last}.{ZONE}", addr) - srv.t0)
        time.sleep(0.5)
        add(b, f"{tag} RSS after start KiB", rss_kib(srv))
        for i in range(changes + swaps_here):
            want = f"10.10.10.{100 + (i + rnd) % 100}"
            y = os.path.join(d, f"c{i % 2}.yml")
            bench.write_yml(y, names, changed=("host-1", want))
            live, wall = load_live(b, y, state, port, f"host-1.{ZONE}", want)
            if i < changes:
                add(b, f"{tag} load -> changed name answered s", live)
                add(b, f"{tag} load wall s", wall)
            if swaps_here and i == changes:
                time.sleep(0.3)
                add(b, f"{tag} RSS after 1 swap KiB", rss_kib(srv))
        if swaps_here:
            time.sleep(0.3)
            add(b, f"{tag} RSS after {swaps_here + changes} swaps KiB", rss_kib(srv))
    finally:
        srv.stop()
        subprocess.run(["rm", "-rf", d])

port = 25300
for rnd in range(rounds):
    order = bins if rnd % 2 == 0 else bins[::-1]
    for b in order:
        port += 1
        scenario(b, 10, "10 names", port, rnd, 7, 0)
        port += 1
        scenario(b, 100_000, "100k names", port, rnd, 3, swaps if rnd == rounds - 1 else 0)
        print(f"round {rnd} {b} done, load {os.getloadavg()[0]:.2f}", file=sys.stderr, flush=True)

keys = list(dict.fromkeys(k for b in bins for k in res[b]))
print("figure | " + " | ".join(bins))
for k in keys:
    cells = []
    for b in bins:
        v = res[b].get(k, [])
        m = statistics.median(v) if v else float("nan")
        cells.append(f"{m:.3f} (n={len(v)})" if k.endswith(" s") else f"{m:.0f} (n={len(v)})")
    print(f"{k} | " + " | ".join(cells))
