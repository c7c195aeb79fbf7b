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
#   PIGSTY_DNS_RECORDS (zones/pigsty.test.yml), LAB, LAB_TIMEOUT (default 420), SYSTEMD_VERSION,
#   LAB_REVERSE_SERVED (default 1: the daemon answers PTRs for its /24, issue 12; 0 skips only the
#   checks that need a PTR answer, for a daemon built without it), LAB_PIGSTY_SERVED (default 1: the
#   daemon serves pigsty.test and pigsty, issue 37, and the route carries both; 0: a daemon that serves
#   pigsty.test alone, routed alone through PIGSTY_DNS_ZONE, the checks of .pigsty names skipped).
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
	PIGSTY_DNS_STOCK_META=$(cd "$(dirname "$SELF")/../data/pigsty-conf" && pwd)/meta.yml
	[ -f "$PIGSTY_DNS_STOCK_META" ] || die "no stock Pigsty config at $PIGSTY_DNS_STOCK_META"
	for t in psql curl python3; do command -v "$t" >/dev/null || die "missing $t (postgresql-client, curl, python3)"; done
	export PIGSTY_DNS_STOCK_META
	fetch_systemd
	prepare_state
	host_fingerprint >"$ST/host-before"
	# LIBMOUNT_UTAB keeps mount(8) from creating /run/mount/utab on the host.
	timeout -k 5 "${LAB_TIMEOUT:-420}" env LIBMOUNT_UTAB="$ST/utab" \
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
PIGSTY_SERVED=${LAB_PIGSTY_SERVED:-1}
# A daemon that serves pigsty.test alone: it and every route command read the one zone from the variable.
[ "$PIGSTY_SERVED" = 1 ] || export PIGSTY_DNS_ZONE=pigsty.test
if [ "$PIGSTY_SERVED" = 1 ]; then ZONE_DOMAINS="~pigsty ~pigsty.test"; else ZONE_DOMAINS="~pigsty.test"; fi
pig_check() {  # pig_check DESCRIPTION EXPECTED ACTUAL: a check of the .pigsty zone (issue 37)
	if [ "$PIGSTY_SERVED" = 1 ]; then check "$@"
	else echo "SKIP (LAB_PIGSTY_SERVED=0, the daemon serves pigsty.test only): $1"; fi
}
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
	check "$v: moved /24: the link routes the new reverse zone" "~12.10.10.in-addr.arpa $ZONE_DOMAINS" "$(link_domains)"
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

# ---------------------------------------------------------------- issue 26: what the route survives
owned_fingerprint() { rroot_fingerprint | grep -v ' ./var/lib/pigsty-dns-route/journal.json$'; }   # the route's files, not the journal
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
first_good() {  # first_good WANT: ms until the stub answers meta.pigsty.test with WANT (polls, max ~15 s), or "never"
	local t0; t0=$(now_ms)
	for _ in $(seq 150); do
		[ "$(timeout 5 dig +short +time=1 +tries=1 @127.0.0.53 meta.pigsty.test A 2>/dev/null)" = "$1" ] &&
			{ echo $(( $(now_ms) - t0 )); return 0; }
		sleep 0.1
	done
	echo never
}
timed_dq() {  # timed_dq NAME -> "STATUS MS" of one stub lookup
	local t0 r; t0=$(now_ms); r=$(dq "$1"); echo "${r%% *} $(( $(now_ms) - t0 ))"
}
measure() { echo "# measured: $*"; echo "MEASURED: $*" >>"$ST/logs/measured.log"; }
rstatus() {  # rstatus LABEL: route status to a log, its text on stdout
	local out; out=$(route status --state-dir "$ST/srv" 2>&1); echo "$out" >"$ST/logs/status-$1.log"; echo "$out"
}
status_line() { grep -m1 "^FAIL $2" <<<"$1" || echo "(no FAIL $2 line)"; }
status_next() { awk -v i="$2" 'index($0, "FAIL " i) == 1 {getline; sub(/^ *next: */, ""); print; exit}' <<<"$1"; }

