#!/bin/bash
# delegate-lab.sh - end-to-end test of `pigsty-dns route install|uninstall` with the resolved-delegate
# adapter (/etc/systemd/dns-delegate.d/, systemd >= 258) against a REAL systemd-resolved 258+ from a
# minimal Debian unstable ("sid") root made with debootstrap, inside a throw-away network + mount + pid
# namespace with a private D-Bus. Adapted from the project's reference lab (shared/lab/sid-delegate-lab.sh).
#
# Everything the route touches runs inside the sid root (chroot): `pigsty-dns serve`, `pigsty-dns route`
# (the host binary, bind-mounted in; it needs only glibc), resolved, resolvectl, getent, dig. The route's
# --root is the per-run dir /run/lab/rroot, whose etc/systemd is bind-mounted over the root's /etc/systemd
# (so resolved reads what the route writes); the journal lives under it too. /run and /tmp are tmpfs.
# Nothing on the host changes and the cached sid root is left as it was (both are checked).
#
# There is no systemd as PID 1 in the lab, so `systemctl` on the route's PATH is a lab wrapper: it
# accepts only `reload systemd-resolved[.service]` and does what systemd does for Type=notify-reload,
# SIGHUP to resolved, then waits until resolved logged the reload. The production path is unchanged.
#
# Usage (as root): delegate-lab.sh [test]   PASS/FAIL lines, then "N passed, N failed"; exit 0 iff
#                                            nothing failed
#                  delegate-lab.sh build    only build (or verify) the cached sid root
# Environment:
#   PIGSTY_DNS_BIN        the pigsty-dns binary (required)
#   PIGSTY_DNS_SERVE_BIN  what runs `serve --listen 127.0.0.1:5354 --records F --state-dir D` (default
#                         PIGSTY_DNS_BIN)
#   PIGSTY_DNS_RECORDS    zones/pigsty.test.yml (required)
#   SID_CACHE             where the sid root is cached (default ${TMPDIR:-/tmp}/pigsty-dns-sid-lab; the
#                         root is $SID_CACHE/root, built once per machine, ~50 s and ~180 MB)
#   LAB                   per-run work dir (default $SID_CACHE/run); $LAB/state is recreated every run
#   LAB_TIMEOUT           hard limit for the namespace part, seconds (default 300)
#   MIRROR                Debian archive URL for debootstrap (default: the first Debian archive URI in
#                         the host's apt sources that carries SUITE; the apt configuration is not changed)
#   SUITE                 Debian suite to bootstrap (default sid); REBUILD=1 builds the root again
#   LAB_REVERSE_SERVED    default 1: the daemon answers PTRs for its /24 (issue 12); 0 skips only the
#                         checks that need a PTR answer, for a daemon built without it
#   LAB_PIGSTY_SERVED     default 1: the daemon serves pigsty.test and pigsty (issue 37) and the route
#                         carries both; 0: a daemon of pigsty.test alone, routed alone (PIGSTY_DNS_ZONE)
# Addresses: loopback and TEST-NET-2 198.51.100.254/32 on an uplink stand-in, all inside the private
# netns (no route anywhere). The daemon listens on 127.0.0.1:5354; the "default upstream" stand-in
# (dnsmasq, global DNS=, answers every name with 203.0.113.99, logs every query) on 127.0.0.2:53.
set -uo pipefail

SID_CACHE=${SID_CACHE:-${TMPDIR:-/tmp}/pigsty-dns-sid-lab}
LAB=${LAB:-$SID_CACHE/run}
SUITE=${SUITE:-sid}
SID=$SID_CACHE/root       # debootstrap'd root, reused between runs (same layout as the reference lab's)
ST=$LAB/state             # per-run state; seen inside the root as $IN
IN=/run/lab
SELF=$(readlink -f "$0")
INCLUDE=systemd-resolved,dbus,dnsmasq-base,bind9-dnsutils,iproute2
MIN_VERSION=258
PORT=5354

die() { echo "delegate-lab: $*" >&2; exit 2; }

# ---------------------------------------------------------------- outside the namespace
apt_uris() {  # Debian archive URIs of the host's enabled "deb" sources, one-line and deb822 format
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z+]+:\/\//) { print $i; break } }' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk 'BEGIN { RS = ""; FS = "\n" }
		{
			types = ""; uris = ""; enabled = "yes"
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^[ \t]*#/ || index($i, ":") == 0) continue
				key = tolower(substr($i, 1, index($i, ":") - 1)); val = substr($i, index($i, ":") + 1)
				if (key == "types") types = val
				else if (key == "uris") uris = val
				else if (key == "enabled") enabled = tolower(val)
			}
			gsub(/[ \t]/, "", enabled)
			if (types ~ /(^|[ \t])deb([ \t]|$)/ && enabled != "no") {
				n = split(uris, u, /[ \t]+/)
				for (j = 1; j <= n; j++) if (u[j] != "") print u[j]
			}
		}' "$f"
	done
}

pick_mirror() {  # the first host apt URI that serves dists/$SUITE from the Debian archive
	if [ -n "${MIRROR:-}" ]; then echo "$MIRROR"; return 0; fi
	local u
	for u in $({ apt_uris | grep -E '/debian/?$'; apt_uris; } | grep -vi security | awk '!seen[$0]++'); do
		u=${u%/}
		# grep without -q reads to the end: with pipefail, an early exit would fail wget (SIGPIPE)
		if timeout 60 wget -q -O - "$u/dists/$SUITE/Release" 2>/dev/null | grep '^Origin: Debian' >/dev/null; then
			echo "$u"; return 0
		fi
	done
	return 1
}

resolved_version() {  # major version of the root's systemd-resolved, or nothing
	chroot "$SID" /usr/lib/systemd/systemd-resolved --version 2>/dev/null | awk 'NR == 1 { print $2 }'
}

