#!/usr/bin/env bash
# Installs the benchmark's peers and tools from Debian's packages (dnsperf, nsd, knot, bind9, unbound,
# dnsmasq-base, time) and matplotlib for the chart.
#
# Idempotent: does nothing when all packages are present; runs `apt-get update` only when one is missing.
# On a machine without systemd as PID 1 the maintainer scripts of nsd/knot/bind9/unbound would start them on
# port 53 through their init scripts, so the install runs under a /usr/sbin/policy-rc.d that exits 101; an
# existing policy-rc.d is put back afterwards, a missing one is removed again. Afterwards the services are
# disabled and the script checks that nothing of theirs is running or listening on port 53.
# (Approach copied from tests/install-peers.sh of the conformance work.)
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

pkgs=(dnsperf nsd knot bind9 unbound dnsmasq-base time gcc)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  policy=/usr/sbin/policy-rc.d
  backup=""
  if [ -e "$policy" ]; then
    backup="$(mktemp /usr/sbin/policy-rc.d.pigsty-bench.XXXXXX)"
    cp -p "$policy" "$backup"
  fi
  restore() {
    if [ -n "$backup" ]; then mv -f "$backup" "$policy"; else rm -f "$policy"; fi
  }
  trap restore EXIT
  printf '#!/bin/sh\n# pigsty-dns bench/install.sh: no service starts during package installs.\nexit 101\n' >"$policy"
  chmod 0755 "$policy"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
  restore
  trap - EXIT
fi

for svc in knot nsd named bind9 unbound dnsmasq; do
  if command -v deb-systemd-helper >/dev/null 2>&1; then
    deb-systemd-helper disable "$svc.service" >/dev/null 2>&1 || true
  fi
  if [ -e "/etc/init.d/$svc" ] && command -v update-rc.d >/dev/null 2>&1; then
    update-rc.d "$svc" disable >/dev/null 2>&1 || true
  fi
done

# A daemon started by a package script right now would hold port 53. Checked by exact process name, and only
# after this script installed something: other users' own instances on other ports are none of our business.
for daemon in knotd nsd named unbound dnsmasq; do
  [ ${#missing[@]} -gt 0 ] || break
  if pgrep -x "$daemon" >/dev/null 2>&1; then
    echo "error: a $daemon process is running after the install (pids: $(pgrep -x "$daemon" | tr '\n' ' '))" >&2
    echo "next: stop it (it may hold port 53), then run this script again" >&2
    exit 1
  fi
done
if command -v ss >/dev/null 2>&1 && ss -lntu 2>/dev/null | awk '{print $5}' | grep -Eq '[:.]53$'; then
  echo "error: something listens on port 53 after the install" >&2
  echo "next: check 'ss -lntup' and stop the service that holds it" >&2
  exit 1
fi

python3 -c 'import matplotlib' 2>/dev/null || python3 -m pip install -q matplotlib

for bin in dnsperf nsd knotd named unbound dnsmasq /usr/bin/time gcc; do
  command -v "$bin" >/dev/null || { echo "error: $bin missing after install" >&2; exit 1; }
done
