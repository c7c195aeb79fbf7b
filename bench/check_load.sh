#!/usr/bin/env bash
# Wall time and peak RSS of `check` and `load` on a generated 100,000-name host-names.yml.
# Usage: bench/check_load.sh [runs]   (default 5; check and load are interleaved, medians printed)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
command -v /usr/bin/time >/dev/null || { apt-get update -qq && apt-get install -y -qq time; }
cargo build --release --locked -q
bin=target/release/pigsty-dns
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
measure() { /usr/bin/time -f "%e %M" -o "$work/t" "$@" >/dev/null; cat "$work/t"; }
: >"$work/check"; : >"$work/load"
for i in $(seq "$runs"); do
  measure "$bin" check "$work/names.yml" >>"$work/check"
  rm -rf "$work/state"
  measure "$bin" load "$work/names.yml" --state-dir "$work/state" >>"$work/load"
done
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
for c in check load; do
  s=$(cut -d' ' -f1 "$work/$c" | median)
  kb=$(cut -d' ' -f2 "$work/$c" | median)
  echo "$c: median wall ${s} s, median peak RSS $((kb / 1024)) MiB over $runs runs (all: $(cut -d' ' -f1 "$work/$c" | tr '\n' ' '))"
done