row2_daemon() {  # the daemon stopped, then killed: fail fast, never leak, come back without touching the route
	local v=$1 r ms out
	stop_daemon; mark
	read -r r ms <<<"$(timed_dq meta.pigsty.test)"
	check "$v: row 2: daemon stopped -> stub SERVFAIL" SERVFAIL "$r"
	check "$v: row 2: ... fast (under dig's 3 s timeout)" yes "$([ "$ms" -lt 3000 ] && echo yes || echo "no: $ms ms")"
	measure "$v: daemon stopped: stub SERVFAIL after $ms ms"
	local t0; t0=$(now_ms); getent ahostsv4 meta.pigsty.test >/dev/null; measure "$v: daemon stopped: getent fails after $(( $(now_ms) - t0 )) ms"
	check "$v: row 2: daemon stopped -> nothing reaches the upstream" none "$(who_saw meta.pigsty.test)"
	out=$(rstatus "stopped-$v")
	check "$v: row 2: route status says the daemon stopped cleanly" 1 "$(grep -c '^FAIL daemon: .*stopped' <<<"$out")"
	start_daemon; ms=$(first_good 10.10.10.10)
	check "$v: row 2: daemon started again -> answers come back (route untouched)" yes "$([ "$ms" != never ] && echo yes || echo no)"
	measure "$v: daemon started again: first good stub answer $ms ms after it listens"
	kill -9 "$SRV_PID"; wait "$SRV_PID" 2>/dev/null; SRV_PID=; mark
	read -r r ms <<<"$(timed_dq meta.pigsty.test)"
	check "$v: row 2: daemon killed (SIGKILL) -> stub SERVFAIL, fast" "SERVFAIL yes" "$r $([ "$ms" -lt 3000 ] && echo yes || echo "no: $ms ms")"
	check "$v: row 2: daemon killed -> nothing reaches the upstream" none "$(who_saw meta.pigsty.test)"
	out=$(rstatus "crashed-$v")
	check "$v: row 2: route status says the daemon crashed" 1 "$(grep -c '^FAIL daemon: .*crashed' <<<"$out")"
	start_daemon; first_good 10.10.10.10 >/dev/null
	check "$v: row 2: the route's files were never touched" "" "$(owned_fingerprint | diff - "$ST/rroot-installed")"
}

row3_restarts() {  # resolved restarted (its /run state kept, as systemctl restart keeps it); networkctl reload
	local v=$1 ms
	stopkill "$RESOLVED_PID"; RESOLVED_PID=; mark
	start_resolved; ms=$(first_good 10.10.10.10)
	check "$v: row 3: resolved restarted -> the route survives" yes "$([ "$ms" != never ] && echo yes || echo no)"
	measure "$v: resolved restart: first good stub answer $ms ms after resolved is up"
	check "$v: row 3: ... and nothing reached the upstream" none "$(who_saw meta.pigsty.test)"
	check "$v: row 3: the link still routes both zones" "~10.10.10.in-addr.arpa $ZONE_DOMAINS" "$(link_domains)"
	if [ "$v" = networkd ]; then
		mark; local t0; t0=$(now_ms); nctl reload >/dev/null 2>&1; ms=$(first_good 10.10.10.10)
		check "$v: row 3: networkctl reload -> the route survives" yes "$([ "$ms" != never ] && echo yes || echo no)"
		measure "$v: networkctl reload: first good stub answer $ms ms after the reload returned"
		check "$v: row 3: ... and nothing reached the upstream" none "$(who_saw meta.pigsty.test)"
		stop_networkd; start_networkd; ms=$(first_good 10.10.10.10)
		check "$v: row 3: networkd restarted -> the route survives" yes "$([ "$ms" != never ] && echo yes || echo no)"
		measure "$v: networkd restart: first good stub answer $ms ms after networkd is up"
	fi
}

