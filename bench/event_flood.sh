#!/usr/bin/env bash
# A flood of 10^6 file events against `serve --follow` (issue 33 item 4); see bench/event_flood.py.
# Usage: bench/event_flood.sh [--rounds 3] [--events 1000000]   (PIGSTY_DNS_BIN: a built binary to measure)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${PIGSTY_DNS_BIN:-}" ]; then
  export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
  cargo build --release --locked -q
  PIGSTY_DNS_BIN=$CARGO_TARGET_DIR/release/pigsty-dns
fi
exec python3 bench/event_flood.py --pigsty "$PIGSTY_DNS_BIN" "$@"
