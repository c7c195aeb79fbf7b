#!/usr/bin/env python3
"""Two binaries interleaved at 100,000 names (issue 37's RSS target): per round and binary (order
alternating), scale.py's own server block — start, RSS after start, a changed file live while idle and
while dnsperf loads the server — then its swaps block (RSS after 3 swaps, each confirmed live). Medians and
every run printed; every figure written to OUT (JSON). Run it as scale.py runs, in a private namespace:

  flock /tmp/pigsty-lab.lock unshare --net -- bash -c 'ip link set lo up && exec python3 "$@"' x \
      bench/swap_compare.py NAME=BIN NAME=BIN [ROUNDS] [OUT]
"""
import json, os, shutil, statistics, sys, tempfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench, scale  # noqa: E402

def main():
    bins = [tuple(x.split("=", 1)) for x in sys.argv[1:3]]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    out_path = sys.argv[4] if len(sys.argv) > 4 else "swap_compare.json"
    class A:  # the options bench.Env and scale's blocks read
        hickory = echo = pigsty_alt = None
        load_seconds = 6
    work = tempfile.mkdtemp(prefix="pigsty-swapcmp-")
    runs = []
    try:
        datas = {}
        for name, b in bins:
            a = A(); a.pigsty = b
            env = bench.Env(a, os.path.join(work, name)); os.makedirs(env.work)
            data = bench.prepare(env, scale.BIG)
            datas[name] = (env, data, scale.Changes(data))
        for rnd in range(1, rounds + 1):
            for name, _ in (bins if rnd % 2 else bins[::-1]):
                env, data, ch = datas[name]
                rec = scale.pigsty_block(env, data, ch, rnd, True)
                rec.update(scale.swaps_block(env, data, ch, 3, 60))
                rec["name"], rec["load"] = name, bench.loadavg()
                runs.append(rec)
                bench.log(f"{name} r{rnd}: live {rec['live_s'] * 1000:.0f} ms, busy {rec['busy_live_s'] * 1000:.0f} ms "
                          f"(lost {rec.get('busy_lost')}), RSS {rec['rss_start_mib']:.2f} -> {rec['rss_after_mib']:.2f} MiB, "
                          f"load {rec['load']:.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for name, _ in bins:
        mine = [r for r in runs if r["name"] == name]
        med = lambda k, f=1: statistics.median(r[k] * f for r in mine)
        print(f"{name}: median of {len(mine)}: live idle {med('live_s', 1000):.0f} ms, under dnsperf "
              f"{med('busy_live_s', 1000):.0f} ms; RSS after start {med('rss_start_mib'):.2f} MiB, after 3 swaps "
              f"{med('rss_after_mib'):.2f} MiB (max {max(r['rss_after_mib'] for r in mine):.2f})")
    json.dump(runs, open(out_path, "w"), indent=1, default=str)

main()
