#!/usr/bin/env bash
# `check` of Pigsty configs (issue 31): wall time and peak RSS of every stock config in
# tests/data/pigsty-conf (meta.yml is read; the HA ones are refused, as they must be) and of a generated
# Pigsty-shaped file of about 100,000 names (an infra entry, 82 three-node PG clusters on .9-.254 with
# their instance and cluster names, and dns_records lines of 405 names for each of the 246 addresses: 99,958 served names);
# then the existing 100,000-name projection of bench/check_load.sh, interleaved with BASE when given.
# Usage: bench/pigsty_check.sh [runs]   (default 5; medians printed)
#   BASE=/path/to/another/pigsty-dns   also measure that binary on the projection (before/after)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
command -v /usr/bin/time >/dev/null || { apt-get update -qq && apt-get install -y -qq time; }
cargo build --release --locked -q
bin=target/release/pigsty-dns
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import sys
d = sys.argv[1]
with open(f"{d}/pigsty.yml", "w") as f:
    f.write("all:\n  children:\n    infra: {hosts: {10.10.10.10: {infra_seq: 1}}}\n")
    addrs = list(range(9, 255))
    for c in range(len(addrs) // 3):
        f.write(f"    pg-c{c}:\n      vars: {{pg_cluster: pg-c{c}}}\n      hosts:\n")
        for s, a in enumerate(addrs[3 * c:3 * c + 3]):
            role = "primary" if s == 0 else "replica"
            f.write(f"        10.10.10.{a}: {{pg_seq: {s + 1}, pg_role: {role}}}\n")
    f.write("  vars:\n    admin_ip: 10.10.10.10\n    dns_records:\n")
    for a in addrs:
        f.write(f"      - '10.10.10.{a} " + " ".join(f"n{a}-{i}" for i in range(405)) + "'\n")
with open(f"{d}/names.yml", "w") as f:
    f.write("all:\n  hosts: {10.10.10.10: {nodename: meta}}\n  vars:\n    vm_hosts:\n")
    for a in range(9, 255):
        f.write(f"      - address: 10.10.10.{a}\n        names:\n")
        for i in range(406):
            f.write(f"          - n{a}-{i}\n")
PY
# One line per file: median wall, median user+sys CPU, median peak RSS, exit code, served names.
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
once() { # key binary file: one run, appended to the key's samples
  local code=0
  /usr/bin/time -f "%e %M %U %S" -o "$work/t" "$2" check "$3" >"$work/out-$1" 2>&1 || code=$?
  read -r s kb u sy < <(tail -n 1 "$work/t")
  echo "$s $((kb / 1024)) $(awk -v u="$u" -v s="$sy" 'BEGIN {print u + s}') $code" >>"$work/samples-$1"
}
show() { # label key
  local f=$work/samples-$2 served
  served=$(sed -n 's/^served (\([0-9]*\)):$/\1/p' "$work/out-$2")
  printf '%-40s wall %5s s  cpu %5s s  rss %4s MiB  exit %s  served %s\n' "$1" \
    "$(cut -d' ' -f1 "$f" | median)" "$(cut -d' ' -f3 "$f" | median)" "$(cut -d' ' -f2 "$f" | median)" \
    "$(tail -n 1 "$f" | cut -d' ' -f4)" "${served:--}"
}
echo "input: pigsty.yml $(wc -c <"$work/pigsty.yml") bytes; names.yml $(wc -c <"$work/names.yml") bytes"
files=(meta.yml ha/trio.yml ha/full.yml ha/dual.yml)
# Interleaved: each round runs every file once, and the projection with each binary in turn.
for _ in $(seq "$runs"); do
  for i in "${!files[@]}"; do once "stock$i" "$bin" "tests/data/pigsty-conf/${files[$i]}"; done
  once pigsty "$bin" "$work/pigsty.yml"
  once proj "$bin" "$work/names.yml"
  [ -z "${BASE:-}" ] || once base "$BASE" "$work/names.yml"
done
for i in "${!files[@]}"; do show "stock ${files[$i]}" "stock$i"; done
show "pigsty-shaped 100k (pigsty.yml)" pigsty
show "projection 100k: this tree" proj
[ -z "${BASE:-}" ] || show "projection 100k: BASE" base