row4_uplink_renewal() {  # someone else's change: the uplink's DNS servers and domains change (a DHCP
	local v=$1 out   # renewal, simulated: what the client's network manager pushes to resolved over D-Bus)
	rctl dns pu0 127.0.0.2; rctl domain pu0 '~lan.example'; wait_scope pu0 DNS
	mark; dq "a.lan.example" >/dev/null
	check "$v: row 4: the uplink's own domain goes to the uplink's server" upstream "$(who_saw a.lan.example)"
	rctl dns pu0 127.0.0.2 127.0.0.2; rctl domain pu0 '~office.example' 'office.example'
	mark
	check "$v: row 4: after the renewal meta.pigsty.test still via the daemon" "NOERROR 10.10.10.10" "$(dq meta.pigsty.test)"
	check "$v: row 4: ... the upstream never saw it" none "$(who_saw meta.pigsty.test)"
	dq "b.office.example" >/dev/null
	check "$v: row 4: the uplink's new domain goes to the uplink's server" upstream "$(who_saw b.office.example)"
	check "$v: row 4: the route's link is unaffected" "~10.10.10.in-addr.arpa $ZONE_DOMAINS" "$(link_domains)"
	out=$(rstatus "renewal-$v")
	check "$v: row 4: route status all ok" 0 "$(grep -c '^FAIL' <<<"$out")"
	rctl revert pu0
}

row5_link_lost() {  # networkd: link deleted -> networkctl reload restores it; address removed -> status, install repairs
	local v=$1 out fix words rc ms   # runtime: link deleted -> status names the leak, its next: repairs
	ip link del pigsty-dns0; mark; rq meta.pigsty.test >/dev/null
	check "$v: row 5: with the link gone the zone leaks to the upstream (why status must say so)" upstream "$(who_saw meta.pigsty.test)"
	if [ "$v" = networkd ]; then
		nctl reload >/dev/null 2>&1; ms=$(first_good 10.10.10.10)
		measure "$v: link deleted, networkctl reload re-creates it: first good stub answer $ms ms after the reload returned"
		check "$v: row 5: networkctl reload re-creates the deleted link (networkd restores the route)" yes \
			"$([ "$ms" != never ] && echo yes || echo no)"
		ip addr del 198.18.53.53/32 dev pigsty-dns0; wait_scope pigsty-dns0 none
		out=$(rstatus "addr-gone-$v")
		check "$v: row 5: address removed -> route status fails on the link, naming the leak" 1 \
			"$(grep -c '^FAIL link: pigsty-dns0 has lost its address 198.18.53.53/32: .*leak' <<<"$out")"
	else
		out=$(rstatus "link-gone-$v")
		check "$v: row 5: link deleted -> route status fails on the link, naming the leak" 1 \
			"$(grep -c '^FAIL link: pigsty-dns0 is gone (deleted?): .*leak' <<<"$out")"
	fi
	fix=$(status_next "$out" link)
	check "$v: row 5: its next: is one route install" yes \
		"$(case $fix in "sudo pigsty-dns route install --adapter resolved-link "*"--link-variant $v "*"--state-dir $ST/srv --yes") echo yes;; *) echo "no: $fix";; esac)"
	read -ra words <<<"${fix#sudo pigsty-dns }"
	out=$(PATH=$ST/bin:$PATH timeout 60 "$PIGSTY_DNS_BIN" "${words[@]}" --check-name meta.pigsty.test 2>&1); rc=$?
	echo "$out" >"$ST/logs/repair-$v.log"
	check "$v: row 5: that command (an idempotent route install) repairs the route, verified" 0 "$rc"
	[ "$rc" = 0 ] || echo "$out" | tail -5
	check "$v: row 5: ... meta.pigsty.test via the stub again" "NOERROR 10.10.10.10" "$(dq meta.pigsty.test)"
	check "$v: row 5: the files are still those of the first install" "" "$(owned_fingerprint | diff - "$ST/rroot-installed")"
}

