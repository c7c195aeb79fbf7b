#!/bin/bash
# route-lab.sh - end-to-end test of `pigsty-dns route install|uninstall` (adapter resolved-link, networkd
# and runtime variants) against a REAL systemd-resolved + systemd-networkd (Debian 12, v252, from Debian's
# .debs) inside a throw-away network + mount + pid namespace. Adapted from the project's reference lab
# (shared/lab/resolved-lab.sh). Touches nothing on the host: /etc/systemd inside the namespace is a bind
# mount of the route's --root etc/systemd, /run is a tmpfs, the journal lives under --root.
#
# Usage (as root): route-lab.sh [networkd|runtime]...   (default: both); PASS/FAIL lines, then
#   "N passed, N failed"; exit 0 iff nothing failed.
# Environment: PIGSTY_DNS_BIN (the pigsty-dns binary, required), PIGSTY_DNS_SERVE_BIN (what runs
#   `serve --listen 127.0.0.1:5354 --records FILE --state-dir DIR`; default PIGSTY_DNS_BIN),
#   PIGSTY_DNS_RECORDS (zones/pigsty.test.yml), LAB, LAB_TIMEOUT (default 240), SYSTEMD_VERSION,
#   LAB_REVERSE_SERVED (default 1: the daemon answers PTRs for its /24, issue 12; 0 skips only the
#   checks that need a PTR answer, for a daemon built without it).
# Addresses: loopback, 198.18.53.53/32 on the route's link and TEST-NET-2 198.51.100.254/32 on an uplink
# stand-in, all inside the private netns (no route anywhere). The daemon listens on 127.0.0.1:5354; the
# "default upstream" stand-in (dnsmasq, logs every query) on 127.0.0.2:53.
set -uo pipefail

LAB=${LAB:-${TMPDIR:-/tmp}/pigsty-dns-route-lab}
ROOT=$LAB/root            # extracted .debs
DEBS=$LAB/debs
ST=$LAB/state             # per-run state (configs, logs); recreated on every run
SELF=$(readlink -f "$0")
PKGS=(systemd-resolved libsystemd-shared systemd libnss-resolve)

die() { echo "route-lab: $*" >&2; exit 2; }

