#!/usr/bin/env bash
# load -> live of a 10-name file, back to back and 200 ms apart (issue 38 item 6); see bench/load_gap.py.
# Usage: bench/load_gap.sh [ROUNDS] [LOADS] [BIN...]   (default: 5 rounds of 10 loads each way, this tree's
# release build; give a second binary to compare, e.g. a build from before the pass budget)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
loads=${2:-10}
shift $(( $# > 2 ? 2 : $# ))
if [ $# -eq 0 ]; then
  export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
  cargo build --release --locked -q
  set -- "$CARGO_TARGET_DIR/release/pigsty-dns"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 bench/load_gap.py "$work" "$rounds" "$loads" "$@"
