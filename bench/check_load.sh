#!/usr/bin/env bash
# Wall time, CPU time and peak RSS of `check` and `load` on a generated 100,000-name host-names.yml, and the
# size of the generation `load` writes; then (bench/change_path.py) the change path of a running server.
# Usage: bench/check_load.sh [runs]   (default 5; check and load are interleaved, medians printed)
#   BASE=/path/to/another/pigsty-dns  also measure that binary, interleaved with this tree's (before/after)
#   SWAPS=100                         loads into the 100,000-name server before its last RSS reading
#   ROUNDS=3                          rounds of bench/change_path.py (0: skip it)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
command -v /usr/bin/time >/dev/null || { apt-get update -qq && apt-get install -y -qq time; }
cargo build --release --locked -q
bins=(target/release/pigsty-dns ${BASE:+"$BASE"})
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# 246 addresses (.9-.254) x 406 names + the node name = 99,877 served names.
python3 - "$work/names.yml" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("all:\n  hosts: {10.10.10.10: {nodename: meta}}\n  vars:\n    vm_hosts:\n")
    for a in range(9, 255):
        f.write(f"      - address: 10.10.10.{a}\n        names:\n")
        for i in range(406):
            f.write(f"          - n{a}-{i}\n")
PY
echo "input: $(wc -c <"$work/names.yml") bytes, $(grep -c ' - n' "$work/names.yml") vm_hosts names"
measure() { /usr/bin/time -f "%e %M %U %S" -o "$work/t" "$@" >/dev/null; cat "$work/t"; }
for b in "${bins[@]}"; do
  k=$(echo "$b" | md5sum | cut -c1-8)
  : >"$work/check-$k"; : >"$work/load-$k"
done
for i in $(seq "$runs"); do
  for b in "${bins[@]}"; do
    k=$(echo "$b" | md5sum | cut -c1-8)
    measure "$b" check "$work/names.yml" >>"$work/check-$k"
    rm -rf "$work/state"
    measure "$b" load "$work/names.yml" --state-dir "$work/state" >>"$work/load-$k"
    echo "$b: generation $(stat -c %s "$work"/state/generations/gen-*) bytes" >"$work/size-$k"
  done
done
bin=${bins[0]}
# Hostile files must be refused quickly and in bounded memory: an alias bomb (10 levels of 10 aliases),
# 4 MiB of one-character flow-list items (the most values per byte), and 10,000 nested lists.
python3 - "$work" <<'PY'
import sys
d = sys.argv[1]
s = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
for i in range(1, 10):
    s += f"a{i}: &a{i} [" + ", ".join([f"*a{i-1}"] * 10) + "]\n"
open(f"{d}/laughs.yml", "w").write(s + "all:\n  hosts: {10.10.10.10: {}}\n")
head = "all:\n  hosts: {10.10.10.10: {}}\n  vars: {pad: ["
n = (4 * 1024 * 1024 - len(head) - 10) // 2
open(f"{d}/wide.yml", "w").write(head + ",".join(["a"] * n) + "]}\n")
open(f"{d}/deep.yml", "w").write("all:\n  hosts: {10.10.10.10: {x: " + "[" * 10000 + "]" * 10000 + "}}\n")
PY
for h in laughs wide deep; do
  /usr/bin/time -f "%e %M" -o "$work/t" "$bin" check "$work/$h.yml" >/dev/null 2>&1 && { echo "error: $h.yml was accepted" >&2; exit 1; }
  read -r s kb < <(tail -n 1 "$work/t")
  echo "hostile $h.yml ($(wc -c <"$work/$h.yml") bytes): refused (exit 8) in ${s} s, peak RSS $((kb / 1024)) MiB"
done
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for b in "${bins[@]}"; do
  k=$(echo "$b" | md5sum | cut -c1-8)
  [ -f "$work/size-$k" ] || continue
  cat "$work/size-$k"
  for c in check load; do
    f="$work/$c-$k"
    s=$(cut -d' ' -f1 "$f" | median)
    kb=$(cut -d' ' -f2 "$f" | median)
    cpu=$(awk '{print $3 + $4}' "$f" | median)
    echo "$b $c: median wall ${s} s, CPU (user+sys) ${cpu} s, peak RSS $((kb / 1024)) MiB over $runs runs (wall: $(cut -d' ' -f1 "$f" | tr '\n' ' '))"
  done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "${ROUNDS:-3}" -gt 0 ]; then
  python3 bench/change_path.py "$work" "${ROUNDS:-3}" "${SWAPS:-100}" "${bins[@]}"
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
