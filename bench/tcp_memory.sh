#!/usr/bin/env bash
# The server's memory per TCP connection, measured while 1,000 connections are open (issue 24); see
# bench/tcp_memory.py.
# Usage (under the shared lock): flock /tmp/pigsty-lab.lock bench/tcp_memory.sh [--rounds 3] [--connections 1000]
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
cargo build --release --locked -q
unshare --net -- bash -c 'ip link set lo up && ulimit -n 20000 && exec python3 "$@"' bench \
  bench/tcp_memory.py --pigsty "$CARGO_TARGET_DIR/release/pigsty-dns" "$@"