row6_vpn() {  # a VPN-like default-route link, then links claiming the zones
	local v=$1 before out rc d
	mklink vpn0 && ip addr add 100.64.0.2/32 dev vpn0
	rctl dns vpn0 127.0.0.2; rctl domain vpn0 '~.'; rctl default-route vpn0 yes; wait_scope vpn0 DNS
	mark; before=$(answered)
	check "$v: row 6: with a ~. VPN link, meta.pigsty.test still via the daemon" "NOERROR 10.10.10.10" "$(dq meta.pigsty.test)"
	check "$v: row 6: ... the daemon answered it" yes "$([ "$(answered)" -gt "$before" ] && echo yes || echo no)"
	check "$v: row 6: ... the upstream (the VPN's server) never saw it" none "$(who_saw meta.pigsty.test)"
	dq vpn-$RANDOM.example.org >/dev/null
	check "$v: row 6: other names go to the VPN's server" upstream "$(who_saw 'vpn-[0-9]*.example.org')"
	out=$(rstatus "vpn-default-$v")
	check "$v: row 6: route status: a ~. link is no claim" 0 "$(grep -c '^FAIL' <<<"$out")"
	# every claim form is in tests/it; live: a subdomain of the zone, and the reverse zone
	[ "$v" = networkd ] && for d in '~corp.pigsty.test' '~10.10.10.in-addr.arpa'; do
		rctl domain vpn0 '~.' "$d"
		out=$(rstatus "vpn-claim-$v")
		check "$v: row 6: vpn0 claims $d -> route status names the link" 1 "$(grep -c "^FAIL other resolvers: .*vpn0.*${d#\~}" <<<"$out")"
		out=$(route install --link-variant "$v" --yes --state-dir "$ST/srv" 2>&1); rc=$?
		check "$v: row 6: vpn0 claims $d -> route install refuses (exit 4, naming vpn0)" "4 1" \
			"$rc $(grep -c "^error: .*vpn0" <<<"$out")"
	done
	ip link del vpn0
	check "$v: row 6: the refused installs changed nothing" "" "$(owned_fingerprint | diff - "$ST/rroot-installed")"
}

row89_edits_reinstall() {  # hand edits and a damaged journal; uninstall + install: the same files
	local v=$1 out rc j=$ST/rroot/var/lib/pigsty-dns-route/journal.json f
	f=$(sed -n 's/^ *"path": *"\([^"]*\)".*/\1/p' "$j" | head -1)
	cp "$j" "$ST/journal-installed.json"
	echo "# hand edit" >>"$f"
	out=$(rstatus "edited-$v")
	check "$v: row 8: a hand-edited file -> route status names it" 1 "$(grep -c "^FAIL drift: .*$f changed by hand" <<<"$out")"
	out=$(route uninstall --yes 2>&1); rc=$?; echo "$out" >"$ST/logs/uninstall-edited-$v.log"
	check "$v: row 8: uninstall leaves the changed file (exit 5, file still there)" "5 yes" "$rc $([ -f "$f" ] && echo yes || echo no)"
	sed -i '$d' "$f"
	out=$(route install --link-variant "$v" --yes --state-dir "$ST/srv" 2>&1); rc=$?
	check "$v: row 8: with the file restored, route install puts back what the partial uninstall removed" "0 " \
		"$rc $(owned_fingerprint | diff - "$ST/rroot-installed")"
	local damage want
	for damage in truncated notjson mode owner; do
		cp "$ST/journal-installed.json" "$j"
		case $damage in
			truncated) truncate -s 200 "$j";;
			notjson) echo 'not json' >"$j";;
			mode) chmod 666 "$j";;
			owner) chown 65534 "$j";;
		esac
		case $damage in truncated) want='truncated';; notjson) want='not JSON';; mode) want='mode 0666';; owner) want='owned by uid 65534';; esac
		out=$(rstatus "journal-$damage-$v")
		check "$v: row 8: journal $damage -> route status says so" 1 "$(grep -c "^FAIL journal: .*$want" <<<"$out" )"
		out=$(route uninstall --yes 2>&1); rc=$?
		check "$v: row 8: journal $damage -> uninstall refuses (exit 7), nothing removed" "7" \
			"$rc$(owned_fingerprint | diff - "$ST/rroot-installed")"
		chmod 644 "$j"; chown 0 "$j"
	done
	cp "$ST/journal-installed.json" "$j"
	out=$(route uninstall --yes 2>&1); rc=$?
	check "$v: row 9: uninstall" 0 "$rc"
	out=$(route install --link-variant "$v" --yes --state-dir "$ST/srv" --check-name meta.pigsty.test 2>&1); rc=$?
	echo "$out" >"$ST/logs/reinstall-$v.log"
	check "$v: row 9: install again" 0 "$rc"
	check "$v: row 9: byte-identical files" "" "$(owned_fingerprint | diff - "$ST/rroot-installed")"
	check "$v: row 9: an equivalent journal (all but written_at)" "" \
		"$(diff <(grep -v written_at "$j") <(grep -v written_at "$ST/journal-installed.json"))"
	owned_fingerprint >"$ST/rroot-installed"
}

