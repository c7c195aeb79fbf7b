#!/usr/bin/env bash
# Runs each fuzz target (tests/fuzz) for TIME seconds, one after another, and records executions, coverage
# and findings in bench/RESULTS.md (the section between the fuzz.sh markers is replaced).
#
# Usage: bench/fuzz.sh TIME [TARGET=SECONDS ...]     e.g. bench/fuzz.sh 180 packet=300
#
# One fuzzer at a time: the machine has 2 shared cores. Working corpora grow under bench/.cache/fuzz/ (not
# committed; delete it for a cold start from the committed seeds); findings are written by libFuzzer to
# tests/fuzz/artifacts/TARGET/. Exits 1 when any target has a finding.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=../tests/fuzz/targets.sh
source tests/fuzz/targets.sh

time=${1:?usage: bench/fuzz.sh TIME [TARGET=SECONDS ...]}
shift
declare -A secs
for t in "${FUZZ_TARGETS[@]}"; do secs[$t]=$time; done
for o in "$@"; do
  t=${o%%=*}
  [ -n "${secs[$t]+x}" ] || { echo "error: no fuzz target $t (targets: ${FUZZ_TARGETS[*]})" >&2; exit 2; }
  secs[$t]=${o#*=}
done

fuzz_install
cache=bench/.cache/fuzz
mkdir -p "$cache/tmp"
cargo +nightly fuzz build "${FUZZ_BUILD[@]}" >"$cache/build.log" 2>&1 || { tail -30 "$cache/build.log"; exit 1; }

# 12345678 -> 12,345,678
fmt() { sed -E ':a;s/^([0-9]+)([0-9]{3})/\1,\2/;ta' <<<"${1:-?}"; }

started=$(date -u '+%Y-%m-%d %H:%M UTC')
load=$(cut -d' ' -f1-3 /proc/loadavg)
rows=()
found=0
for t in "${FUZZ_TARGETS[@]}"; do
  mkdir -p "$cache/corpus/$t" "$FUZZ_DIR/artifacts/$t"
  before=$(find "$FUZZ_DIR/artifacts/$t" -type f | sort)
  log=$cache/$t.log
  echo "fuzzing $t for ${secs[$t]} s (log: $log)"
  t0=$(date +%s)
  # shellcheck disable=SC2046  # word splitting of the option and corpus lists is intended
  # The check target writes its input to a file under TMPDIR: keep that inside the cache.
  if TMPDIR="$PWD/$cache/tmp" cargo +nightly fuzz run "${FUZZ_BUILD[@]}" "$t" "$cache/corpus/$t" $(fuzz_corpus "$t") -- \
    $(fuzz_options "$t") -max_total_time="${secs[$t]}" -print_final_stats=1 >"$log" 2>&1; then
    ok=1
  else
    ok=0
  fi
  ran=$(($(date +%s) - t0))
  status=$(grep -aE '^#[0-9]+' "$log" | tail -1)
  execs=$(grep -a 'stat::number_of_executed_units' "$log" | awk '{print $2}' | tail -1)
  execs=${execs:-$(sed -E 's/^#([0-9]+).*/\1/' <<<"$status")}
  rate=$(grep -a 'stat::average_exec_per_sec' "$log" | awk '{print $2}' | tail -1)
  cov=$(sed -nE 's/.* cov: ([0-9]+) .*/\1/p' <<<"$status")
  ft=$(sed -nE 's/.* ft: ([0-9]+) .*/\1/p' <<<"$status")
  corp=$(sed -nE 's/.* corp: ([0-9]+)\/.*/\1/p' <<<"$status")
  slow=$(grep -a 'stat::slowest_unit_time_sec' "$log" | awk '{print $2}' | tail -1)
  rss=$(grep -a 'stat::peak_rss_mb' "$log" | awk '{print $2}' | tail -1)
  new=$(comm -13 <(echo "$before") <(find "$FUZZ_DIR/artifacts/$t" -type f | sort) | grep -c . || true)
  if [ "$ok" = 0 ] || [ "$new" -gt 0 ]; then
    found=1
    what="**$new** ($(comm -13 <(echo "$before") <(find "$FUZZ_DIR/artifacts/$t" -type f | sort) | xargs -r -n1 basename | tr '\n' ' '| sed 's/ $//'))"
    [ "$new" -gt 0 ] || what="**run failed** (see $log)"
  else
    what=0
  fi
  rows+=("| \`$t\` | $ran | $(fmt "$execs") | $(fmt "$rate") | ${cov:-?} / ${ft:-?} | $(fmt "$corp") | $([ "${slow:-}" = 0 ] && echo "< 1" || echo "${slow:-?}") s | ${rss:-?} MB | $what |")
  echo "  $t: ${execs:-?} executions, cov ${cov:-?}, ft ${ft:-?}, findings: $what"
done

seeds=""
for t in "${FUZZ_TARGETS[@]}"; do
  n=0
  for d in $(fuzz_corpus "$t"); do n=$((n + $(find "$d" -type f | wc -l))); done
  seeds+="${seeds:+, }\`$t\` $n"
done
commit=$(git rev-parse --short HEAD)
[ -z "$(git status --porcelain -- src tests)" ] || commit="$commit with uncommitted changes"
cpu=$(lscpu | sed -nE 's/^Model name: *//p' | head -1)
mem=$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)
args="$time${*:+ $*}"
section=$(cat <<MD
<!-- fuzz.sh:begin -->
\`bench/fuzz.sh $args\`, $started, commit $commit. Machine: $cpu, $(nproc) cores (shared; load average
$load at the start), $mem; $(rustc +nightly --version), cargo-fuzz $CARGO_FUZZ_VERSION, targets built
\`${FUZZ_BUILD[*]}\` (no sanitizer; debug assertions and overflow checks on). One target at a time, each from
the committed corpus (seeds and past findings: $seeds inputs) plus the working corpus in \`bench/.cache/fuzz\`.

| target | seconds | executions | exec/s | coverage (cov / ft) | corpus after | slowest input | peak RSS | findings |
|---|---|---|---|---|---|---|---|---|
$(printf '%s\n' "${rows[@]}")

\`cov\` is libFuzzer's count of covered edges (every instrumented crate: ours, hickory-proto, saphyr-parser,
serde_json...), \`ft\` its count of features (edges with hit counts); "slowest input" is the longest single run
(the limit is \`-timeout=2\`); options per target in \`tests/fuzz/targets.sh\`.
<!-- fuzz.sh:end -->
MD
)
python3 - "$section" <<'PY'
import re, sys
path = "bench/RESULTS.md"
text = open(path).read()
section = sys.argv[1]
pattern = re.compile(r"<!-- fuzz\.sh:begin -->.*?<!-- fuzz\.sh:end -->", re.S)
if pattern.search(text):
    text = pattern.sub(lambda _: section, text)
else:
    text = text.rstrip("\n") + "\n\n## Fuzzing (`bench/fuzz.sh`)\n\n" + section + "\n"
open(path, "w").write(text)
PY
echo "recorded in bench/RESULTS.md"
exit "$found"
