#!/usr/bin/env bash
# 1,000 concurrent TCP clients beside NSD and Knot (issue 24, risk 8); see bench/tcp_clients.py.
# Usage (under the shared lock): flock /tmp/pigsty-lab.lock bench/tcp_clients.sh [--rounds 3] [--seconds 10]
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
cargo build --release --locked -q
unshare --net -- bash -c 'ip link set lo up && ulimit -n 20000 && exec python3 "$@"' bench \
  bench/tcp_clients.py --pigsty "$CARGO_TARGET_DIR/release/pigsty-dns" "$@"
