#!/usr/bin/env bash
# Installs the benchmark's peers and tools from Debian's packages (dnsperf, nsd, knot, bind9, unbound,
# dnsmasq-base, time, gcc) and matplotlib for the chart. The Debian part goes through
# tests/install-peers.sh: idempotent, `apt-get update` only when a package is missing, no service started by
# a package script (policy-rc.d exits 101 during the install), the services disabled afterwards, and nothing
# left listening on port 53.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tests/install-peers.sh dnsperf nsd knot bind9 unbound dnsmasq-base time gcc

python3 -c 'import matplotlib' 2>/dev/null || python3 -m pip install -q matplotlib

for bin in dnsperf nsd knotd named unbound dnsmasq /usr/bin/time gcc; do
  command -v "$bin" >/dev/null || { echo "error: $bin missing after install" >&2; exit 1; }
done
