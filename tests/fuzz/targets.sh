# The fuzz targets and how they are run; sourced by bench/fuzz.sh and .ci/run (from the repository root).
#
# Built with `-s none -a`: no sanitizer (the fuzzed code is safe Rust; AddressSanitizer would halve the
# rate and finds nothing there that Rust's own checks do not) and with debug assertions and overflow
# checks on, so an arithmetic overflow is a finding. The time bound is libFuzzer's -timeout (any input
# slower than that is a finding), the memory bound -rss_limit_mb plus the targets' own exact heap bounds.
# shellcheck shell=bash

FUZZ_DIR=tests/fuzz
FUZZ_TARGETS=(packet tcp_frames check generation)
FUZZ_BUILD=(--fuzz-dir "$FUZZ_DIR" -s none -a)
CARGO_FUZZ_VERSION=0.13.2

# libFuzzer options for TARGET.
fuzz_options() {
  local common=(-timeout=2 -rss_limit_mb=1024)
  case "$1" in
    packet) echo "${common[@]}" -max_len=4096 -dict="$FUZZ_DIR/dict/packet.dict" ;;
    tcp_frames) echo "${common[@]}" -max_len=70000 -dict="$FUZZ_DIR/dict/packet.dict" ;;
    check) echo "${common[@]}" -max_len=16384 -dict="$FUZZ_DIR/dict/check.dict" ;;
    generation) echo "${common[@]}" -max_len=16384 ;;
    *) echo "unknown fuzz target $1" >&2; return 1 ;;
  esac
}

# The committed corpus of TARGET: its seeds and, when there are any, the inputs of past findings.
fuzz_corpus() {
  echo "$FUZZ_DIR/seeds/$1"
  if [ -d "$FUZZ_DIR/regressions/$1" ]; then echo "$FUZZ_DIR/regressions/$1"; fi
}

# Installs cargo-fuzz when it is missing (the nightly toolchain must exist).
fuzz_install() {
  if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
  fi
}

# Runs TARGET with the given corpus dirs and extra libFuzzer options, quietly: the log goes to LOG and one
# summary line is printed; on a finding or any failure the end of the log is printed and it returns 1.
# TMPDIR (where the check target writes its input file) is LOG's directory.
# Usage: fuzz_run TARGET LOG CORPUS... -- OPTION...
fuzz_run() {
  local t=$1 log=$2 corpus=() status
  shift 2
  while [ $# -gt 0 ] && [ "$1" != -- ]; do corpus+=("$1"); shift; done
  shift
  # shellcheck disable=SC2046  # the option list splits into words on purpose
  if ! TMPDIR=$(dirname "$log") cargo +nightly fuzz run "${FUZZ_BUILD[@]}" "$t" "${corpus[@]}" -- \
    $(fuzz_options "$t") "$@" >"$log" 2>&1; then
    grep -av '^#[0-9]' "$log" | tail -40
    echo "fuzz $t: FAILED (log: $log; the input is under $FUZZ_DIR/artifacts/$t/)"
    return 1
  fi
  status=$(grep -aE '^#[0-9]+' "$log" | tail -1 | sed -E 's/^#([0-9]+)[[:space:]]+[A-Z]+[[:space:]]+/\1 runs, /; s/ lim: .*//' || true)
  echo "fuzz $t $*: $status"
}
