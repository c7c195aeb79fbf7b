#!/usr/bin/env bash
# Where dnsperf -m tcp -c 1000 loses queries against Knot (issue 24); see
# bench/tcp_loss.py.
# Usage (under the shared lock): flock /tmp/pigsty-lab.lock bench/tcp_loss.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
cargo build --release --locked -q
unshare --net -- bash -c 'ip link set lo up && ulimit -n 20000 && exec python3 "$@"' bench \
  bench/tcp_loss.py --pigsty "$CARGO_TARGET_DIR/release/pigsty-dns" "$@"
