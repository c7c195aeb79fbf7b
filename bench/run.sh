#!/usr/bin/env bash
# The peer benchmark (issues 3 and 4): pigsty-dns, NSD, Knot, BIND, Unbound, dnsmasq, stock hickory-dns 0.26.3
# and an echo responder (the floor of the loopback path), 100 / 1,000 / 100,000 names, UDP and TCP, pinned
# (servers on CPU 0 with one worker each, dnsperf on CPU 1), interleaved, medians.
#
# Usage: bench/run.sh [bench.py options]   e.g. --servers pigsty-dns,nsd --sizes 1000,100000 --rounds 5
# Writes bench/results.json (every sample), bench/results.png (chart) and the generated section of
# bench/RESULTS.md. Needs root (apt-get, a private network namespace). Builds only what is missing or stale:
# the release binary (cargo), the echo responder (gcc) and hickory-dns (cargo install, cached in bench/.cache).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cache=$root/bench/.cache
mkdir -p "$cache"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}

bench/install.sh

cargo build --release --locked -q
pigsty=$CARGO_TARGET_DIR/release/pigsty-dns

if [ ! -x "$cache/echo" ] || [ bench/echo.c -nt "$cache/echo" ]; then
  gcc -O2 -Wall -o "$cache/echo" bench/echo.c
fi

hickory=$cache/hickory/bin/hickory-dns
if [ ! -x "$hickory" ]; then
  echo "building stock hickory-dns 0.26.3 (about 3 minutes, once)" >&2
  CARGO_TARGET_DIR=$cache/hickory-target cargo install hickory-dns --version 0.26.3 --locked --root "$cache/hickory" -q
  rm -rf "$cache/hickory-target"
fi

# A private network namespace whose only interface is loopback: no traffic can leave it and no port
# of anybody else's is in the way. Every server is bounded and killed by bench.py.
start=$(date +%s)
unshare --net -- bash -c 'ip link set lo up && exec python3 "$@"' bench \
  bench/bench.py --pigsty "$pigsty" --hickory "$hickory" --echo "$cache/echo" "$@"
python3 bench/report.py bench/results.json
echo "bench/run.sh: $(($(date +%s) - start)) s of measuring; see bench/RESULTS.md and bench/results.png" >&2
