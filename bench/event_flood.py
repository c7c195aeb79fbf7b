#!/usr/bin/env python3
"""A flood of file events against `serve --follow` (issue 33 item 4): N renames of the followed file's
name in the watched directory, then of a stray name in the generations directory, while the server runs.
Per round: the server's peak resident memory (VmHWM) and resident memory after the flood, the CPU
seconds it spent during the flood and in the 3 s after it, the rename rate, and whether it still serves
the serial it served before (the flood renames the same content back and forth, so no new serial)."""
import argparse, json, os, shutil, socket, statistics, subprocess, sys, tempfile, time


def proc_status(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmHWM", "VmRSS"):
                out[k] = int(v.split()[0])  # KiB
    return out


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def soa_serial(port):
    q = bytes.fromhex("abcd01000001000000000000") + b"\x06pigsty\x04test\x00\x00\x06\x00\x01"
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1)
    s.sendto(q, ("127.0.0.1", port))
    r = s.recv(512)
    s.close()
    return int.from_bytes(r[-20:-16], "big")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def one_round(binary, records, events):
    work = tempfile.mkdtemp(prefix="flood-")
    state = os.path.join(work, "state")
    watched = os.path.join(work, "in")
    os.mkdir(watched)
    followed = os.path.join(watched, "host-names.yml")
    shutil.copy(records, followed)
    port = free_port()
    srv = subprocess.Popen(
        [binary, "serve", "--state-dir", state, "--listen", f"127.0.0.1:{port}",
         "--records", followed, "--follow"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                before = soa_serial(port)
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise SystemExit("server did not answer")
        time.sleep(1)
        rss0 = proc_status(srv.pid)["VmRSS"]
        cpu0 = cpu_seconds(srv.pid)
        aside = followed + "-aside"
        stray = [os.path.join(state, "generations", n) for n in ("stray-a", "stray-b")]
        open(stray[0], "w").close()
        t0 = time.monotonic()
        half = events // 2
        for i in range(half // 2):
            os.rename(followed, aside)
            os.rename(aside, followed)
        for i in range(half // 2):
            os.rename(stray[0], stray[1])
            os.rename(stray[1], stray[0])
        flood = time.monotonic() - t0
        cpu1 = cpu_seconds(srv.pid)
        st = proc_status(srv.pid)
        time.sleep(3)
        cpu2 = cpu_seconds(srv.pid)
        after = soa_serial(port)
        return {
            "events": events,
            "renames_per_s": round(events / flood),
            "flood_s": round(flood, 2),
            "rss_before_kib": rss0,
            "rss_after_kib": proc_status(srv.pid)["VmRSS"],
            "hwm_kib": st["VmHWM"],
            "cpu_during_s": round(cpu1 - cpu0, 2),
            "cpu_after_3s": round(cpu2 - cpu1, 2),
            "serial_before": before,
            "serial_after": after,
        }
    finally:
        srv.terminate()
        srv.wait(10)
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pigsty", required=True)
    ap.add_argument("--records", default="zones/pigsty.test.yml")
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    rounds = [one_round(a.pigsty, a.records, a.events) for _ in range(a.rounds)]
    for r in rounds:
        print(json.dumps(r))
    med = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    print("median", json.dumps(med))
    ok = all(r["serial_after"] == r["serial_before"] for r in rounds)
    sys.exit(0 if ok else 1)


main()
