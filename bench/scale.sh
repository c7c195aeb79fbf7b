#!/usr/bin/env bash
# Issue 13's whole table in one command: time to get a changed file live (100,000 and 10 names, idle and
# under dnsperf), `serve` start time, RSS after start and across swaps, `check`/`load` time, generation
# size and UDP CPU per query against the echo floor, with NSD (`nsd-control reload`) and Knot
# (`knotc zone-reload`) time-to-new-serial at 100,000 names in the same run. Prints the table (figure,
# measured, target, met/missed) and appends it to bench/RESULTS.md ("Scale (issue 13)").
#
# Usage: bench/scale.sh [--quick] [--rounds N] [--swaps N] [--swap-budget S] [--udp-seconds S] [--no-append]
# Defaults: 3 interleaved rounds and 100 swaps (bounded by --swap-budget, 240 s): about 5 to 8 minutes on the
# 2-core machine; --quick is 1 round, 10 swaps, 2 s UDP runs. Needs root (apt-get, a private network
# namespace); uses only the CLI, so it measures whatever tree it is run in.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cache=$root/bench/.cache
mkdir -p "$cache"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}

# The peers and tools this needs (not bench/install.sh's whole list): idempotent, see tests/install-peers.sh.
bash tests/install-peers.sh dnsperf nsd knot gcc
for bin in dnsperf nsd nsd-control knotd knotc gcc; do
  command -v "$bin" >/dev/null || { echo "error: $bin missing after install" >&2; exit 1; }
done

cargo build --release --locked -q
pigsty=$CARGO_TARGET_DIR/release/pigsty-dns

if [ ! -x "$cache/echo" ] || [ bench/echo.c -nt "$cache/echo" ]; then
  gcc -O2 -Wall -o "$cache/echo" bench/echo.c
fi

tree="$(git rev-parse --abbrev-ref HEAD 2>/dev/null || echo '?') $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then tree="$tree (with uncommitted changes)"; fi
command="bench/scale.sh${*:+ $*}"

# A private network namespace whose only interface is loopback, as in bench/run.sh.
start=$(date +%s)
unshare --net -- bash -c 'ip link set lo up && exec python3 "$@"' scale \
  bench/scale.py --pigsty "$pigsty" --echo "$cache/echo" --command "$command" --tree "$tree" "$@"
echo "bench/scale.sh: $(($(date +%s) - start)) s" >&2