row7_crash() {  # SIGKILL after the first command of an install, after the first removal of an uninstall
	local v=$1 out rc unit=$ST/rroot/etc/systemd/system/pigsty-dns-route.service
	route uninstall --yes >/dev/null 2>&1
	out=$(PIGSTY_DNS_TEST_CRASH_AFTER=2 route install --link-variant "$v" --yes --state-dir "$ST/srv" 2>&1); rc=$?
	echo "$out" >"$ST/logs/crash-install-$v.log"
	check "$v: row 7: install killed (SIGKILL) after its unit file and first command" "137 yes yes" \
		"$rc $([ -f "$unit" ] && echo yes || echo no) $(ip link show pigsty-dns0 >/dev/null 2>&1 && echo yes || echo no)"
	out=$(rstatus "crash-install-$v")
	check "$v: row 7: route status reports the interrupted install from the journal" 1 \
		"$(grep -c "^FAIL journal: .*an install was interrupted (journal state applying): written $unit" <<<"$out")"
	out=$(route uninstall --yes 2>&1); rc=$?; echo "$out" >"$ST/logs/crash-install-uninstall-$v.log"
	check "$v: row 7: route uninstall removes exactly what was written (root as before the install, link gone)" "0 no" \
		"$rc$(rroot_fingerprint | diff - "$ST/rroot-before") $(ip link show pigsty-dns0 >/dev/null 2>&1 && echo yes || echo no)"
	out=$(route install --link-variant "$v" --yes --state-dir "$ST/srv" 2>&1); rc=$?
	check "$v: row 7: route install again completes" 0 "$rc"
	out=$(PIGSTY_DNS_TEST_CRASH_AFTER=1 route uninstall --yes 2>&1); rc=$?
	echo "$out" >"$ST/logs/crash-uninstall-$v.log"
	check "$v: row 7: uninstall killed (SIGKILL) after removing the unit file" "137 no" "$rc $([ -f "$unit" ] && echo yes || echo no)"
	out=$(rstatus "crash-uninstall-$v")
	check "$v: row 7: route status reports the half-removed route" 1 "$(grep -c "^FAIL drift: $unit is missing" <<<"$out")"
	out=$(route uninstall --yes 2>&1); rc=$?
	check "$v: row 7: route uninstall again completes" "0" "$rc$(rroot_fingerprint | diff - "$ST/rroot-before")"
	out=$(route install --link-variant "$v" --yes --state-dir "$ST/srv" 2>&1); rc=$?
	check "$v: row 7: and install again" 0 "$rc"
	owned_fingerprint >"$ST/rroot-installed"
}