# ---------------------------------------------------------------- outside the namespace
fetch_systemd() {
	if [ -x "$ROOT/lib/systemd/systemd-resolved" ] && [ -x "$ROOT/lib/systemd/systemd-networkd" ] \
	   && [ -x "$ROOT/usr/bin/resolvectl" ] && ls "$ROOT"/usr/lib/*/systemd/libsystemd-shared-*.so >/dev/null 2>&1; then
		return 0
	fi
	local v=${SYSTEMD_VERSION:-}
	[ -n "$v" ] || v=$(apt-cache policy systemd-resolved 2>/dev/null | awk '/Candidate:/{print $2}')
	if [ -z "$v" ] || [ "$v" = "(none)" ]; then
		apt-get update >/dev/null || die "apt-get update failed"
		v=$(apt-cache policy systemd-resolved | awk '/Candidate:/{print $2}')
	fi
	[ -n "$v" ] && [ "$v" != "(none)" ] || die "no systemd-resolved candidate in apt"
	rm -rf "$DEBS" "$ROOT"; mkdir -p "$DEBS" "$ROOT"
	local p args=()
	for p in "${PKGS[@]}"; do args+=("$p=$v"); done
	(cd "$DEBS" && timeout 300 apt-get download "${args[@]}") || die "apt-get download failed"
	for p in "$DEBS"/*.deb; do dpkg-deb -x "$p" "$ROOT" || die "dpkg-deb -x $p failed"; done
}

free_id() {   # an id unused as uid and gid on this host (looked up in the copies)
	local i
	for i in $(seq 999 -1 900); do
		cut -d: -f3 "$ST/passwd" "$ST/group" | grep -qx "$i" || { echo "$i"; return; }
	done
	die "no free uid/gid in 900..999"
}
add_user() {  # only to the namespace's copies of passwd/group
	grep -q "^$1:" "$ST/passwd" && return 0
	local id; id=$(free_id)
	echo "$1:x:$id:$id:$2:/:/usr/sbin/nologin" >>"$ST/passwd"
	grep -q "^$1:" "$ST/group" || echo "$1:x:$id:" >>"$ST/group"
}

prepare_state() {
	rm -rf "$ST"
	mkdir -p "$ST/logs" "$ST/etc-systemd" "$ST/empty" "$ST/rroot/etc/systemd/network" "$ST/rroot/etc/systemd/system" "$ST/srv" "$ST/bin"
	cp /etc/passwd "$ST/passwd"; cp /etc/group "$ST/group"
	add_user systemd-resolve "systemd Resolver"
	add_user systemd-network "systemd Network Management"
	printf 'nameserver 127.0.0.53\n' >"$ST/resolv.conf"
	# the route reads NSS through --root (issue 23): the namespace's view, host nsswitch.conf + the stub
	cp /etc/nsswitch.conf "$ST/rroot/etc/nsswitch.conf"; cp "$ST/resolv.conf" "$ST/rroot/etc/resolv.conf"
	# base config, compile-time defaults made explicit where they matter for isolation
	printf '[Resolve]\nFallbackDNS=\nLLMNR=no\nMulticastDNS=no\nDNSSEC=no\nDNSOverTLS=no\nCache=no\n' \
		>"$ST/rroot/etc/systemd/resolved.conf"
	cat >"$ST/dbus-system.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=/run/dbus/system_bus_socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
  </policy>
  <includedir>$ROOT/usr/share/dbus-1/system.d</includedir>
</busconfig>
EOF
}

outer() {
	[ "$(id -u)" = 0 ] || die "must run as root"
	local t need=()
	for t in unshare ip ss dbus-daemon dpkg-deb apt-get apt-cache timeout; do
		command -v "$t" >/dev/null || die "missing $t"
	done
	command -v dnsmasq >/dev/null || need+=(dnsmasq-base)     # executable only, starts no service
	command -v dig >/dev/null || need+=(bind9-dnsutils)
	if [ ${#need[@]} -gt 0 ]; then
		apt-get install -y --no-install-recommends "${need[@]}" >/dev/null 2>&1 ||
		{ apt-get update >/dev/null && apt-get install -y --no-install-recommends "${need[@]}" >/dev/null; } ||
		die "could not install ${need[*]}"
	fi
	[ -x "${PIGSTY_DNS_BIN:-}" ] || die "set PIGSTY_DNS_BIN to the pigsty-dns binary"
	SERVE_BIN=${PIGSTY_DNS_SERVE_BIN:-$PIGSTY_DNS_BIN}
	[ -x "$SERVE_BIN" ] || die "PIGSTY_DNS_SERVE_BIN ($SERVE_BIN) is not executable"
	[ -f "${PIGSTY_DNS_RECORDS:-}" ] || die "set PIGSTY_DNS_RECORDS to zones/pigsty.test.yml"
	export PIGSTY_DNS_BIN PIGSTY_DNS_SERVE_BIN=$SERVE_BIN PIGSTY_DNS_RECORDS
	fetch_systemd
	prepare_state
	host_fingerprint >"$ST/host-before"
	# LIBMOUNT_UTAB keeps mount(8) from creating /run/mount/utab on the host.
	timeout -k 5 "${LAB_TIMEOUT:-240}" env LIBMOUNT_UTAB="$ST/utab" \
		unshare --net --mount --pid --fork --kill-child=SIGKILL --mount-proc --propagation private \
		"$SELF" --inner "$@"
	local rc=$?
	if host_fingerprint | diff - "$ST/host-before" >/dev/null; then
		echo "PASS: host: /etc/resolv.conf, nsswitch.conf, passwd, group, /etc/systemd, links unchanged"
	else
		echo "FAIL: host files changed:"; host_fingerprint | diff - "$ST/host-before"; rc=1
	fi
	exit $rc
}

# ---------------------------------------------------------------- inside the namespace (PID 1)
LIBDIR=; RESOLVED=; NETWORKD=; KIND=
DBUS_PID=; RESOLVED_PID=; NETWORKD_PID=; RESP_PID=; UP_PID=
PASS=0; FAIL=0
RLOG=; ULOG=; MARK_R=0; MARK_U=0

rctl() { LD_LIBRARY_PATH=$LIBDIR timeout 20 "$ROOT/usr/bin/resolvectl" "$@"; }
nctl() { LD_LIBRARY_PATH=$LIBDIR timeout 20 "$ROOT/bin/networkctl" --no-pager "$@"; }

setup_ns() {
	LIBDIR=$(dirname "$(ls "$ROOT"/usr/lib/*/systemd/libsystemd-shared-*.so | head -1)")
	mount -t tmpfs -o mode=755 tmpfs /run || die "tmpfs /run"
	mkdir -p /run/systemd/resolved.conf.d /run/systemd/network /run/dbus /run/lock
	mkdir -p /etc/systemd 2>/dev/null; mount --bind "$ST/rroot/etc/systemd" /etc/systemd || die "bind /etc/systemd"
	local d
	for d in /usr/lib/systemd/network /usr/local/lib/systemd/network /usr/lib/systemd/resolved.conf.d; do
		[ -d "$d" ] && mount --bind "$ST/empty" "$d"
	done
	mount --bind "$ST/passwd" /etc/passwd && mount --bind "$ST/group" /etc/group || die "bind passwd/group"
	local rc; rc=$(readlink -m /etc/resolv.conf)
	if [ -e "$rc" ]; then mount --bind "$ST/resolv.conf" "$rc" || die "bind resolv.conf"
	elif [[ $rc == /run/* ]]; then mkdir -p "$(dirname "$rc")"; cp "$ST/resolv.conf" "$rc"
	else die "cannot shadow /etc/resolv.conf -> $rc"; fi
	# read-only sysfs of this netns: networkd then does not wait for udev (udev_available() == false)
	mount -t sysfs -o ro sysfs /sys || die "sysfs"
	ip link set lo up
	if ip link add lab_probe type dummy 2>/dev/null; then KIND=dummy; ip link del lab_probe; else KIND=ifb; fi
	echo "# link kind for test interfaces: $KIND (the dummy driver is missing on some kernels)"
	dbus-daemon --config-file="$ST/dbus-system.conf" --nofork --nopidfile --nosyslog >"$ST/logs/dbus.log" 2>&1 &
	DBUS_PID=$!
	for _ in $(seq 50); do [ -S /run/dbus/system_bus_socket ] && break; sleep 0.1; done
	[ -S /run/dbus/system_bus_socket ] || die "dbus-daemon did not start"
	RLOG=$ST/logs/responder.log; ULOG=$ST/logs/upstream.log; : >"$RLOG"; : >"$ULOG"
}

waitport() { for _ in $(seq 50); do ss -lun | grep -q " $1 " && return 0; sleep 0.1; done; return 1; }
stopkill() { [ -n "${1:-}" ] || return 0; kill "$1" 2>/dev/null; for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done; kill -9 "$1" 2>/dev/null; wait "$1" 2>/dev/null; return 0; }

start_responder() {   # the ~pigsty.test server: meta.pigsty.test A 10.10.10.10, everything else REFUSED
	dnsmasq --conf-file=/dev/null --keep-in-foreground --port=5353 --listen-address=127.0.0.1 \
		--bind-interfaces --no-resolv --no-hosts --no-negcache --cache-size=0 --user=root \
		--pid-file="$ST/responder.nspid" --local=/pigsty.test/ --host-record=meta.pigsty.test,10.10.10.10 \
		--log-queries=extra --log-facility="$RLOG" >>"$ST/logs/responder.out" 2>&1 &
	RESP_PID=$!; waitport 127.0.0.1:5353 || die "responder did not start"
}
stop_responder() { stopkill "$RESP_PID"; RESP_PID=; }
start_upstream() {    # stand-in for the host's normal DNS; answers anything, logs what it gets
	dnsmasq --conf-file=/dev/null --keep-in-foreground --port=53 --listen-address=127.0.0.2 \
		--bind-interfaces --no-resolv --no-hosts --no-negcache --cache-size=0 --user=root \
		--pid-file="$ST/upstream.nspid" --address=/#/203.0.113.99 \
		--log-queries=extra --log-facility="$ULOG" >>"$ST/logs/upstream.out" 2>&1 &
	UP_PID=$!; waitport 127.0.0.2:53 || die "upstream stand-in did not start"
}
stop_upstream() { stopkill "$UP_PID"; UP_PID=; }

start_resolved() {
	SYSTEMD_LOG_LEVEL=debug LD_LIBRARY_PATH=$LIBDIR "$ROOT/lib/systemd/systemd-resolved" >>"$ST/logs/resolved.log" 2>&1 &
	RESOLVED_PID=$!
	for _ in $(seq 100); do
		[ -S /run/systemd/resolve/io.systemd.Resolve ] && ss -lun | grep -q '127.0.0.53%lo:53 ' && rctl status >/dev/null 2>&1 && return 0
		kill -0 "$RESOLVED_PID" 2>/dev/null || break; sleep 0.1
	done
	die "systemd-resolved did not come up (see $ST/logs/resolved.log)"
}
stop_resolved() { stopkill "$RESOLVED_PID"; RESOLVED_PID=; rm -rf /run/systemd/resolve; }
start_networkd() {
	SYSTEMD_LOG_LEVEL=debug LD_LIBRARY_PATH=$LIBDIR "$ROOT/lib/systemd/systemd-networkd" >>"$ST/logs/networkd.log" 2>&1 &
	NETWORKD_PID=$!
	for _ in $(seq 50); do nctl list >/dev/null 2>&1 && return 0; sleep 0.1; done
	die "systemd-networkd did not come up (see $ST/logs/networkd.log)"
}
stop_networkd() { stopkill "$NETWORKD_PID"; NETWORKD_PID=; }   # keep /run/systemd/netif: resolved has inotify watches on it

mklink() { ip link add "$1" type "$KIND" && ip link set "$1" addrgenmode none && ip link set "$1" up; }
uplink() { mklink pu0 && ip addr add 198.51.100.254/32 dev pu0; }   # makes resolved's manager_routable() true

wait_scope() {  # wait_scope LINK WANT(DNS|none): until resolvectl shows that scope state (max 10 s)
	for _ in $(seq 100); do rctl status "$1" 2>/dev/null | grep -q "Current Scopes: $2" && return 0; sleep 0.1; done
	return 1
}

rq() {   # resolvectl query -> address or error text
	local out; out=$(rctl --cache=no query "$1" 2>&1 | head -1)
	out=${out#"$1: "}; echo "${out#resolve call failed: }"
}
dq() {   # dig via the stub listener -> "STATUS [first A]"
	local out st a
	out=$(timeout 15 dig +time=3 +tries=1 +noall +comments +answer @127.0.0.53 "$1" A 2>&1)
	st=$(grep -o 'status: [A-Z]*' <<<"$out" | head -1); st=${st#status: }
	a=$(awk '!/^;/ && $4=="A" {print $5; exit}' <<<"$out")
	echo "${st:-NOANSWER}${a:+ $a}"
}
mark() { sleep 0.2; MARK_R=$(wc -l <"$RLOG"); MARK_U=$(wc -l <"$ULOG"); }
who_saw() {  # which server logged a query for NAME since the last mark: responder|upstream|both|none
	sleep 0.3
	local r=0 u=0
	tail -n +$((MARK_R + 1)) "$RLOG" | grep -q "query\[[A-Z]*\] $1 " && r=1
	tail -n +$((MARK_U + 1)) "$ULOG" | grep -q "query\[[A-Z]*\] $1 " && u=1
	case $r$u in 10) echo responder;; 01) echo upstream;; 11) echo both;; *) echo none;; esac
}
check() {  # check DESCRIPTION EXPECTED ACTUAL
	if [ "$2" = "$3" ]; then PASS=$((PASS + 1)); echo "PASS: $1 [$3]"
	else FAIL=$((FAIL + 1)); echo "FAIL: $1 [expected '$2', got '$3']"; fi
}


host_fingerprint() {   # what must be byte-identical on the host before and after
	sha256sum /etc/resolv.conf /etc/nsswitch.conf /etc/passwd /etc/group 2>/dev/null
	find /etc/systemd /etc/NetworkManager -type f -exec sha256sum {} + 2>/dev/null | sort -k2
	ip -o link show | awk '{print $2}' | grep -c pigsty-dns || true
}
rroot_fingerprint() { (cd "$ST/rroot" && find . -type f -exec sha256sum {} + | sort -k2); }

SRV_PID=
start_daemon() {
	"$PIGSTY_DNS_SERVE_BIN" serve --listen 127.0.0.1:5354 --records "$PIGSTY_DNS_RECORDS" --state-dir "$ST/srv" \
		>>"$ST/logs/daemon.log" 2>&1 &
	SRV_PID=$!
	for _ in $(seq 50); do ss -lun | grep -q ' 127.0.0.1:5354 ' && ss -ltn | grep -q ' 127.0.0.1:5354 ' && [ -f "$ST/srv/status.json" ] && return 0; sleep 0.1; done
	die "pigsty-dns serve did not come up (see $ST/logs/daemon.log)"
}
stop_daemon() { stopkill "$SRV_PID"; SRV_PID=; }
refused() { sed -n 's/.*"refused": *\([0-9]*\).*/\1/p' "$ST/srv/status.json" | head -1; }
# every query the daemon answered (any rcode), from a status.json write made after this call (the
# server rewrites it every 2 s)
stamp() { sed -n 's/.*"updated": *"\([^"]*\)".*/\1/p' "$ST/srv/status.json" | head -1; }
answered() {
	local s0; s0=$(stamp)
	for _ in $(seq 60); do [ "$(stamp)" != "$s0" ] && break; sleep 0.1; done
	grep -o '"\(noerror\|nxdomain\|refused\|formerr\|notimp\|servfail\|badvers\|other\)": *[0-9]*' "$ST/srv/status.json" |
		awk -F: '{n += $2} END {print n + 0}'
}
REVERSE_SERVED=${LAB_REVERSE_SERVED:-1}
ptr_check() {  # ptr_check DESCRIPTION EXPECTED ACTUAL: a check that needs the daemon's PTR answers
	if [ "$REVERSE_SERVED" = 1 ]; then check "$@"
	else echo "SKIP (LAB_REVERSE_SERVED=0, the daemon serves no PTRs): $1"; fi
}
# reverse lookups through the route: the canonical name, or the error text
rq_ptr() { local out; out=$(rctl --cache=no query "$1" 2>&1 | head -1); out=${out#"$1: "}; out=${out%% *}; echo "${out#resolve call failed: }"; }
ge_ptr() { getent hosts "$1" | awk '{print $2; exit}'; }
upstream_saw_ptr() {  # did the default-upstream stand-in get the PTR question for ADDR since the last mark?
	sleep 0.3
	local a=$1 q; q=$(awk -F. '{print $4"."$3"."$2"."$1".in-addr.arpa"}' <<<"$a")
	tail -n +$((MARK_U + 1)) "$ULOG" | grep -q "query\[PTR\] $q " && echo yes || echo no
}
link_domains() { rctl status pigsty-dns0 2>/dev/null | awk -F': ' '/DNS Domain/{print $2}' | tr ' ' '\n' | sort | paste -sd' ' -; }
moved_24() {  # moved_24 LABEL: a later generation moves to 10.10.12.0/24; status calls it drift, its fix re-routes
	local v=$1 out rc fix words
	printf 'all:\n  hosts:\n    10.10.12.10: { nodename: meta }\n' >"$ST/moved.yml"
	"$PIGSTY_DNS_SERVE_BIN" load "$ST/moved.yml" --state-dir "$ST/srv" >>"$ST/logs/load.log" 2>&1
	for _ in $(seq 50); do
		[ "$(timeout 5 dig +short +time=1 +tries=1 @127.0.0.1 -p 5354 meta.pigsty.test A)" = 10.10.12.10 ] && break; sleep 0.1
	done
	out=$(route status --state-dir "$ST/srv" 2>&1); echo "$out" >"$ST/logs/status-moved-$v.log"
	check "$v: moved /24: route status reports the routed reverse zone as drift" 1 \
		"$(grep -c "^FAIL reverse zone: drift: the route carries 10.10.10.in-addr.arpa, but the live generation's addresses moved to 12.10.10.in-addr.arpa" <<<"$out")"
	fix=$(awk '/^FAIL reverse zone/ {getline; sub(/^ *next: */, ""); print; exit}' <<<"$out")
	check "$v: moved /24: its next: is one route install" yes \
		"$(case $fix in "sudo pigsty-dns route install --adapter resolved-link "*"--state-dir $ST/srv --yes") echo yes;; *) echo "no: $fix";; esac)"
	read -ra words <<<"${fix#sudo pigsty-dns }"
	out=$(PATH=$ST/bin:$PATH timeout 60 "$PIGSTY_DNS_BIN" "${words[@]}" --check-name meta.pigsty.test 2>&1); rc=$?
	echo "$out" >"$ST/logs/install-moved-$v.log"
	check "$v: moved /24: that command re-routes (install again, verified)" 0 "$rc"
	[ "$rc" = 0 ] || echo "$out" | tail -5
	check "$v: moved /24: the link routes the new reverse zone" "~12.10.10.in-addr.arpa ~pigsty.test" "$(link_domains)"
	ptr_check "$v: moved /24: resolvectl query 10.10.12.10 -> the canonical name" "meta.pigsty.test" "$(rq_ptr 10.10.12.10)"
	out=$(route status --state-dir "$ST/srv" 2>&1); echo "$out" >"$ST/logs/status-moved-2-$v.log"
	check "$v: moved /24: route status all ok again" 0 "$(grep -c '^FAIL' <<<"$out")"
}
reverse_checks() {  # reverse_checks LABEL: the reverse zone through the route, in and outside the /24
	local v=$1 before
	ptr_check "$v: getent hosts 10.10.10.10 -> the canonical name" "meta.pigsty.test" "$(ge_ptr 10.10.10.10)"
	ptr_check "$v: resolvectl query 10.10.10.10 -> the canonical name" "meta.pigsty.test" "$(rq_ptr 10.10.10.10)"
	# control: a reverse lookup inside the /24 does reach the daemon (whatever it answers)
	before=$(answered); rq_ptr 10.10.10.99 >/dev/null
	check "$v: control: a reverse lookup inside the /24 (10.10.10.99) reaches the daemon" yes \
		"$([ "$(answered)" -gt "$before" ] && echo yes || echo no)"
	mark; before=$(answered)
	rq_ptr 10.10.11.10 >/dev/null; ge_ptr 10.10.11.10 >/dev/null
	timeout 15 dig +time=3 +tries=1 -x 10.10.11.10 @127.0.0.53 >/dev/null 2>&1
	check "$v: a reverse lookup outside the /24 (10.10.11.10) never reaches the daemon (its counters unchanged)" \
		"$before" "$(answered)"
	check "$v: ... and goes to the default upstream" yes "$(upstream_saw_ptr 10.10.11.10)"
}

# the route CLI sees resolvectl/networkctl from the extracted packages
make_wrappers() {
	local t
	for t in resolvectl networkctl; do
		local p=$ROOT/usr/bin/$t; [ -x "$p" ] || p=$ROOT/bin/$t
		printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$LIBDIR" "$p" >"$ST/bin/$t"; chmod 755 "$ST/bin/$t"
	done
}
route() { PATH=$ST/bin:$PATH timeout 60 "$PIGSTY_DNS_BIN" route "$@" --root "$ST/rroot"; }

variant() {   # variant networkd|runtime
	local v=$1 out rc before
	echo "=== resolved-link, $v variant"
	printf '[Resolve]\nDNS=127.0.0.2\n' >/run/systemd/resolved.conf.d/40-upstream.conf
	start_upstream; uplink; start_resolved
	[ "$v" = networkd ] && start_networkd
	start_daemon
	rroot_fingerprint >"$ST/rroot-before"
	# No --server (and no PIGSTY_DNS_LISTEN): the default, 127.0.0.1:5354, is the daemon's address.
	out=$(env -u PIGSTY_DNS_LISTEN PATH=$ST/bin:$PATH timeout 60 "$PIGSTY_DNS_BIN" route install --root "$ST/rroot" \
		--link-variant "$v" --yes --check-name meta.pigsty.test --state-dir "$ST/srv" 2>&1); rc=$?
	echo "$out" >"$ST/logs/install-$v.log"
	check "$v: route install (verified: scope, SOA, resolvectl, getent, reverse lookups, REFUSED unchanged)" 0 "$rc"
	[ "$rc" = 0 ] || echo "$out" | tail -5
	check "$v: the route uses the default server 127.0.0.1:5354" 1 \
		"$(grep -c '"server": "127.0.0.1:5354"' "$ST/rroot/var/lib/pigsty-dns-route/journal.json" 2>/dev/null)"
	check "$v: link has a DNS scope without default route" "DNS" "$(rctl status pigsty-dns0 2>/dev/null | awk -F': ' '/Current Scopes/{print $2}')"
	check "$v: meta.pigsty.test via resolvectl" "10.10.10.10" "$(rq meta.pigsty.test)"
	check "$v: meta.pigsty.test via stub 127.0.0.53" "NOERROR 10.10.10.10" "$(dq meta.pigsty.test)"
	check "$v: meta.pigsty.test via getent" "10.10.10.10" "$(getent ahostsv4 meta.pigsty.test | awk '{print $1; exit}')"
	check "$v: the link also routes the reverse zone of the live /24" "~10.10.10.in-addr.arpa ~pigsty.test" "$(link_domains)"
	check "$v: the journal records the reverse zone" 1 \
		"$(grep -c '"reverse_zone": "10.10.10.in-addr.arpa"' "$ST/rroot/var/lib/pigsty-dns-route/journal.json" 2>/dev/null)"
	reverse_checks "$v"
	mark; before=$(refused); rq "lab-$RANDOM.example.org" >/dev/null; dq example.org >/dev/null; sleep 0.6
	check "$v: unrelated names never reach the daemon (REFUSED counter unchanged)" "$before" "$(refused)"
	check "$v: example.org went to the default upstream" upstream "$(who_saw example.org)"
	out=$(route status --check-name meta.pigsty.test --state-dir "$ST/srv" 2>&1); echo "$out" >"$ST/logs/status-$v.log"
	check "$v: route status all ok" 0 "$(grep -c '^FAIL' <<<"$out")"
	check "$v: route status: the reverse zone matches the live generation" 1 \
		"$(grep -c '^ok   reverse zone: routes 10.10.10.in-addr.arpa, the /24 of the live generation' <<<"$out")"
	moved_24 "$v"
	stop_daemon; mark
	check "$v: daemon down -> stub SERVFAIL" "SERVFAIL" "$(dq meta.pigsty.test)"
	check "$v: daemon down -> nothing reaches the upstream" none "$(who_saw meta.pigsty.test)"
	check "$v: route status says the daemon is down" 1 "$(route status 2>&1 | grep -c '^FAIL daemon')"
	start_daemon
	out=$(route uninstall --yes 2>&1); rc=$?
	echo "$out" >"$ST/logs/uninstall-$v.log"
	check "$v: route uninstall" 0 "$rc"
	[ "$rc" = 0 ] || echo "$out" | tail -5
	check "$v: link gone" 1 "$(ip link show pigsty-dns0 >/dev/null 2>&1; echo $?)"
	mark; rq meta.pigsty.test >/dev/null
	check "$v: route gone: meta.pigsty.test goes to the default upstream again" upstream "$(who_saw meta.pigsty.test)"
	check "$v: --root files byte-identical to before" "" "$(rroot_fingerprint | diff - "$ST/rroot-before")"
	out=$(route uninstall --yes 2>&1); rc=$?
	check "$v: uninstall twice is harmless" 0 "$rc"
	stop_daemon
	[ "$v" = networkd ] && stop_networkd
	stop_resolved; stop_upstream; ip link del pu0
	rm -f /run/systemd/resolved.conf.d/40-upstream.conf
}

# ================================================================ issue 23 (hosts-wire): hosts mode
# hosts_mode: a hosts file inside the namespace (bind-mounted over /etc/hosts, the same file at --root's
# etc/hosts): a shadowing line seen by `route status`, then gone after it is removed; the default native
# check (install without --check-name); and, with no cache flush, how long after `load` getent shows
# (a) a changed address, (b) a new name looked up (NXDOMAIN cached) just before, (c) a removed name:
# with resolved's defaults (2 runs: CacheFromLocalhost=no caches nothing from the daemon, bound 0), then
# with CacheFromLocalhost=yes (HOSTS_RUNS runs, default 3: bound the TTL / the SOA minimum); the median
# and max of each, every run within its bound + 1.5 s.
# TTLs are short here (--ttl 8, SOA minimum 5, the default) to keep the lab's time small.
hosts_mode() {
	local out rc ttl=8 neg=5 runs=${HOSTS_RUNS:-3}
	echo "=== hosts mode (issue 23)"
	printf '127.0.0.1 localhost\n' >"$ST/hosts"; mount --bind "$ST/hosts" /etc/hosts || die "bind /etc/hosts"
	ln -sf "$ST/hosts" "$ST/rroot/etc/hosts"
	printf '[Resolve]\nDNS=127.0.0.2\n' >/run/systemd/resolved.conf.d/40-upstream.conf
	printf '[Resolve]\nCache=yes\n' >/run/systemd/resolved.conf.d/50-cache.conf   # over the lab's Cache=no
	start_upstream; uplink; start_resolved; start_daemon
	out=$(env -u PIGSTY_DNS_LISTEN PATH=$ST/bin:$PATH timeout 60 "$PIGSTY_DNS_BIN" route install --root "$ST/rroot" \
		--link-variant runtime --yes --state-dir "$ST/srv" 2>&1); rc=$?
	echo "$out" >"$ST/logs/install-hosts.log"
	check "hosts: route install without --check-name (verified)" 0 "$rc"
	check "hosts: the default native check asked getent for the first served name" 1 \
		"$(grep -c 'ok  getent ahostsv4: getent ahostsv4 meta.pigsty.test: 10.10.10.10' <<<"$out")"
	printf '127.0.0.1 localhost\n10.10.10.99 meta.pigsty.test\n' >"$ST/hosts"
	check "hosts: a shadowing line answers getent" 10.10.10.99 "$(getent ahostsv4 meta.pigsty.test | awk '{print $1; exit}')"
	out=$(route status --state-dir "$ST/srv" 2>&1); echo "$out" >"$ST/logs/status-hosts-shadow.log"
	check "hosts: route status fails the shadowed name with its line" 1 \
		"$(grep -c '^FAIL hosts: shadowed name meta.pigsty.test: line 2 (' <<<"$out")"
	printf '127.0.0.1 localhost\n' >"$ST/hosts"
	out=$(route status --state-dir "$ST/srv" 2>&1); echo "$out" >"$ST/logs/status-hosts-clean.log"
	check "hosts: after the line is removed, route status has no hosts failure" 0 "$(grep -c '^FAIL hosts' <<<"$out")"
	check "hosts: ... and getent gets the zone's address" 10.10.10.10 "$(getent ahostsv4 meta.pigsty.test | awk '{print $1; exit}')"
	ga() { getent ahostsv4 "$1" | awk '{print $1; exit}'; }
	now() { date +%s.%N; }
	since() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.1f", a - b }'; }
	stats() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {printf "median %.1f s, max %.1f s", v[int((NR+1)/2)], v[NR]}'; }
	within() { local m; m=$(printf '%s\n' "${@:2}" | sort -g | tail -1); awk -v m="$m" -v b="$1" 'BEGIN { exit !(m <= b + 1.5) }' && echo yes || echo "no: max $m s"; }
	ld() { "$PIGSTY_DNS_SERVE_BIN" load "$ST/conv-$1.yml" --ttl $ttl --state-dir "$ST/srv" >>"$ST/logs/load.log" 2>&1; }
	measure() {   # measure LABEL RUNS POSBOUND NEGBOUND
		local i t0 a b c ra=() rb=() rc_=()
		for i in $(seq "$2"); do
			printf 'all:\n  hosts:\n    10.10.10.10: { nodename: meta }\n    10.10.10.20: { nodename: conv%s }\n    10.10.10.30: { nodename: gone%s }\n' "$1$i" "$1$i" >"$ST/conv-a.yml"
			printf 'all:\n  hosts:\n    10.10.10.10: { nodename: meta }\n    10.10.10.21: { nodename: conv%s }\n    10.10.10.40: { nodename: new%s }\n' "$1$i" "$1$i" >"$ST/conv-b.yml"
			ld a
			# programs ask just before the change (a cache keeps the answers, and new's NXDOMAIN)
			ga "conv$1$i.pigsty.test" >/dev/null; ga "gone$1$i.pigsty.test" >/dev/null; ga "new$1$i.pigsty.test" >/dev/null
			ld b
			t0=$(now); a=; b=; c=
			for _ in $(seq $(( (ttl + 7) * 10 ))); do
				[ -z "$a" ] && [ "$(ga "conv$1$i.pigsty.test")" = 10.10.10.21 ] && a=$(since "$t0")
				[ -z "$b" ] && [ "$(ga "new$1$i.pigsty.test")" = 10.10.10.40 ] && b=$(since "$t0")
				[ -z "$c" ] && [ -z "$(ga "gone$1$i.pigsty.test")" ] && c=$(since "$t0")
				[ -n "$a" ] && [ -n "$b" ] && [ -n "$c" ] && break; sleep 0.1
			done
			ra+=("${a:-999}"); rb+=("${b:-999}"); rc_+=("${c:-999}")
			echo "# hosts: $1 run $i: changed ${a:-never} s, new (NXDOMAIN cached) ${b:-never} s, removed ${c:-never} s"
		done
		echo "# hosts: convergence, resolved-link 252, $1, --ttl $ttl, SOA minimum $neg, $2 runs: changed $(stats "${ra[@]}"); new $(stats "${rb[@]}"); removed $(stats "${rc_[@]}")"
		check "hosts: $1: a changed address is visible within $3 s + 1.5 s" yes "$(within "$3" "${ra[@]}")"
		check "hosts: $1: a new name (NXDOMAIN cached) is visible within $4 s + 1.5 s" yes "$(within "$4" "${rb[@]}")"
		check "hosts: $1: a removed name is gone within $3 s + 1.5 s" yes "$(within "$3" "${rc_[@]}")"
	}
	# resolved's defaults: Cache=yes, but CacheFromLocalhost=no: nothing from the daemon on 127.0.0.1 is cached
	measure default 2 0 0
	# with CacheFromLocalhost=yes resolved caches by the TTL and the SOA minimum
	stop_resolved; printf '[Resolve]\nCache=yes\nCacheFromLocalhost=yes\n' >/run/systemd/resolved.conf.d/50-cache.conf; start_resolved
	env -u PIGSTY_DNS_LISTEN PATH=$ST/bin:$PATH timeout 60 "$PIGSTY_DNS_BIN" route install --root "$ST/rroot" --link-variant runtime --yes --state-dir "$ST/srv" >>"$ST/logs/install-hosts.log" 2>&1
	check "hosts: install again after resolved's restart" 0 "$?"
	measure cached "$runs" $ttl $neg
	route uninstall --yes >"$ST/logs/uninstall-hosts.log" 2>&1
	stop_daemon; stop_resolved; stop_upstream; ip link del pu0
	rm -f /run/systemd/resolved.conf.d/40-upstream.conf /run/systemd/resolved.conf.d/50-cache.conf "$ST/rroot/etc/hosts"
	umount /etc/hosts
}
# ================================================================ end of issue 23 (hosts-wire)

inner() {
	setup_ns
	make_wrappers
	echo "# $(LD_LIBRARY_PATH=$LIBDIR "$ROOT/lib/systemd/systemd-resolved" --version | head -1)"
	[ $# -gt 0 ] || set -- networkd runtime
	local t0=$SECONDS s
	for s in "$@"; do
		case $s in networkd|runtime) variant "$s";; *) die "unknown variant $s";; esac
	done
	hosts_mode   # issue 23
	echo "# logs: $ST/logs; namespace part took $((SECONDS - t0)) s"
	echo "$PASS passed, $FAIL failed"
	[ "$FAIL" = 0 ]; exit
}

if [ "${1:-}" = "--inner" ]; then shift; inner "$@"; else
	outer "$@"; fi
