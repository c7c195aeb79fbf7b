#!/usr/bin/env bash
# Installs the reference servers for tests/differential.rs (Knot, NSD, kdig) and the secondaries of
# tests/it/transfer.rs (Knot, NSD, BIND's named) from Debian's packages, or
# the packages named as arguments (bench/install.sh installs its peers through this script).
#
# Usage: tests/install-peers.sh [PACKAGE...]   (default: knot nsd knot-dnsutils bind9)
#
# Idempotent: does nothing when all packages are present, and runs `apt-get update` only when one is missing.
# On a machine without systemd as PID 1 the packages' maintainer scripts would start knotd/nsd on port 53
# through their init scripts, so the install runs under a /usr/sbin/policy-rc.d that exits 101 ("action
# forbidden"); an existing policy-rc.d is put back afterwards, a missing one is removed again. Afterwards
# the services are disabled and the script checks that nothing of theirs is running or listening.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

default=(knot nsd knot-dnsutils bind9)
if [ $# -gt 0 ]; then pkgs=("$@"); else pkgs=("${default[@]}"); fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  policy=/usr/sbin/policy-rc.d
  backup=""
  if [ -e "$policy" ]; then
    backup="$(mktemp /usr/sbin/policy-rc.d.pigsty.XXXXXX)"
    cp -p "$policy" "$backup"
  fi
  restore() {
    if [ -n "$backup" ]; then
      mv -f "$backup" "$policy"
    else
      rm -f "$policy"
    fi
  }
  trap restore EXIT
  printf '#!/bin/sh\n# pigsty-dns tests/install-peers.sh: no service starts during package installs.\nexit 101\n' >"$policy"
  chmod 0755 "$policy"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
  restore
  trap - EXIT
fi

# Never left enabled: the tests start their own instances on loopback ports.
for svc in knot nsd named bind9 unbound dnsmasq; do
  if command -v deb-systemd-helper >/dev/null 2>&1; then
    deb-systemd-helper disable "$svc.service" >/dev/null 2>&1 || true
  fi
  if [ -e "/etc/init.d/$svc" ] && command -v update-rc.d >/dev/null 2>&1; then
    update-rc.d "$svc" disable >/dev/null 2>&1 || true
  fi
done

# Nothing left running or listening from a package script (a started daemon would hold port 53). Other
# knotd/nsd instances on this machine (the tests' and benchmarks' own, on high loopback ports) are fine,
# so this looks at the packaged services' pid files and at port 53 only. Nothing is killed here.
for pidfile in /run/knot/knot.pid /run/nsd/nsd.pid /run/named/named.pid /run/unbound.pid /run/dnsmasq/dnsmasq.pid; do
  if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    echo "error: the packaged service from $pidfile is running (pid $(cat "$pidfile"))" >&2
    echo "next: stop it (it may hold port 53), then run this script again" >&2
    exit 1
  fi
done
if command -v ss >/dev/null 2>&1 && ss -lntu 2>/dev/null | awk '{print $5}' | grep -Eq '[:.]53$'; then
  echo "error: something listens on port 53 after the install" >&2
  echo "next: check 'ss -lntup' and stop the service that holds it" >&2
  exit 1
fi

[ $# -eq 0 ] || exit 0
for bin in knotd nsd kdig named; do
  command -v "$bin" >/dev/null || { echo "error: $bin missing after install" >&2; exit 1; }
done
echo "peers: $(knotd --version 2>&1 | head -n1); $(nsd -v 2>&1 | head -n1)"