lifecycle_rows() {
	local v=$1 t0=$SECONDS
	owned_fingerprint >"$ST/rroot-installed"
	local row
	for row in row2_daemon row3_restarts row4_uplink_renewal row5_link_lost row6_vpn row89_edits_reinstall row7_crash; do
		# variant-independent rows run once: the daemon and the uplink on networkd, edits and crashes on runtime
		case $v:$row in networkd:row89_edits_reinstall|networkd:row7_crash|runtime:row2_daemon|runtime:row4_uplink_renewal) continue;; esac
		local t1=$SECONDS; "$row" "$v"; echo "# $v: $row took $((SECONDS - t1)) s"
	done
	echo "# $v: lifecycle rows took $((SECONDS - t0)) s"
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
	check "$v: the link also routes the reverse zone of the live /24" "~10.10.10.in-addr.arpa $ZONE_DOMAINS" "$(link_domains)"
	pig_check "$v: the journal records both zones" 1 \
		"$(tr -d ' \n' <"$ST/rroot/var/lib/pigsty-dns-route/journal.json" 2>/dev/null | grep -c '"zones":\["pigsty.test","pigsty"\]')"
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
	lifecycle_rows "$v"
	moved_24 "$v"
	stop_daemon; mark
	check "$v: daemon down -> stub SERVFAIL" "SERVFAIL" "$(dq meta.pigsty.test)"
	check "$v: daemon down -> nothing reaches the upstream" none "$(who_saw meta.pigsty.test)"
	mark; rq "lab-$RANDOM.pigsty" >/dev/null; dq i.pigsty >/dev/null; getent ahostsv4 sss.pigsty >/dev/null
	pig_check "$v: daemon down -> no *.pigsty query reaches the upstream" none "$(who_saw '[^ ]*\.pigsty')"
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
	hosts_measure() {   # hosts_measure LABEL RUNS POSBOUND NEGBOUND
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
	hosts_measure default 2 0 0
	# with CacheFromLocalhost=yes resolved caches by the TTL and the SOA minimum
	stop_resolved; printf '[Resolve]\nCache=yes\nCacheFromLocalhost=yes\n' >/run/systemd/resolved.conf.d/50-cache.conf; start_resolved
	env -u PIGSTY_DNS_LISTEN PATH=$ST/bin:$PATH timeout 60 "$PIGSTY_DNS_BIN" route install --root "$ST/rroot" --link-variant runtime --yes --state-dir "$ST/srv" >>"$ST/logs/install-hosts.log" 2>&1
	check "hosts: install again after resolved's restart" 0 "$?"
	hosts_measure cached "$runs" $ttl $neg
	wait_visible_live
	route uninstall --yes >"$ST/logs/uninstall-hosts.log" 2>&1
	stop_daemon; stop_resolved; stop_upstream; ip link del pu0
	rm -f /run/systemd/resolved.conf.d/40-upstream.conf /run/systemd/resolved.conf.d/50-cache.conf "$ST/rroot/etc/hosts"
	umount /etc/hosts
}
# load --wait-visible against this resolved (with CacheFromLocalhost=yes, so a program's cached answer
# is real): it returns once getent shows the change, and fails at once (exit 5) naming a hosts line that
# answers the name first. Needs hosts_mode's helpers and state; the route journal is found at its real
# place, /var/lib/pigsty-dns-route, through a bind of the --root's /var/lib in this namespace only.
wait_visible_live() {
	local out rc t0 el got t=$SECONDS
	mount --bind "$ST/rroot/var/lib" /var/lib || die "bind /var/lib"
	wv() { "$PIGSTY_DNS_SERVE_BIN" load "$ST/conv-$1.yml" --ttl $ttl --state-dir "$ST/srv" --wait-visible 2>&1; }
	for x in c:23 d:24 e:25; do
		printf 'all:\n  hosts:\n    10.10.10.10: { nodename: meta }\n    10.10.10.%s: { nodename: wv }\n' "${x#*:}" >"$ST/conv-${x%%:*}.yml"
	done
	ld c; ga wv.pigsty.test >/dev/null   # a program asked: resolved caches 10.10.10.23 up to the TTL
	t0=$(now); out=$(wv d); rc=$?; el=$(since "$t0"); got=$(ga wv.pigsty.test)
	echo "$out" >"$ST/logs/wait-visible.log"
	check "wait-visible: load --wait-visible exits 0 once the change shows" 0 "$rc"
	check "wait-visible: it says when the name became visible" 1 "$(grep -c '^wv.pigsty.test: visible after ' <<<"$out")"
	check "wait-visible: getent has the new address the moment load returns" 10.10.10.24 "$got"
	check "wait-visible: it returned within the TTL ($ttl s) + 1.5 s" yes "$(within $ttl "$el")"
	echo "# wait-visible: load --wait-visible returned after $el s ($(grep -o 'visible after [0-9.]* s' <<<"$out"), --ttl $ttl, CacheFromLocalhost=yes)"
	printf '127.0.0.1 localhost\n10.10.10.99 wv.pigsty.test\n' >"$ST/hosts"
	t0=$(now); out=$(wv e); rc=$?; el=$(since "$t0")
	echo "$out" >"$ST/logs/wait-visible-shadowed.log"
	check "wait-visible: a hosts line in the way: exit 5" 5 "$rc"
	check "wait-visible: ... naming the line, at once (not after the cache bound)" "1 yes" \
		"$(grep -c '^wv.pigsty.test: line 2 of /etc/hosts (10.10.10.99 wv.pigsty.test) answers it before the zone' <<<"$out") $(within 0 "$el")"
	printf '127.0.0.1 localhost\n' >"$ST/hosts"
	umount /var/lib
	echo "# wait-visible took $((SECONDS - t)) s"
}
# ================================================================ end of issue 23 (hosts-wire)