build_root() {   # under an flock: concurrent runs build the cached root once
	mkdir -p "$SID_CACHE"
	exec 9>"$SID_CACHE/.lock"
	flock -w 240 9 || die "another run holds $SID_CACHE/.lock"
	if [ -z "${REBUILD:-}" ] && [ -f "$SID/.lab-root-ok" ]; then exec 9>&-; return 0; fi
	command -v debootstrap >/dev/null || die "missing debootstrap (apt-get install debootstrap)"
	command -v wget >/dev/null || die "missing wget (apt-get install wget)"
	local mirror d
	mirror=$(pick_mirror) || die "no Debian archive in the host's apt sources serves suite $SUITE (set MIRROR=)"
	for d in "$SID" "$SID.new"; do   # never delete through a mount point
		[ -e "$d" ] || continue
		awk -v p="$d" '$5 == p || index($5, p "/") == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo &&
			die "something is mounted under $d; refusing to delete it"
	done
	rm -rf "$SID" "$SID.new"
	echo "# building the $SUITE root from $mirror (log: $SID_CACHE/debootstrap.log)"
	local t0=$SECONDS
	# a private mount namespace keeps debootstrap's /proc and /sys mounts in the target off the host
	timeout -k 10 200 unshare --mount --propagation private \
		debootstrap --variant=minbase --include="$INCLUDE" "$SUITE" "$SID.new" "$mirror" \
		>"$SID_CACHE/debootstrap.log" 2>&1 || die "debootstrap failed (see $SID_CACHE/debootstrap.log)"
	rm -f "$SID.new"/var/cache/apt/archives/*.deb
	rm -rf "$SID.new"/var/lib/apt/lists/*
	mv "$SID.new" "$SID"
	local v; v=$(resolved_version)
	echo "# root built in $((SECONDS - t0)) s, $(du -sh "$SID" | cut -f1), systemd-resolved ${v:-?}"
	[ -n "$v" ] && [ "$v" -ge "$MIN_VERSION" ] 2>/dev/null ||
		die "$SUITE has systemd-resolved '${v:-none}', DNS delegates need >= $MIN_VERSION"
	echo "$v" >"$SID/.lab-root-ok"
	exec 9>&-
}

host_fingerprint() {   # what must be byte-identical on the host before and after
	sha256sum /etc/resolv.conf /etc/nsswitch.conf /etc/passwd /etc/group 2>/dev/null
	find /etc/systemd /etc/NetworkManager -type f -exec sha256sum {} + 2>/dev/null | sort -k2
	ls /run/systemd/resolve 2>/dev/null || true   # pipefail: a missing dir must not read as a change
}
sid_fingerprint() {    # the cached root must come out of a run as it went in
	(cd "$SID" && find etc var/lib usr/lib/systemd -xdev \( -type f -o -type l \) -printf '%p %s %T@\n' 2>/dev/null | sort)
}

prepare_state() {
	rm -rf "$ST"
	mkdir -p "$ST/logs" "$ST/bin" "$ST/srv" "$ST/empty" "$ST/rroot/var/lib"
	# the route's root: a copy of the sid root's own /etc/systemd (no dns-delegate.d, as shipped)
	cp -a "$SID/etc/systemd" "$ST/rroot/etc-systemd.tmp" && mkdir -p "$ST/rroot/etc" &&
		mv "$ST/rroot/etc-systemd.tmp" "$ST/rroot/etc/systemd" || die "copy etc/systemd"
	# the route reads NSS through --root (issue 23): the sid root's nsswitch.conf and resolv.conf symlink
	cp "$SID/etc/nsswitch.conf" "$ST/rroot/etc/nsswitch.conf" && cp -P "$SID/etc/resolv.conf" "$ST/rroot/etc/resolv.conf" ||
		die "copy nsswitch.conf/resolv.conf"
	cp "$PIGSTY_DNS_RECORDS" "$ST/records.yml"
	: >"$ST/bin/pigsty-dns"; : >"$ST/bin/pigsty-dns-serve"   # bind-mount targets
	cat >"$ST/bin/systemctl" <<EOF
#!/bin/sh
# Lab stand-in for systemctl (no systemd as PID 1 here). Only "reload systemd-resolved[.service]":
# SIGHUP to the lab's resolved, which is what systemctl reload sends to a Type=notify-reload
# service, then wait (max 10 s) until resolved logged the reload, as systemctl reload waits.
echo "\$*" >>$IN/logs/systemctl.log
case "\$*" in
"reload systemd-resolved.service"|"reload systemd-resolved") ;;
*) echo "lab systemctl: only 'reload systemd-resolved' is supported here, not: \$*" >&2; exit 1;;
esac
pid=\$(cat $IN/resolved.pid 2>/dev/null) && [ -n "\$pid" ] || { echo "lab systemctl: resolved is not running" >&2; exit 3; }
n=\$(grep -c 'Config file reloaded' $IN/logs/resolved.log)
kill -HUP "\$pid" || exit 1
i=0
while [ \$i -lt 100 ]; do
	[ "\$(grep -c 'Config file reloaded' $IN/logs/resolved.log)" -gt "\$n" ] && exit 0
	sleep 0.1; i=\$((i + 1))
done
echo "lab systemctl: resolved did not log a reload after SIGHUP" >&2; exit 1
EOF
	chmod 755 "$ST/bin/systemctl"
	cat >"$ST/dbus-system.conf" <<'EOF'
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
  <includedir>/usr/share/dbus-1/system.d</includedir>
</busconfig>
EOF
}

outer() {
	[ "$(id -u)" = 0 ] || die "must run as root"
	local t
	for t in unshare chroot mount timeout flock awk sha256sum; do command -v "$t" >/dev/null || die "missing $t"; done
	local mode=${1:-test}
	build_root
	[ "$mode" = build ] && { echo "# root ready: $SID (systemd-resolved $(resolved_version))"; exit 0; }
	[ "$mode" = test ] || die "unknown mode $mode (test|build)"
	[ -x "${PIGSTY_DNS_BIN:-}" ] || die "set PIGSTY_DNS_BIN to the pigsty-dns binary"
	PIGSTY_DNS_SERVE_BIN=${PIGSTY_DNS_SERVE_BIN:-$PIGSTY_DNS_BIN}
	[ -x "$PIGSTY_DNS_SERVE_BIN" ] || die "PIGSTY_DNS_SERVE_BIN ($PIGSTY_DNS_SERVE_BIN) is not executable"
	[ -f "${PIGSTY_DNS_RECORDS:-}" ] || die "set PIGSTY_DNS_RECORDS to zones/pigsty.test.yml"
	export PIGSTY_DNS_BIN PIGSTY_DNS_SERVE_BIN SID_CACHE LAB SUITE
	prepare_state
	host_fingerprint >"$ST/host-before"
	sid_fingerprint >"$ST/sid-before"
	# LIBMOUNT_UTAB keeps mount(8) from writing /run/mount/utab on the host.
	timeout -k 5 "${LAB_TIMEOUT:-300}" env LIBMOUNT_UTAB="$ST/utab" \
		unshare --net --mount --pid --fork --kill-child=SIGKILL --mount-proc --propagation private \
		"$SELF" --inner
	local rc=$?
	if host_fingerprint | diff - "$ST/host-before" >/dev/null; then
		echo "PASS: host: /etc/resolv.conf, nsswitch.conf, passwd, group, /etc/systemd, /run/systemd/resolve unchanged"
	else
		echo "FAIL: host files changed:"; host_fingerprint | diff - "$ST/host-before"; rc=1
	fi
	if sid_fingerprint | diff - "$ST/sid-before" >/dev/null; then
		echo "PASS: the cached sid root is unchanged"
	else
		echo "FAIL: the cached sid root changed:"; sid_fingerprint | diff - "$ST/sid-before" | head; rc=1
	fi
	exit $rc
}

# ---------------------------------------------------------------- inside the namespace (PID 1)
KIND=; DBUS_PID=; RESOLVED_PID=; SRV_PID=; UP_PID=
PASS=0; FAIL=0
ULOG=; MARK_U=0
CHROOT_PATH=$IN/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# run a program of the sid root; daemons are started with a plain "chroot ... &" instead, so that
# $! is the daemon itself (chroot and env exec it) and not a subshell
sx() { chroot "$SID" env PATH="$CHROOT_PATH" "$@"; }
rctl() { timeout 20 chroot "$SID" resolvectl --no-pager "$@"; }
route() { timeout 60 chroot "$SID" env PATH="$CHROOT_PATH" "$IN/bin/pigsty-dns" route "$@" --root "$IN/rroot"; }

setup_ns() {
	mount -t tmpfs -o mode=755 tmpfs "$SID/run" || die "tmpfs run"
	mkdir -p "$SID$IN" "$SID/run/dbus" "$SID/run/lock" "$SID/run/systemd/resolved.conf.d"
	mount --bind "$ST" "$SID$IN" || die "bind state"
	mount --bind "$PIGSTY_DNS_BIN" "$SID$IN/bin/pigsty-dns" || die "bind pigsty-dns"
	mount --bind "$PIGSTY_DNS_SERVE_BIN" "$SID$IN/bin/pigsty-dns-serve" || die "bind pigsty-dns (serve)"
	mount -t proc proc "$SID/proc" || die "proc"
	mount -t sysfs -o ro sysfs "$SID/sys" || die "sysfs"    # read-only sysfs of this netns
	mount -t tmpfs -o mode=1777 tmpfs "$SID/tmp" || die "tmpfs tmp"
	mount --bind "$ST/rroot/etc/systemd" "$SID/etc/systemd" || die "bind etc/systemd"
	local d
	for d in usr/lib/systemd/resolved.conf.d usr/local/lib/systemd/resolved.conf.d \
	         usr/lib/systemd/dns-delegate.d usr/local/lib/systemd/dns-delegate.d; do
		[ -d "$SID/$d" ] && mount --bind "$ST/empty" "$SID/$d"
	done
	# isolation: compile-time defaults made explicit where they matter (in /run, not in the route's root)
	printf '[Resolve]\nFallbackDNS=\nLLMNR=no\nMulticastDNS=no\nDNSSEC=no\nDNSOverTLS=no\nCache=no\n' \
		>"$SID/run/systemd/resolved.conf.d/10-lab.conf"
	printf '[Resolve]\nDNS=127.0.0.2\n' >"$SID/run/systemd/resolved.conf.d/40-upstream.conf"
	sx ip link set lo up
	if sx ip link add lab_probe type dummy 2>/dev/null; then KIND=dummy; sx ip link del lab_probe; else KIND=ifb; fi
	chroot "$SID" dbus-daemon --config-file="$IN/dbus-system.conf" --nofork --nopidfile --nosyslog >"$ST/logs/dbus.log" 2>&1 &
	DBUS_PID=$!
	for _ in $(seq 50); do [ -S "$SID/run/dbus/system_bus_socket" ] && break; sleep 0.1; done
	[ -S "$SID/run/dbus/system_bus_socket" ] || die "dbus-daemon did not start"
	ULOG=$ST/logs/upstream.log; : >"$ULOG"; : >"$ST/logs/resolved.log"; : >"$ST/logs/systemctl.log"
}

waitport() { for _ in $(seq 50); do sx ss -lun | grep -q " $1 " && return 0; sleep 0.1; done; return 1; }
stopkill() { [ -n "${1:-}" ] || return 0; kill "$1" 2>/dev/null; for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done; kill -9 "$1" 2>/dev/null; wait "$1" 2>/dev/null; return 0; }

start_upstream() {    # stand-in for the host's normal DNS; answers anything, logs what it gets
	chroot "$SID" dnsmasq --conf-file=/dev/null --keep-in-foreground --port=53 --listen-address=127.0.0.2 \
		--bind-interfaces --no-resolv --no-hosts --no-negcache --cache-size=0 --user=root \
		--pid-file="$IN/upstream.nspid" --address=/#/203.0.113.99 \
		--log-queries=extra --log-facility="$IN/logs/upstream.log" >>"$ST/logs/upstream.out" 2>&1 &
	UP_PID=$!; waitport 127.0.0.2:53 || die "upstream stand-in did not start"
}
stop_upstream() { stopkill "$UP_PID"; UP_PID=; }

start_resolved() {
	chroot "$SID" env SYSTEMD_LOG_LEVEL=debug /usr/lib/systemd/systemd-resolved >>"$ST/logs/resolved.log" 2>&1 &
	RESOLVED_PID=$!; echo "$RESOLVED_PID" >"$ST/resolved.pid"
	for _ in $(seq 100); do
		[ -S "$SID/run/systemd/resolve/io.systemd.Resolve" ] && sx ss -lun | grep -q '127.0.0.53%lo:53 ' &&
			rctl status >/dev/null 2>&1 && return 0
		kill -0 "$RESOLVED_PID" 2>/dev/null || break; sleep 0.1
	done
	die "systemd-resolved did not come up (see $ST/logs/resolved.log)"
}
stop_resolved() { stopkill "$RESOLVED_PID"; RESOLVED_PID=; rm -f "$ST/resolved.pid"; rm -rf "$SID/run/systemd/resolve"; }

start_daemon() {
	chroot "$SID" "$IN/bin/pigsty-dns-serve" serve --listen 127.0.0.1:$PORT --records "$IN/records.yml" \
		--state-dir "$IN/srv" >>"$ST/logs/daemon.log" 2>&1 &
	SRV_PID=$!
	for _ in $(seq 50); do
		sx ss -lun | grep -q " 127.0.0.1:$PORT " && sx ss -ltn | grep -q " 127.0.0.1:$PORT " &&
			[ -f "$ST/srv/status.json" ] && return 0
		sleep 0.1
	done
	die "pigsty-dns serve did not come up (see $ST/logs/daemon.log)"
}
stop_daemon() { stopkill "$SRV_PID"; SRV_PID=; }

mklink() { sx ip link add "$1" type "$KIND" && sx ip link set "$1" addrgenmode none && sx ip link set "$1" up; }
uplink() { mklink pu0 && sx ip addr add 198.51.100.254/32 dev pu0; }   # gives the netns a routable address

# the server rewrites status.json every 2 s: read counters.refused from a write made after this call
stamp() { sed -n 's/.*"updated": *"\([^"]*\)".*/\1/p' "$ST/srv/status.json" | head -1; }
refused() {
	local s0; s0=$(stamp)
	for _ in $(seq 60); do [ "$(stamp)" != "$s0" ] && break; sleep 0.1; done
	sed -n 's/.*"refused": *\([0-9]*\).*/\1/p' "$ST/srv/status.json" | head -1
}

# every query the daemon answered (any rcode), from a status.json write made after this call
answered() {
	local s0; s0=$(stamp)
	for _ in $(seq 60); do [ "$(stamp)" != "$s0" ] && break; sleep 0.1; done
	grep -o '"\(noerror\|nxdomain\|refused\|formerr\|notimp\|servfail\|badvers\|other\)": *[0-9]*' "$ST/srv/status.json" |
		awk -F: '{n += $2} END {print n + 0}'
}
REVERSE_SERVED=${LAB_REVERSE_SERVED:-1}
# A daemon that serves pigsty.test alone: it and every route command read the one zone from the variable.
[ "${LAB_PIGSTY_SERVED:-1}" = 1 ] || export PIGSTY_DNS_ZONE=pigsty.test
if [ "${LAB_PIGSTY_SERVED:-1}" = 1 ]; then ZONE_DOMAINS="~pigsty.test ~pigsty"; else ZONE_DOMAINS="~pigsty.test"; fi
ptr_check() {  # ptr_check DESCRIPTION EXPECTED ACTUAL: a check that needs the daemon's PTR answers
	if [ "$REVERSE_SERVED" = 1 ]; then check "$@"
	else echo "SKIP (LAB_REVERSE_SERVED=0, the daemon serves no PTRs): $1"; fi
}
# reverse lookups through the route: the canonical name, or the error text
rq_ptr() { local out; out=$(rctl --cache=no query "$1" 2>&1 | head -1); out=${out#"$1: "}; out=${out%% *}; echo "${out#resolve call failed: }"; }
ge_ptr() { timeout 20 chroot "$SID" getent hosts "$1" | awk '{print $2; exit}'; }
upstream_saw_ptr() {  # did the default-upstream stand-in get the PTR question for ADDR since the last mark?
	sleep 0.3
	local q; q=$(awk -F. '{print $4"."$3"."$2"."$1".in-addr.arpa"}' <<<"$1")
	tail -n +$((MARK_U + 1)) "$ULOG" | grep -q "query\[PTR\] $q " && echo yes || echo no
}
moved_24() {  # a later generation moves to 10.10.12.0/24: status calls it drift, its next: command re-routes
	local out rc fix words
	printf 'all:\n  hosts:\n    10.10.12.10: { nodename: meta }\n' >"$ST/moved.yml"
	chroot "$SID" "$IN/bin/pigsty-dns-serve" load "$IN/moved.yml" --state-dir "$IN/srv" >>"$ST/logs/load.log" 2>&1
	for _ in $(seq 50); do
		[ "$(timeout 5 chroot "$SID" dig +short +time=1 +tries=1 @127.0.0.1 -p $PORT meta.pigsty.test A)" = 10.10.12.10 ] && break
		sleep 0.1
	done
	out=$(route status --state-dir "$IN/srv" 2>&1); echo "$out" >"$ST/logs/status-moved.log"
	check "moved /24: route status reports the routed reverse zone as drift" 1 \
		"$(grep -c "^FAIL reverse zone: drift: the route carries 10.10.10.in-addr.arpa, but the live generation's addresses moved to 12.10.10.in-addr.arpa" <<<"$out")"
	fix=$(awk '/^FAIL reverse zone/ {getline; sub(/^ *next: */, ""); print; exit}' <<<"$out")
	check "moved /24: its next: is one route install" yes \
		"$(case $fix in "sudo pigsty-dns route install --adapter resolved-delegate "*"--state-dir $IN/srv --yes") echo yes;; *) echo "no: $fix";; esac)"
	read -ra words <<<"${fix#sudo pigsty-dns }"
	out=$(timeout 60 chroot "$SID" env PATH="$CHROOT_PATH" "$IN/bin/pigsty-dns" "${words[@]}" --check-name meta.pigsty.test 2>&1); rc=$?
	echo "$out" >"$ST/logs/install-moved.log"
	check "moved /24: that command re-routes (install again, verified)" 0 "$rc"
	[ "$rc" = 0 ] || echo "$out" | tail -5
	check "moved /24: the delegate routes the new reverse zone" "DNS Domain: $ZONE_DOMAINS ~12.10.10.in-addr.arpa" \
		"$(delegate_status | tr ';' '\n' | grep '^DNS Domain')"
	ptr_check "moved /24: resolvectl query 10.10.12.10 -> the canonical name" "meta.pigsty.test" "$(rq_ptr 10.10.12.10)"
	out=$(route status --state-dir "$IN/srv" 2>&1); echo "$out" >"$ST/logs/status-moved-2.log"
	check "moved /24: route status all ok again" 0 "$(grep -c '^FAIL' <<<"$out")"
}
reverse_checks() {  # the reverse zone through the route, in and outside the /24
	local before
	ptr_check "getent hosts 10.10.10.10 -> the canonical name" "meta.pigsty.test" "$(ge_ptr 10.10.10.10)"
	ptr_check "resolvectl query 10.10.10.10 -> the canonical name" "meta.pigsty.test" "$(rq_ptr 10.10.10.10)"
	# control: a reverse lookup inside the /24 does reach the daemon (whatever it answers)
	before=$(answered); rq_ptr 10.10.10.99 >/dev/null
	check "control: a reverse lookup inside the /24 (10.10.10.99) reaches the daemon" yes \
		"$([ "$(answered)" -gt "$before" ] && echo yes || echo no)"
	mark; before=$(answered)
	rq_ptr 10.10.11.10 >/dev/null; ge_ptr 10.10.11.10 >/dev/null
	timeout 15 chroot "$SID" dig +time=3 +tries=1 -x 10.10.11.10 @127.0.0.53 >/dev/null 2>&1
	check "a reverse lookup outside the /24 (10.10.11.10) never reaches the daemon (its counters unchanged)" \
		"$before" "$(answered)"
	check "... and goes to the default upstream" yes "$(upstream_saw_ptr 10.10.11.10)"
}

delegate_status() {   # the "Delegate pigsty-dns" block of resolvectl status, one line, or nothing
	rctl status 2>/dev/null | awk '/^Delegate /{on = ($2 == "pigsty-dns")} /^(Link|Global)/{on = 0} on' |
		sed 's/^ *//' | paste -sd';' -
}
rq() {   # resolvectl query -> address or error text
	local out; out=$(rctl --cache=no query "$1" 2>&1 | head -1)
	out=${out#"$1: "}; out=${out%% *}; echo "${out#resolve call failed: }"
}
dq() {   # dig via the stub listener -> "STATUS [first A]"
	local out st a
	out=$(timeout 15 chroot "$SID" dig +time=3 +tries=1 +noall +comments +answer @127.0.0.53 "$1" A 2>&1)
	st=$(grep -o 'status: [A-Z]*' <<<"$out" | head -1); st=${st#status: }
	a=$(awk '!/^;/ && $4=="A" {print $5; exit}' <<<"$out")
	echo "${st:-NOANSWER}${a:+ $a}"
}
ge() { timeout 20 chroot "$SID" getent ahostsv4 "$1" | awk '{print $1; exit}'; }
mark() { sleep 0.2; MARK_U=$(wc -l <"$ULOG"); }
upstream_saw() {  # did the default-upstream stand-in log a query for NAME since the last mark? yes|no
	sleep 0.3
	tail -n +$((MARK_U + 1)) "$ULOG" | grep -q "query\[[A-Z]*\] $1 " && echo yes || echo no
}
check() {  # check DESCRIPTION EXPECTED ACTUAL
	if [ "$2" = "$3" ]; then PASS=$((PASS + 1)); echo "PASS: $1 [$3]"
	else FAIL=$((FAIL + 1)); echo "FAIL: $1 [expected '$2', got '$3']"; fi
}
rroot_fingerprint() { (cd "$ST/rroot" && find . \( -type f -exec sha256sum {} + \) -o \( -type d -printf 'dir %p\n' \) | sort -k2); }
reloads() { grep -c '^reload systemd-resolved' "$ST/logs/systemctl.log"; }

J=$ST/rroot/var/lib/pigsty-dns-route/journal.json
DFILE=$ST/rroot/etc/systemd/dns-delegate.d/pigsty-dns.dns-delegate

delegate_tests() {
	local out rc before name r
	local file=$ST/rroot/etc/systemd/dns-delegate.d/pigsty-dns.dns-delegate
	start_upstream; uplink; start_resolved; start_daemon
	rroot_fingerprint >"$ST/rroot-before"

	# No --server: the default (127.0.0.1:5354, the daemon's $PORT) is what the plan uses.
	out=$(route install --dry-run --json 2>&1); rc=$?
	echo "$out" >"$ST/logs/dry-run.json"
	check "detect: install --dry-run picks resolved-delegate for $(sx resolvectl --version | head -1)" \
		"0 resolved-delegate" "$rc $(sed -n 's/^ *"adapter": *"\([^"]*\)".*/\1/p' <<<"$out" | head -1)"
	check "detect: --dry-run wrote nothing" "" "$(rroot_fingerprint | diff - "$ST/rroot-before")"
	check "detect: the plan's server is the default 127.0.0.1:$PORT" "127.0.0.1:$PORT" \
		"$(sed -n 's/^ *"server": *"\([^"]*\)".*/\1/p' <<<"$out" | head -1)"

	out=$(route install --adapter resolved-delegate --server 127.0.0.1:$PORT --yes \
		--check-name meta.pigsty.test --state-dir "$IN/srv" 2>&1); rc=$?
	echo "$out" >"$ST/logs/install.log"
	check "route install (verified: delegate scope, SOA, resolvectl, getent, reverse lookups, REFUSED unchanged)" 0 "$rc"
	[ "$rc" = 0 ] || echo "$out" | tail -8
	check "install reloaded resolved through systemctl (lab: SIGHUP)" 1 "$(reloads)"
	cp "$file" "$ST/delegate-installed"; cp "$J" "$ST/journal-installed.json"   # for row 9 (issue 26)
	check "delegate file: DNS, Domains (the zone and the live /24's reverse zone), DefaultRoute=no" \
		"DNS=127.0.0.1:$PORT;Domains=$ZONE_DOMAINS ~10.10.10.in-addr.arpa;DefaultRoute=no" \
		"$(grep -v '^#' "$file" 2>/dev/null | grep -v '^\[' | paste -sd';' -)"
	check "delegate file: root-owned 0644 with the ownership marker" "0:0 644 yes" \
		"$(stat -c '%u:%g %a' "$file" 2>/dev/null) $(head -1 "$file" 2>/dev/null | grep -q '^# Written by pigsty-dns' && echo yes || echo no)"
	check "resolvectl status lists Delegate pigsty-dns (no default route)" \
		"Delegate pigsty-dns;Current DNS Server: 127.0.0.1:$PORT;DNS Servers: 127.0.0.1:$PORT;DNS Domain: $ZONE_DOMAINS ~10.10.10.in-addr.arpa;Default Route: no" \
		"$(delegate_status)"
	check "meta.pigsty.test via resolvectl" "10.10.10.10" "$(rq meta.pigsty.test)"
	check "meta.pigsty.test via stub 127.0.0.53" "NOERROR 10.10.10.10" "$(dq meta.pigsty.test)"
	check "meta.pigsty.test via getent ahostsv4" "10.10.10.10" "$(ge meta.pigsty.test)"
	reverse_checks

	# control: the counter does move when an out-of-zone name reaches the daemon directly
	before=$(refused)
	r=$(timeout 10 chroot "$SID" dig +time=2 +tries=1 +noall +comments @127.0.0.1 -p $PORT control.example.org A |
		grep -o 'status: [A-Z]*' | head -1)
	check "control: example.org asked directly at the daemon is REFUSED and counted" \
		"status: REFUSED $((before + 1))" "$r $(refused)"
	name=lab-$RANDOM$RANDOM.example.org
	before=$(refused); mark
	rq "$name" >/dev/null; dq "$name" >/dev/null; ge "$name" >/dev/null
	check "unrelated name never reaches the daemon (REFUSED counter unchanged)" "$before" "$(refused)"
	check "unrelated name went to the default upstream" yes "$(upstream_saw "$name")"
	check "unrelated name answered by the default upstream" "NOERROR 203.0.113.99" "$(dq "$name")"

	out=$(route status --check-name meta.pigsty.test --state-dir "$IN/srv" 2>&1); rc=$?; echo "$out" >"$ST/logs/status.log"
	check "route status: all ok" "0 0" "$rc $(grep -c '^FAIL' <<<"$out")"
	check "route status: the reverse zone matches the live generation" 1 \
		"$(grep -c '^ok   reverse zone: routes 10.10.10.in-addr.arpa, the /24 of the live generation' <<<"$out")"
	moved_24

	stop_resolved; start_resolved
	check "resolved restarted with the file in place: meta.pigsty.test (moved) via stub" "NOERROR 10.10.12.10" "$(dq meta.pigsty.test)"

	stop_daemon; mark
	check "daemon down -> stub SERVFAIL" "SERVFAIL" "$(dq meta.pigsty.test)"
	r=$(rq meta.pigsty.test)
	check "daemon down -> resolvectl query fails" fail "$(case $r in 10.10.10.10|10.10.12.10|203.0.113.99) echo "answered $r";; *) echo fail;; esac)"
	check "daemon down -> getent finds nothing" "" "$(ge meta.pigsty.test)"
	check "daemon down -> nothing reached the default upstream" no "$(upstream_saw meta.pigsty.test)"
	out=$(route status 2>&1); echo "$out" >"$ST/logs/status-down.log"
	check "route status says the daemon is down" 1 "$(grep -c '^FAIL daemon' <<<"$out")"
	start_daemon

	out=$(route uninstall --yes 2>&1); rc=$?
	echo "$out" >"$ST/logs/uninstall.log"
	check "route uninstall" 0 "$rc"
	[ "$rc" = 0 ] || echo "$out" | tail -8
	check "uninstall reloaded resolved through systemctl (lab: SIGHUP; install, re-route, uninstall)" 3 "$(reloads)"
	check "route gone: resolvectl status lists no Delegate pigsty-dns" "" "$(delegate_status)"
	mark
	check "route gone: meta.pigsty.test answered by the default upstream" "NOERROR 203.0.113.99" "$(dq meta.pigsty.test)"
	check "route gone: meta.pigsty.test went to the default upstream" yes "$(upstream_saw meta.pigsty.test)"
	check "--root files and directories byte-identical to before" "" "$(rroot_fingerprint | diff - "$ST/rroot-before")"
	out=$(route uninstall --yes 2>&1); rc=$?
	echo "$out" >"$ST/logs/uninstall-2.log"
	check "uninstall twice is harmless (exit 0, root unchanged)" "0" "$rc$(rroot_fingerprint | diff - "$ST/rroot-before")"
	lifecycle_rows
	stop_daemon; stop_resolved; stop_upstream; sx ip link del pu0 2>/dev/null
}

# ---------------------------------------------------------------- issue 26: what the route survives
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
sdig() { timeout 5 chroot "$SID" dig +short +time=1 +tries=1 @127.0.0.53 "$1" A 2>/dev/null; }
first_good() {  # first_good WANT: ms until the stub answers meta.pigsty.test with WANT (polls, max ~15 s), or "never"
	local t0; t0=$(now_ms)
	for _ in $(seq 150); do
		[ "$(sdig meta.pigsty.test)" = "$1" ] && { echo $(( $(now_ms) - t0 )); return 0; }
		sleep 0.1
	done
	echo never
}
measure() { echo "# measured: $*"; echo "MEASURED: $*" >>"$ST/logs/measured.log"; }
rstatus() { local out; out=$(route status --state-dir "$IN/srv" 2>&1); echo "$out" >"$ST/logs/status-$1.log"; echo "$out"; }
got() { [ "$1" != never ] && echo yes || echo no; }
reinstall() { route install --adapter resolved-delegate --server 127.0.0.1:$PORT --yes --state-dir "$IN/srv" 2>&1; }

# The daemon was restarted with its --records file: 10.10.10.10 again, in the /24 10.10.10.0.
lc_row9() {  # uninstalled by now: install again, the same bytes as the first install
	local out rc; out=$(reinstall); rc=$?; echo "$out" >"$ST/logs/reinstall.log"
	check "row 9: install after uninstall" 0 "$rc"
	check "row 9: a byte-identical delegate file" same "$(cmp -s "$DFILE" "$ST/delegate-installed" && echo same || echo differs)"
	check "row 9: an equivalent journal (all but written_at)" "" \
		"$(diff <(grep -v written_at "$J") <(grep -v written_at "$ST/journal-installed.json"))"
}
lc_row3() {  # resolved restarted, its /run state kept (as systemctl restart keeps it)
	local ms; stopkill "$RESOLVED_PID"; RESOLVED_PID=; mark; start_resolved; ms=$(first_good 10.10.10.10)
	check "row 3: resolved restarted -> the delegate route survives" yes "$(got "$ms")"
	measure "delegate: resolved restart: first good stub answer $ms ms after resolved is up"
	check "row 3: ... and nothing reached the upstream" no "$(upstream_saw meta.pigsty.test)"
}
lc_row2() {  # the daemon stopped, then killed
	local out t0 r ms
	stop_daemon; mark; t0=$(now_ms); r=$(dq meta.pigsty.test); ms=$(( $(now_ms) - t0 ))
	check "row 2: daemon stopped -> stub SERVFAIL, fast (under dig's 3 s)" "SERVFAIL yes" "$r $([ "$ms" -lt 3000 ] && echo yes || echo "no: $ms ms")"
	measure "delegate: daemon stopped: stub SERVFAIL after $ms ms"
	check "row 2: ... nothing reached the upstream" no "$(upstream_saw meta.pigsty.test)"
	out=$(rstatus stopped)
	check "row 2: route status says the daemon stopped" 1 "$(grep -c '^FAIL daemon: stopped' <<<"$out")"
	start_daemon; ms=$(first_good 10.10.10.10)
	check "row 2: started again -> answers come back, route untouched" yes "$(got "$ms")"
	measure "delegate: daemon started again: first good stub answer $ms ms after it listens"
	kill -9 "$SRV_PID"; wait "$SRV_PID" 2>/dev/null; SRV_PID=; mark
	check "row 2: daemon killed -> stub SERVFAIL" SERVFAIL "$(dq meta.pigsty.test)"
	check "row 2: ... nothing reached the upstream" no "$(upstream_saw meta.pigsty.test)"
	out=$(rstatus crashed)
	check "row 2: route status says the daemon crashed" 1 "$(grep -c '^FAIL daemon: crashed' <<<"$out")"
	start_daemon; first_good 10.10.10.10 >/dev/null
}
lc_row6() {  # a ~. VPN link; then it claims a subdomain of the zone, then the reverse zone
	local out rc d
	mklink vpn0 && sx ip addr add 100.64.0.2/32 dev vpn0
	rctl dns vpn0 127.0.0.2; rctl domain vpn0 '~.'; rctl default-route vpn0 yes
	for _ in $(seq 50); do rctl status vpn0 2>/dev/null | grep -q 'Current Scopes: DNS' && break; sleep 0.1; done
	mark
	check "row 6: with a ~. VPN link, meta.pigsty.test still via the daemon" "NOERROR 10.10.10.10" "$(dq meta.pigsty.test)"
	check "row 6: ... the upstream (the VPN's server) never saw it" no "$(upstream_saw meta.pigsty.test)"
	for d in '~corp.pigsty.test' '~10.10.10.in-addr.arpa'; do
		rctl domain vpn0 '~.' "$d"
		out=$(rstatus vpn-claim)
		check "row 6: vpn0 claims $d -> route status names the link" 1 "$(grep -c "^FAIL other resolvers: .*vpn0.*${d#\~}" <<<"$out")"
		out=$(reinstall); rc=$?
		check "row 6: vpn0 claims $d -> route install refuses (exit 4, naming vpn0)" "4 1" "$rc $(grep -c '^error: .*vpn0' <<<"$out")"
	done
	sx ip link del vpn0
	check "row 6: the refused installs changed nothing" same "$(cmp -s "$DFILE" "$ST/delegate-installed" && echo same || echo differs)"
}
lc_row8() {  # the delegate file edited by hand: status names it, uninstall leaves it
	local out rc
	echo "# hand edit" >>"$DFILE"
	out=$(rstatus edited)
	check "row 8: a hand-edited delegate file -> route status names it" 1 "$(grep -c "^FAIL drift: .*pigsty-dns.dns-delegate changed by hand" <<<"$out")"
	out=$(route uninstall --yes 2>&1); rc=$?
	check "row 8: uninstall leaves the changed file (exit 5)" "5 yes" "$rc $([ -f "$DFILE" ] && echo yes || echo no)"
	sed -i '$d' "$DFILE"
	out=$(route uninstall --yes 2>&1); rc=$?
	check "row 8: with the edit undone, uninstall completes (root as before)" "0" "$rc$(rroot_fingerprint | diff - "$ST/rroot-before")"
}
lifecycle_rows() {
	local t0=$SECONDS row t1
	for row in lc_row9 lc_row3 lc_row2 lc_row6 lc_row8; do t1=$SECONDS; "$row"; echo "# $row took $((SECONDS - t1)) s"; done
	echo "# lifecycle rows took $((SECONDS - t0)) s"
}
# ================================================================ issue 23 (hosts-wire): hosts mode
# hosts_mode: a hosts file inside the root (bind-mounted over its /etc/hosts; --root's etc/hosts links to
# the same file): a shadowing line seen by `route status`, then gone after it is removed; the default
# native check (install without --check-name); and, with no cache flush, how long after `load` getent
# shows (a) a changed address, (b) a new name looked up (NXDOMAIN cached) just before, (c) a removed
# name: with resolved's defaults (2 runs: CacheFromLocalhost=no caches nothing from the daemon, bound
# 0), then with CacheFromLocalhost=yes (HOSTS_RUNS runs, default 3: bound the TTL / the SOA minimum);
# the median and max of each, every run within its bound + 1.5 s.
# TTLs are short here (--ttl 8, SOA minimum 5, the default) to keep the lab's time small.
hosts_mode() {
	local out rc ttl=8 neg=5 runs=${HOSTS_RUNS:-3}
	echo "=== hosts mode (issue 23)"
	local made=; [ -e "$SID/etc/hosts" ] || { : >"$SID/etc/hosts"; made=1; }   # the bind mount's target
	printf '127.0.0.1 localhost\n' >"$ST/hosts"; mount --bind "$ST/hosts" "$SID/etc/hosts" || die "bind /etc/hosts"
	ln -sf "$IN/hosts" "$ST/rroot/etc/hosts"
	printf '[Resolve]\nCache=yes\n' >"$SID/run/systemd/resolved.conf.d/50-cache.conf"
	start_upstream; uplink; start_resolved; start_daemon
	out=$(route install --server 127.0.0.1:$PORT --yes --state-dir "$IN/srv" 2>&1); rc=$?
	echo "$out" >"$ST/logs/install-hosts.log"
	check "hosts: route install without --check-name (verified)" 0 "$rc"
	[ "$rc" = 0 ] || echo "$out" | tail -8
	check "hosts: the default native check asked getent for the first served name" 1 \
		"$(grep -c 'ok  getent ahostsv4: getent ahostsv4 meta.pigsty.test: 10.10.10.10' <<<"$out")"
	printf '127.0.0.1 localhost\n10.10.10.99 meta.pigsty.test\n' >"$ST/hosts"
	check "hosts: a shadowing line answers getent" 10.10.10.99 "$(ge meta.pigsty.test)"
	out=$(route status --state-dir "$IN/srv" 2>&1); echo "$out" >"$ST/logs/status-hosts-shadow.log"
	check "hosts: route status fails the shadowed name with its line" 1 \
		"$(grep -c '^FAIL hosts: shadowed name meta.pigsty.test: line 2 (' <<<"$out")"
	printf '127.0.0.1 localhost\n' >"$ST/hosts"
	out=$(route status --state-dir "$IN/srv" 2>&1); echo "$out" >"$ST/logs/status-hosts-clean.log"
	check "hosts: after the line is removed, route status has no hosts failure" 0 "$(grep -c '^FAIL hosts' <<<"$out")"
	check "hosts: ... and getent gets the zone's address" 10.10.10.10 "$(ge meta.pigsty.test)"
	now() { date +%s.%N; }
	since() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.1f", a - b }'; }
	stats() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {printf "median %.1f s, max %.1f s", v[int((NR+1)/2)], v[NR]}'; }
	within() { local m; m=$(printf '%s\n' "${@:2}" | sort -g | tail -1); awk -v m="$m" -v b="$1" 'BEGIN { exit !(m <= b + 1.5) }' && echo yes || echo "no: max $m s"; }
	ld() { chroot "$SID" "$IN/bin/pigsty-dns-serve" load "$IN/conv-$1.yml" --ttl $ttl --state-dir "$IN/srv" >>"$ST/logs/load.log" 2>&1; }
	hosts_measure() {   # hosts_measure LABEL RUNS POSBOUND NEGBOUND
		local i t0 a b c ra=() rb=() rc_=()
		for i in $(seq "$2"); do
			printf 'all:\n  hosts:\n    10.10.10.10: { nodename: meta }\n    10.10.10.20: { nodename: conv%s }\n    10.10.10.30: { nodename: gone%s }\n' "$1$i" "$1$i" >"$ST/conv-a.yml"
			printf 'all:\n  hosts:\n    10.10.10.10: { nodename: meta }\n    10.10.10.21: { nodename: conv%s }\n    10.10.10.40: { nodename: new%s }\n' "$1$i" "$1$i" >"$ST/conv-b.yml"
			ld a
			# programs ask just before the change (a cache keeps the answers, and new's NXDOMAIN)
			ge "conv$1$i.pigsty.test" >/dev/null; ge "gone$1$i.pigsty.test" >/dev/null; ge "new$1$i.pigsty.test" >/dev/null
			ld b
			t0=$(now); a=; b=; c=
			for _ in $(seq $(( (ttl + 7) * 10 ))); do
				[ -z "$a" ] && [ "$(ge "conv$1$i.pigsty.test")" = 10.10.10.21 ] && a=$(since "$t0")
				[ -z "$b" ] && [ "$(ge "new$1$i.pigsty.test")" = 10.10.10.40 ] && b=$(since "$t0")
				[ -z "$c" ] && [ -z "$(ge "gone$1$i.pigsty.test")" ] && c=$(since "$t0")
				[ -n "$a" ] && [ -n "$b" ] && [ -n "$c" ] && break; sleep 0.1
			done
			ra+=("${a:-999}"); rb+=("${b:-999}"); rc_+=("${c:-999}")
			echo "# hosts: $1 run $i: changed ${a:-never} s, new (NXDOMAIN cached) ${b:-never} s, removed ${c:-never} s"
		done
		echo "# hosts: convergence, resolved-delegate, $1, --ttl $ttl, SOA minimum $neg, $2 runs: changed $(stats "${ra[@]}"); new $(stats "${rb[@]}"); removed $(stats "${rc_[@]}")"
		check "hosts: $1: a changed address is visible within $3 s + 1.5 s" yes "$(within "$3" "${ra[@]}")"
		check "hosts: $1: a new name (NXDOMAIN cached) is visible within $4 s + 1.5 s" yes "$(within "$4" "${rb[@]}")"
		check "hosts: $1: a removed name is gone within $3 s + 1.5 s" yes "$(within "$3" "${rc_[@]}")"
	}
	# resolved's defaults: Cache=yes, but CacheFromLocalhost=no: nothing from the daemon on 127.0.0.1 is cached
	hosts_measure default 2 0 0
	# with CacheFromLocalhost=yes resolved caches by the TTL and the SOA minimum
	stop_resolved; printf '[Resolve]\nCache=yes\nCacheFromLocalhost=yes\n' >"$SID/run/systemd/resolved.conf.d"/50-cache.conf; start_resolved
	route install --server 127.0.0.1:$PORT --yes --state-dir "$IN/srv" >>"$ST/logs/install-hosts.log" 2>&1
	check "hosts: install again after resolved's restart" 0 "$?"
	hosts_measure cached "$runs" $ttl $neg
	route uninstall --yes >"$ST/logs/uninstall-hosts.log" 2>&1
	stop_daemon; stop_resolved; stop_upstream; sx ip link del pu0 2>/dev/null
	rm -f "$SID/run/systemd/resolved.conf.d/50-cache.conf" "$ST/rroot/etc/hosts"
	umount "$SID/etc/hosts"; [ -z "$made" ] || rm -f "$SID/etc/hosts"
}
# ================================================================ end of issue 23 (hosts-wire)

inner() {
	setup_ns
	echo "# $(sx resolvectl --version | head -1), in a $SUITE root; test links: $KIND"
	local t0=$SECONDS
	delegate_tests
	hosts_mode   # issue 23
	echo "# logs: $ST/logs; namespace part took $((SECONDS - t0)) s"
	echo "$PASS passed, $FAIL failed"
	[ "$FAIL" = 0 ]; exit
}

if [ "${1:-}" = "--inner" ]; then shift; inner "$@"; else outer "$@"; fi