# ================================================================ issue 31: from the user's Pigsty config
# Run alone as `route-lab.sh pigsty` (tests/labs/route_lab.rs: route_lab_pigsty_journey).
# The README's journey: serve --records a stock Pigsty config (conf/meta.yml, tests/data/pigsty-conf)
# --follow, route install, then the programs users run resolve pg-meta.pigsty.test: getent, a real psql
# (its connection error names 10.10.10.10), curl and Python's getaddrinfo; an edit that adds a cluster is
# live without a restart; a broken edit keeps the last good. Issue 37: i.pigsty (the portal) resolves for
# getent, Python and curl through the same route, an unrelated name still goes to the upstream, and with
# the daemon down no .pigsty name reaches it.
pigsty_journey() {
	local out rc pid cfg=$ST/pigsty.yml i got
	echo "=== from a Pigsty config (issue 31)"
	cp "$PIGSTY_DNS_STOCK_META" "$cfg"
	printf '127.0.0.1 localhost\n' >"$ST/hosts"; mount --bind "$ST/hosts" /etc/hosts || die "bind /etc/hosts"
	ln -sf "$ST/hosts" "$ST/rroot/etc/hosts"
	printf '[Resolve]\nDNS=127.0.0.2\n' >/run/systemd/resolved.conf.d/40-upstream.conf
	start_upstream; uplink; start_resolved
	"$PIGSTY_DNS_SERVE_BIN" serve --listen 127.0.0.1:5354 --records "$cfg" --follow --state-dir "$ST/pig" \
		>>"$ST/logs/daemon-pigsty.log" 2>&1 &
	pid=$!
	for _ in $(seq 50); do [ -f "$ST/pig/status.json" ] && ss -lun | grep -q ' 127.0.0.1:5354 ' && break; sleep 0.1; done
	out=$(env -u PIGSTY_DNS_LISTEN PATH=$ST/bin:$PATH timeout 60 "$PIGSTY_DNS_BIN" route install --root "$ST/rroot" \
		--link-variant runtime --yes --check-name pg-meta.pigsty.test --state-dir "$ST/pig" 2>&1); rc=$?
	echo "$out" >"$ST/logs/install-pigsty.log"
	check "pigsty: route install (verified with pg-meta.pigsty.test)" 0 "$rc"
	check "pigsty: getent ahostsv4 pg-meta.pigsty.test" 10.10.10.10 "$(getent ahostsv4 pg-meta.pigsty.test | awk '{print $1; exit}')"
	check "pigsty: getent ahostsv4 pg-meta-1.pigsty.test" 10.10.10.10 "$(getent ahostsv4 pg-meta-1.pigsty.test | awk '{print $1; exit}')"
	out=$(PGCONNECT_TIMEOUT=3 timeout 10 psql -h pg-meta.pigsty.test -U dbuser_meta -d meta -w -c 'select 1' 2>&1)
	echo "$out" >"$ST/logs/psql.log"
	check "pigsty: psql -h pg-meta.pigsty.test connects to 10.10.10.10 (its error names it)" 1 \
		"$(grep -c 'connection to server at "pg-meta.pigsty.test" (10.10.10.10), port 5432 failed' <<<"$out")"
	out=$(timeout 10 curl -v --max-time 3 http://pg-meta.pigsty.test:8008/ 2>&1)
	check "pigsty: curl resolves pg-meta.pigsty.test to 10.10.10.10" 1 "$(grep -c 'Trying 10.10.10.10:8008' <<<"$out")"
	check "pigsty: Python's socket.getaddrinfo" 10.10.10.10 \
		"$(python3 -c 'import socket; print(socket.getaddrinfo("pg-meta.pigsty.test", 5432, socket.AF_INET)[0][4][0])' 2>&1)"
	# Issue 37: the names Pigsty gives, under its own .pigsty, through the same route.
	pig_check "pigsty: getent ahostsv4 i.pigsty" 10.10.10.10 "$(getent ahostsv4 i.pigsty | awk '{print $1; exit}')"
	pig_check "pigsty: Python's socket.getaddrinfo of i.pigsty" 10.10.10.10 \
		"$(python3 -c 'import socket; print(socket.getaddrinfo("i.pigsty", 443, socket.AF_INET)[0][4][0])' 2>&1)"
	out=$(timeout 10 curl -v --max-time 3 https://i.pigsty/ 2>&1); echo "$out" >"$ST/logs/curl-portal.log"
	pig_check "pigsty: curl -v https://i.pigsty/ tries 10.10.10.10 (the portal's name, resolved)" 1 \
		"$(grep -c 'Trying 10.10.10.10:443' <<<"$out")"
	mark; dq example.org >/dev/null
	check "pigsty: an unrelated name still goes to the upstream" upstream "$(who_saw example.org)"
	out=$(route status --state-dir "$ST/pig" 2>&1); echo "$out" >"$ST/logs/status-pigsty.log"
	pig_check "pigsty: route status: every served zone is routed" 1 \
		"$(grep -c '^ok   zones: routes every zone the daemon serves (pigsty.test, pigsty)' <<<"$out")"
	# An edit that adds a cluster: live without a restart.
	python3 - "$cfg" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace("    infra:\n", "    pg-test:\n      hosts: { 10.10.10.11: { pg_seq: 1, pg_role: primary } }\n      vars: { pg_cluster: pg-test }\n    infra:\n", 1)
open(p, "w").write(s)
PY
	got=
	for i in $(seq 100); do
		got=$(getent ahostsv4 pg-test.pigsty.test | awk '{print $1; exit}'); [ "$got" = 10.10.10.11 ] && break; sleep 0.1
	done
	check "pigsty: a cluster added to the config is live without a restart" 10.10.10.11 "$got"
	measure "pigsty: the added cluster answered after about $((i / 10)).$((i % 10)) s"
	check "pigsty: ... by the same server process" 1 "$(kill -0 "$pid" 2>/dev/null && echo 1)"
	# A broken edit (a CIDR target, which Pigsty would write verbatim): the last good stays.
	sed -i 's/    pg_version: 18 /    pg_dns_target: 10.10.10.50\/24\n    pg_version: 18 /' "$cfg"
	grep -q 'pg_dns_target: 10.10.10.50/24' "$cfg" || die "the broken edit did not apply"
	sleep 3
	check "pigsty: a broken edit keeps the last good (pg-test still answers)" 10.10.10.11 \
		"$(getent ahostsv4 pg-test.pigsty.test | awk '{print $1; exit}')"
	check "pigsty: ... and pg-meta" 10.10.10.10 "$(getent ahostsv4 pg-meta.pigsty.test | awk '{print $1; exit}')"
	check "pigsty: the server logged the refusal naming the value" 1 \
		"$(grep -q 'is a CIDR' "$ST/logs/daemon-pigsty.log" && echo 1)"
	stopkill "$pid"
	mark; rq i.pigsty >/dev/null; dq "lab-$RANDOM.pigsty" >/dev/null; getent ahostsv4 sss.pigsty >/dev/null
	pig_check "pigsty: daemon down -> no *.pigsty query reaches the upstream" none "$(who_saw '[^ ]*\.pigsty')"
	route uninstall --yes >"$ST/logs/uninstall-pigsty.log" 2>&1
	check "pigsty: route uninstall" 0 "$?"
	stop_resolved; stop_upstream; ip link del pu0
	rm -f /run/systemd/resolved.conf.d/40-upstream.conf "$ST/rroot/etc/hosts"
	umount /etc/hosts
}

inner() {
	setup_ns
	make_wrappers
	echo "# $(LD_LIBRARY_PATH=$LIBDIR "$ROOT/lib/systemd/systemd-resolved" --version | head -1)"
	[ $# -gt 0 ] || set -- networkd runtime
	local t0=$SECONDS s
	if [ "$*" = pigsty ]; then
		pigsty_journey
	else
		for s in "$@"; do
			case $s in networkd|runtime) variant "$s";; *) die "unknown variant $s";; esac
		done
		hosts_mode   # issue 23
	fi
	echo "# logs: $ST/logs; namespace part took $((SECONDS - t0)) s"
	echo "$PASS passed, $FAIL failed"
	[ "$FAIL" = 0 ]; exit
}

if [ "${1:-}" = "--inner" ]; then shift; inner "$@"; else
	outer "$@"; fi
