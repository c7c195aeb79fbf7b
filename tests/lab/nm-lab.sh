#!/bin/bash
# nm-lab.sh - the route next to a REAL NetworkManager under a real systemd PID 1: the pid1 lab's Debian
# root plus network-manager and dnsmasq-base (cached), booted with systemd-nspawn in a private network
# namespace by tests/lab/pid1-lab.sh (overlay per run; the cached roots are never written after their
# build). Inside: the real `pigsty-dns serve` + `load`, the real `route install|status|uninstall`.
# Adapted from the project's reference lab (shared/lab/nm-lab.sh).
#
#   nm-lab.sh test    build the root if needed, boot it, run the scenario; PASS/FAIL lines, then
#                     "N passed, N failed"; exit 0 iff nothing failed; the container is always stopped
#                     (EXIT trap), also when a check fails or a signal comes
#   nm-lab.sh build   only build (or verify) the cached NM root of SUITE
#   nm-lab.sh start|exec CMD...|stop   the machine by hand (as the test sets it up), for a look inside
#
# Environment:
#   SUITE           bookworm (default; NM 1.42, systemd 252) or sid (NM and systemd >= 258 from sid)
#   NM_DNS          NM's [main] dns=: dnsmasq (default; resolved and networkd masked, the route is
#                   nm-dnsmasq) or systemd-resolved (networkd masked; resolved-link on 252,
#                   resolved-delegate on >= 258)
#   NM_CACHE        where the NM roots are cached (default ${TMPDIR:-/tmp}/pigsty-dns-nm-lab); each is
#                   a copy of the pid1 lab's root ($PID1_CACHE, built by pid1-lab.sh when missing)
#   LAB             per-run dir (overlay, logs; default $NM_CACHE/run-$SUITE-$NM_DNS)
#   PIGSTY_DNS_BIN, PIGSTY_DNS_RECORDS   the binary and zones/pigsty.test.yml (copied in)
#   REBUILD=1       build the NM root again
#   REBOOTS         the reboot row (issue 26 row 1) at the end of each scenario: how many clean
#                   poweroffs and boots of the same overlay with the system unit and the route installed
#                   (default 2; 0 skips it)
#
# What was learnt about NM (1.42 on bookworm; see README "Verified live"):
# - NM's dnsmasq (dns=dnsmasq) listens on 127.0.0.1:53 and is restarted -- re-reading dnsmasq.d -- by
#   `nmcli general reload dns-full`, plain `nmcli general reload` or `systemctl reload NetworkManager`
#   (not by `dns-rc` or `conf`). NM starts it only once its DNS configuration changes (here: the uplink
#   connection comes up).
# - `getent ahostsv4` sets AI_ADDRCONFIG: with only lo (127.0.0.1) glibc returns nothing without sending
#   a query, so the uplink (a veth; this host's kernel has no dummy driver) carries a TEST-NET address.
# - With systemd-resolved installed, NM's rc-manager "auto" picks resolved's /sbin/resolvconf even with
#   dns=dnsmasq (and fails while resolved is masked): the dnsmasq case sets rc-manager=file.
# - NM's dnsmasq and resolved bind their upstream sockets to the uplink device: the upstream stand-in
#   must sit behind a real veth in another namespace, or its answers come back over lo and are dropped.
# - dns=dnsmasq with the daemon stopped: dnsmasq sends a zone name to no other server and does not
#   answer (dig times out, 12 s tried); a name it cached it keeps answering for the record's TTL.
# - The route's ifb link is a "Generic" device to NM, unmanaged (the route also marks it so) through
#   reload, restart, uplink down/up and networking off/on. A link of a kind NM manages (a veth, tried by
#   hand) that nobody marked is taken "connected (externally)", and networking off/on removes its address;
#   marked unmanaged it stays so across an NM restart (1.42). `nmcli device set` is runtime state,
#   though, and the boot unit re-creates the link without nmcli: so with NM running the route owns
#   conf.d/pigsty-dns.conf, `[keyfile] unmanaged-devices+=interface-name:pigsty-dns0` (`+=` is in
#   NetworkManager.conf(5) of 1.42 and 1.58). `nmcli general reload conf` applies it at once (seen: a
#   managed, "disconnected" veth of that name turned "unmanaged"); the lab's veth stand-in for the
#   link then stays unmanaged with no nmcli call on it, across an NM restart, and keeps its address
#   through networking off/on. Without the drop-in the same veth is "connected (externally)" and
#   networking off/on removes its address (seen by hand on 1.42).
# - The lab's daemon keeps its state in $STATE: `route status` needs --state-dir to compare the routed
#   reverse zone with the live generation (without it it says it did not, and stays ok).
#
# Addresses, all inside the container's own network namespace: the uplink veth labv0 198.18.0.2/24
# (an NM connection, DNS 198.18.0.1, gateway 198.18.0.1) and its peer labv1 198.18.0.1/24 (in a
# namespace "labup" inside the container), where the "default upstream" stand-in (dnsmasq: every name
# -> 203.0.113.99, logs every query) listens; the daemon on 127.0.0.1:5354; the route's own link
# address (resolved-link) 198.18.53.53/32 (and the veth stand-in's peer pigsty-dnsp, no address).
set -uo pipefail
SUITE=${SUITE:-bookworm}
NM_DNS=${NM_DNS:-dnsmasq}
NM_CACHE=${NM_CACHE:-${TMPDIR:-/tmp}/pigsty-dns-nm-lab}
LAB=${LAB:-$NM_CACHE/run-$SUITE-$NM_DNS}
PIDLAB=$(dirname "$(readlink -f "$0")")/pid1-lab.sh
PKGS="network-manager dnsmasq-base"
PORT=5354
STATE=/var/lib/lab-pigsty-dns
UP=198.18.0.1
die() { echo "nm-lab: $*" >&2; exit 2; }
case "$SUITE" in bookworm|sid) ;; *) die "SUITE must be bookworm or sid, not $SUITE" ;; esac
case "$NM_DNS" in dnsmasq|systemd-resolved) ;; *) die "NM_DNS must be dnsmasq or systemd-resolved, not $NM_DNS" ;; esac

# the container: pid1-lab.sh with our cached root (its PID1_CACHE is NM_CACHE) and our per-run dir
P() { SUITE=$SUITE PID1_CACHE=$NM_CACHE LAB=$LAB/c NAME=nmlab-$SUITE bash "$PIDLAB" "$@"; }
cx() { P exec "$@"; }
# The NM root sits where pid1-lab.sh boots the root of its PID1_CACHE (its name carries a digest of
# the pid1 root's package list): ask it, so the container boots this root and not a plain one.
NMROOT=$(P path)

# ---------------------------------------------------------------- the cached root
build_root() {   # under an flock: concurrent runs build it once
	mkdir -p "$NM_CACHE"
	exec 8>"$NM_CACHE/.nm-lock-$SUITE"
	flock -w 900 8 || die "another run holds $NM_CACHE/.nm-lock-$SUITE"
	if [ -z "${REBUILD:-}" ] && grep -qxF "packages=$PKGS" "$NMROOT/.nm-root-ok" 2>/dev/null; then exec 8>&-; return 0; fi
	local t0=$SECONDS src d
	SUITE=$SUITE bash "$PIDLAB" build >&2 || die "the pid1 lab's $SUITE root could not be built"
	src=$(SUITE=$SUITE bash "$PIDLAB" path)
	for d in "$NMROOT" "$NMROOT.new"; do   # never delete through a mount point
		[ -e "$d" ] || continue
		awk -v p="$d" '$5 == p || index($5, p "/") == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo &&
			die "something is mounted under $d; refusing to delete it"
	done
	rm -rf "$NMROOT.new"
	echo "# building the NM $SUITE root from $src (log: $NM_CACHE/apt-$SUITE.log)"
	cp -a "$src" "$NMROOT.new" || die "copy $src"
	# apt inside the root, in a private mount namespace (nothing stays mounted on the host); the root's
	# resolv.conf points into /run (resolved's stub), so a tmpfs there carries the host's resolv.conf.
	# Check-Valid-Until=false: this machine's mirror serves a sid Release past its Valid-Until (debootstrap
	# does not check it; apt does).
	timeout -k 10 600 unshare --mount --propagation private sh -c '
		r=$1; shift
		mount -t proc proc "$r/proc" && mount -t tmpfs tmpfs "$r/run" || exit 97
		mkdir -p "$r/run/systemd/resolve" && cat /etc/resolv.conf >"$r/run/systemd/resolve/stub-resolv.conf" || exit 97
		chroot "$r" sh -c "apt-get -o Acquire::Check-Valid-Until=false update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $*"
		' sh "$NMROOT.new" $PKGS >"$NM_CACHE/apt-$SUITE.log" 2>&1 || die "apt-get install $PKGS failed (see $NM_CACHE/apt-$SUITE.log)"
	rm -f "$NMROOT.new"/var/cache/apt/archives/*.deb
	rm -rf "$NMROOT.new"/var/lib/apt/lists/*
	local v; v=$(chroot "$NMROOT.new" /usr/sbin/NetworkManager --version 2>/dev/null)
	[ -n "$v" ] || die "no NetworkManager in the new $SUITE root"
	printf 'nm=%s\npackages=%s\n' "$v" "$PKGS" >"$NMROOT.new/.nm-root-ok"
	rm -rf "$NMROOT"; mv "$NMROOT.new" "$NMROOT"
	echo "# NM $SUITE root built in $((SECONDS - t0)) s: $(du -sh "$NMROOT" | cut -f1), NetworkManager $v"
	exec 8>&-
}

# ---------------------------------------------------------------- helpers
PASS=0; FAIL=0
check() {  # check DESCRIPTION EXPECTED ACTUAL
	if [ "$2" = "$3" ]; then PASS=$((PASS + 1)); echo "PASS: $1 [$3]"
	else FAIL=$((FAIL + 1)); echo "FAIL: $1 [expected '$2', got '$3']"; fi
}
ok() {     # ok DESCRIPTION DETAIL COMMAND... : passes when COMMAND succeeds
	local d=$1 detail=$2; shift 2
	if "$@"; then PASS=$((PASS + 1)); echo "PASS: $d [$detail]"
	else FAIL=$((FAIL + 1)); echo "FAIL: $d [$detail]"; fi
}
dq() {   # dig NAME at SERVER [PORT] -> "STATUS [first A]"
	local out st a
	out=$(cx timeout 15 dig +time=3 +tries=1 +noall +comments +answer @"$2" -p "${3:-53}" "$1" A 2>&1)
	st=$(grep -o 'status: [A-Z]*' <<<"$out" | head -1); st=${st#status: }
	a=$(awk '!/^;/ && $4 == "A" { print $5; exit }' <<<"$out")
	echo "${st:-NOANSWER}${a:+ $a}"
}
ge() { cx timeout 20 getent ahostsv4 "$1" | awk '{ print $1; exit }'; }
# The daemon's counters, from a status.json write made after every query sent so far. The daemon
# rewrites the file at most once a second and only when something changed, so a sleep guesses and
# waiting for a new "updated" stamp hangs when nothing changed (the point of a leak check): instead a
# sentinel (opcode STATUS, answered NOTIMP, which no resolver sends) changes the counters, and the file
# is read once it shows that sentinel. Prints "REFUSED ANSWERED" (ANSWERED: every rcode but NOTIMP).
counters() {
	cx sh -c 'f=$1/status.json
		n() { sed -n "s/.*\"$1\": *\([0-9]*\).*/\1/p" "$f" | head -1; }
		n0=$(n notimp)
		timeout 10 dig +time=2 +tries=1 +opcode=status @127.0.0.1 -p "$2" pigsty.test >/dev/null 2>&1
		i=0; while [ "$(n notimp)" -le "$n0" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
		[ "$(n notimp)" -gt "$n0" ] || { echo "no fresh status.json write within 5 s" >&2; echo "? ?"; exit 1; }
		echo "$(n refused) $(( $(n noerror) + $(n nxdomain) + $(n refused) + $(n formerr) + $(n servfail) + $(n badvers) + $(n other) ))"
	' sh $STATE $PORT
}
refused() { counters | cut -d' ' -f1; }
answered() { counters | cut -d' ' -f2; }
ulines() { cx sh -c 'wc -l </run/lab-upstream.log'; }
mark() { sleep 0.2; MARK_U=$(ulines); }
upstream_saw() {  # did the default-upstream stand-in log a query for NAME since the last mark? yes|no
	sleep 0.3
	cx tail -n +$((MARK_U + 1)) /run/lab-upstream.log | grep -q "query\[[A-Z]*\] $1 " && echo yes || echo no
}
etc_fingerprint() {   # every path under /etc: type, mode, owner, symlink target; sha256 of files
	cx sh -c 'find /etc -xdev -printf "%y %m %u:%g %p %l\n" | LC_ALL=C sort
		find /etc -xdev -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum'
}
nm_state() {   # NM's view: devices and their connections, the active connections, NM's DNS mode
	cx nmcli -t -f DEVICE,TYPE,STATE,CONNECTION device | LC_ALL=C sort
	cx nmcli -t -f NAME,TYPE,DEVICE connection show --active | LC_ALL=C sort
	cx busctl get-property org.freedesktop.NetworkManager /org/freedesktop/NetworkManager/DnsManager \
		org.freedesktop.NetworkManager.DnsManager Mode
}
resolved_links() {   # resolved's per-link DNS view, one line per link (resolvectl dns / domain)
	cx resolvectl --no-pager dns | LC_ALL=C sort; cx resolvectl --no-pager domain | LC_ALL=C sort
}
route_kind() {   # resolved's own view of the route: link / delegate / none
	local s; s=$(cx resolvectl --no-pager status 2>/dev/null)
	if grep -q '^Delegate pigsty-dns' <<<"$s"; then echo delegate
	elif grep -q 'pigsty-dns0' <<<"$s"; then echo link
	else echo none; fi
}
jcursor() { cx journalctl --no-pager -q -n 0 --show-cursor | sed -n 's/^-- cursor: //p'; }
nm_connected() {   # bounded: NM's uplink connection is activated again
	local i
	for i in $(seq 150); do
		[ "$(cx nmcli -g GENERAL.STATE connection show lab-uplink 2>/dev/null)" = activated ] && return 0
		sleep 0.2
	done
	return 1
}
route_json() { cx pigsty-dns route status --json 2>&1 | sed -n 's/^ *"'"$1"'": *"\([^"]*\)".*/\1/p' | head -1; }

# ---------------------------------------------------------------- the machine
setup_machine() {   # into the overlay's upper dir, before the boot
	local up=$LAB/c/upper
	# never under a running container of this LAB (its overlay's upper dir is $up)
	[ -f "$LAB/c/nspawn.pid" ] && kill -0 "$(cat "$LAB/c/nspawn.pid")" 2>/dev/null && die "a container of this LAB runs already"
	rm -rf "$LAB/c"; mkdir -p "$LAB/logs"
	install -d -m 0755 "$up/usr/local/bin" "$up/srv/lab" "$up/etc/NetworkManager/conf.d" "$up/etc/systemd/system"
	install -o root -g root -m 0755 "$PIGSTY_DNS_BIN" "$up/usr/local/bin/pigsty-dns"
	install -o root -g root -m 0644 "$PIGSTY_DNS_RECORDS" "$up/srv/lab/pigsty.test.yml"
	# the daemon: the real serve (started and stopped by the lab; not enabled)
	cat >"$up/etc/systemd/system/lab-pigsty-dns.service" <<-EOF
	[Service]
	ExecStart=/usr/local/bin/pigsty-dns serve --listen 127.0.0.1:$PORT --state-dir $STATE
	EOF
	# a desktop: NM owns the network, networkd does not run
	ln -s /dev/null "$up/etc/systemd/system/systemd-networkd.service"
	ln -s /dev/null "$up/etc/systemd/system/systemd-networkd.socket"
	cat >"$up/etc/NetworkManager/conf.d/50-lab.conf" <<-EOF
	[main]
	dns=$NM_DNS
	# no "Wired connection N" DHCP profiles on the lab's veths
	no-auto-default=*
	[keyfile]
	unmanaged-devices=interface-name:labv1
	[logging]
	domains=DEFAULT,DNS:DEBUG
	EOF
	if [ "$NM_DNS" = dnsmasq ]; then
		# the dns=dnsmasq desktop shape: no resolved; a regular resolv.conf that NM replaces with its own.
		# rc-manager=file: the root has systemd-resolved installed, whose /sbin/resolvconf NM's "auto"
		# would pick (and fail with, resolved being masked); a desktop without resolved has none.
		ln -s /dev/null "$up/etc/systemd/system/systemd-resolved.service"
		printf '[main]\nrc-manager=file\n' >"$up/etc/NetworkManager/conf.d/51-lab-rc-manager.conf"
		echo "nameserver 192.0.2.53  # lab placeholder" >"$up/etc/resolv.conf"
	fi
}

start_machine() {
	P start || die "the container did not boot"
	local i
	for i in $(seq 100); do [ "$(cx systemctl is-active NetworkManager)" = active ] && break; sleep 0.2; done
	# the uplink: a veth pair (no dummy driver here). Its far end labv1 lives in a network namespace of
	# its own inside the container ("labup"): NM's dnsmasq and resolved bind their upstream sockets to
	# labv0, and with both ends in one namespace the answers would come back over lo and be dropped.
	cx ip netns add labup || die "ip netns add labup"
	cx ip link add labv0 type veth peer name labv1 netns labup || die "veth"
	cx ip -n labup addr add $UP/24 dev labv1; cx ip -n labup link set labv1 up; cx ip -n labup link set lo up
	# the default upstream stand-in: answers every name with 203.0.113.99, logs every query
	cx systemd-run -q --unit=lab-upstream /usr/sbin/ip netns exec labup /usr/sbin/dnsmasq --conf-file=/dev/null --keep-in-foreground \
		--port=53 --listen-address=$UP --bind-interfaces --no-resolv --no-hosts --no-negcache --cache-size=0 \
		--user=root --pid-file=/run/lab-upstream.pid --address=/#/203.0.113.99 \
		--log-queries=extra --log-facility=/run/lab-upstream.log
	cx nmcli connection add type ethernet con-name lab-uplink ifname labv0 autoconnect yes \
		ipv4.method manual ipv4.addresses 198.18.0.2/24 ipv4.gateway $UP ipv4.dns $UP ipv6.method disabled >/dev/null ||
		die "nmcli connection add"
	cx nmcli --wait 20 connection up lab-uplink >/dev/null || die "nmcli connection up lab-uplink"
	nm_connected || die "lab-uplink not activated"
	for i in $(seq 50); do cx ip netns exec labup ss -lun | grep -q " $UP:53 " && break; sleep 0.1; done
	# the daemon: the real serve, then load
	start_daemon
	local out; out=$(cx pigsty-dns load /srv/lab/pigsty.test.yml --state-dir $STATE 2>&1)
	echo "$out" >"$LAB/logs/load.log"
	ok "pigsty-dns serve + load -> live" "$(grep -o 'live (serial [0-9]*)' <<<"$out" | head -1)" grep -q 'live (serial' <<<"$out"
	check "the daemon answers meta.pigsty.test" "NOERROR 10.10.10.10" "$(dq meta.pigsty.test 127.0.0.1 $PORT)"
	# control for the leak checks: the REFUSED counter does move when an unrelated name reaches the daemon
	local before; before=$(refused)
	check "control: example.org asked directly at the daemon is REFUSED and counted" \
		"REFUSED $((before + 1))" "$(dq control.example.org 127.0.0.1 $PORT) $(refused)"
}

start_daemon() {   # the real serve, as the lab's own unit
	local i
	cx systemctl start lab-pigsty-dns.service
	for i in $(seq 50); do cx ss -lun | grep -q " 127.0.0.1:$PORT " && cx test -f $STATE/status.json && return 0; sleep 0.1; done
	return 1
}

route_install() {   # route install, verified by the route itself; then the adapter it picked
	local out rc
	out=$(cx pigsty-dns route install --server 127.0.0.1:$PORT --yes --check-name meta.pigsty.test --state-dir $STATE 2>&1); rc=$?
	echo "$out" >"$LAB/logs/route-install.log"
	check "route install --server 127.0.0.1:$PORT (verified by the route itself)" 0 "$rc"
	[ "$rc" = 0 ] || echo "$out" | tail -15
	check "route install detected NM's dns=$NM_DNS and picked $1" "$1" "$(route_json adapter)"
}

route_status_ok() {   # $1: label
	# --state-dir: the lab's daemon keeps its state outside the default dir; without it status cannot
	# compare the routed reverse zone with the live generation (it says so, and stays ok)
	local out rc; out=$(cx pigsty-dns route status --state-dir $STATE 2>&1); rc=$?
	echo "$out" >"$LAB/logs/route-status-$2.log"
	check "$1: route status all ok (exit 0, no FAIL line)" "0 0" "$rc $(grep -c '^FAIL' <<<"$out")"
	check "$1: route status: the reverse zone matches the live generation" 1 \
		"$(grep -c '^ok   reverse zone: routes 10.10.10.in-addr.arpa, the /24 of the live generation' <<<"$out")"
}

unrelated_stays_out() {   # $1: label. An unrelated name: answered by the upstream, never the daemon.
	local name=lab-$RANDOM$RANDOM.example.org before
	before=$(refused); mark
	check "$1: an unrelated name is answered by the default upstream (getent)" 203.0.113.99 "$(ge "$name")"
	check "$1: the unrelated name never reached the daemon (REFUSED counter unchanged)" "$before" "$(refused)"
	check "$1: the unrelated name went to the default upstream" yes "$(upstream_saw "$name")"
}

zone_answers() {   # $1: label, $2: the resolver's own address (NM's dnsmasq or resolved's stub)
	mark
	check "$1: getent ahostsv4 meta.pigsty.test" 10.10.10.10 "$(ge meta.pigsty.test)"
	check "$1: dig @$2 meta.pigsty.test" "NOERROR 10.10.10.10" "$(dq meta.pigsty.test "$2")"
	check "$1: the zone's names never reached the default upstream" no "$(upstream_saw meta.pigsty.test)"
}

# the reverse zone (issue 12): the daemon answers PTRs for its /24, 10.10.10.in-addr.arpa
ptr_getent() { cx timeout 20 getent hosts "$1" | awk '{ print $2; exit }'; }
ptr_dig() { cx timeout 15 dig +time=3 +tries=1 +short -x "$1" @"$2" 2>&1 | head -1; }
ptr_resolvectl() {   # the canonical name, or the error text
	local out; out=$(cx resolvectl --no-pager --cache=no query "$1" 2>&1 | head -1); out=${out#"$1: "}
	out=${out%% *}; echo "${out#resolve call failed: }"
}
arpa() { awk -F. '{ print $4"."$3"."$2"."$1".in-addr.arpa" }' <<<"$1"; }
OUTSIDE=9
reverse_answers() {   # $1: label, $2: the resolver's address. Through the route, in and outside the /24.
	local v=$1 before a
	mark
	check "$v: getent hosts 10.10.10.10 -> the canonical name" meta.pigsty.test "$(ptr_getent 10.10.10.10)"
	if [ "$NM_DNS" = dnsmasq ]; then
		check "$v: dig -x 10.10.10.10 @$2 -> the canonical name" meta.pigsty.test. "$(ptr_dig 10.10.10.10 "$2")"
	else
		check "$v: resolvectl query 10.10.10.10 -> the canonical name" meta.pigsty.test "$(ptr_resolvectl 10.10.10.10)"
	fi
	check "$v: the reverse zone's questions never reached the default upstream" no "$(upstream_saw "$(arpa 10.10.10.10)")"
	# control: a reverse lookup inside the /24 does reach the daemon (a fresh address: resolvers cache)
	a=10.10.10.$((100 + RANDOM % 150)); before=$(answered); ptr_dig "$a" "$2" >/dev/null
	check "$v: control: a reverse lookup inside the /24 ($a) reaches the daemon" yes \
		"$([ "$(answered)" -gt "$before" ] && echo yes || echo no)"
	# outside the /24: 10.10.11.10 first, then a fresh address each time (the resolvers cache the answer)
	OUTSIDE=$((OUTSIDE + 1)); a=10.10.11.$OUTSIDE
	before=$(answered); mark
	ptr_getent "$a" >/dev/null; ptr_dig "$a" "$2" >/dev/null
	[ "$NM_DNS" = dnsmasq ] || ptr_resolvectl "$a" >/dev/null
	check "$v: a reverse lookup outside the /24 ($a) never reaches the daemon (its counters unchanged)" \
		"$before" "$(answered)"
	check "$v: ... and goes to the default upstream" yes "$(upstream_saw "$(arpa "$a")")"
}

daemon_down() {   # $1: the resolver's address. The daemon stopped: zone names fail, go nowhere else.
	local t0 st name=lab-down-$RANDOM$RANDOM.pigsty.test
	cx systemctl stop lab-pigsty-dns.service
	# a name nobody asked before: the resolvers cache answers (NM's dnsmasq: up to the record's TTL)
	mark; t0=$SECONDS
	st=$(dq "$name" "$1")
	echo "# daemon stopped: dig +time=3 @$1 $name -> $st after $((SECONDS - t0)) s"
	# what the resolver does with the dead server in the end (one try, 12 s)
	t0=$SECONDS
	echo "# daemon stopped: dig +time=12 @$1 $name -> $(cx timeout 20 dig +time=12 +tries=1 @"$1" "$name" A |
		grep -o 'status: [A-Z]*\|timed out\|no servers could be reached' | head -1) after $((SECONDS - t0)) s"
	echo "# daemon stopped: dig @$1 meta.pigsty.test (asked before) -> $(dq meta.pigsty.test "$1")"
	ok "daemon down: dig @$1 (a zone name) gets no address" "$st" test "${st#* }" = "$st"
	check "daemon down: getent ahostsv4 (a zone name) finds nothing" "" "$(ge "$name")"
	check "daemon down: nothing reached the default upstream" no "$(upstream_saw "$name")"
	local out; out=$(cx pigsty-dns route status --state-dir $STATE 2>&1); echo "$out" >"$LAB/logs/route-status-daemon-down.log"
	ok "daemon down: route status says so" "$(grep -m1 '^FAIL' <<<"$out" | cut -c1-80)" grep -q '^FAIL daemon' <<<"$out"
	check "daemon down: route status says it stopped (its status file; issue 26)" 1 "$(grep -c '^FAIL daemon: stopped at ' <<<"$out")"
	start_daemon
	check "daemon started again: getent ahostsv4 meta.pigsty.test" 10.10.10.10 "$(ge meta.pigsty.test)"
}

route_uninstall() {   # $1: what the zone's names get afterwards (as before the route)
	local out rc
	out=$(cx pigsty-dns route uninstall --yes 2>&1); rc=$?
	echo "$out" >"$LAB/logs/route-uninstall.log"
	check "route uninstall" 0 "$rc"
	[ "$rc" = 0 ] || echo "$out" | tail -15
	mark
	check "route gone: meta.pigsty.test answered by the default upstream again" "$1" "$(ge meta.pigsty.test)"
	check "route gone: meta.pigsty.test went to the default upstream" yes "$(upstream_saw meta.pigsty.test)"
	etc_fingerprint >"$LAB/etc-after"
	check "/etc byte-identical to before the install (NM's and resolved's files; modes, owners, symlinks)" "" \
		"$(diff "$LAB/etc-before" "$LAB/etc-after" | head -20)"
	nm_state >"$LAB/nm-after"
	check "NM's state as before the install (devices, active connections, DNS mode)" "" \
		"$(diff "$LAB/nm-before" "$LAB/nm-after" | head -10)"
	out=$(cx pigsty-dns route uninstall --yes 2>&1); rc=$?
	echo "$out" >"$LAB/logs/route-uninstall-2.log"
	etc_fingerprint >"$LAB/etc-after-2"
	check "a second uninstall is harmless (exit 0, /etc unchanged)" 0 "$rc$(diff "$LAB/etc-before" "$LAB/etc-after-2" | head -5)"
}

dnsmasq_pid() { cx pgrep -x -u nobody dnsmasq 2>/dev/null || cx pgrep -f 'dnsmasq.*NetworkManager' | head -1; }

# 1. NM with dns=dnsmasq: the nm-dnsmasq adapter.
# ================================================================ issue 23 (hosts-wire): hosts mode
# hosts_mode LABEL: the container's /etc/hosts gets a shadowing line, seen by `route status`, then gone
# after it is removed; the default native check (install again without --check-name); and, with no
# cache flush, how long after `load` getent shows (a) a changed address, (b) a new name looked up
# (NXDOMAIN cached) just before, (c) a removed name: HOSTS_RUNS runs (default 3), median and max, each
# within its bound + 1.5 s. TTLs are short here (--ttl 8, SOA minimum 5, the default) to keep it quick.
hosts_mode() {
	local l=$1 out rc i t0 a b c ra=() rb=() rc_=() ttl=8 neg=5 runs=${HOSTS_RUNS:-3}
	out=$(cx pigsty-dns route install --server 127.0.0.1:$PORT --yes --state-dir $STATE 2>&1); rc=$?
	echo "$out" >"$LAB/logs/route-install-hosts.log"
	check "$l: hosts: route install without --check-name (verified)" 0 "$rc"
	[ "$rc" = 0 ] || echo "$out" | tail -8
	check "$l: hosts: the default native check asked getent for the first served name" 1 \
		"$(grep -c 'ok  getent ahostsv4: getent ahostsv4 meta.pigsty.test: 10.10.10.10' <<<"$out")"
	# the root may have no /etc/hosts: then the scenario's one is removed again at the end
	cx sh -c 'rm -f /run/lab-hosts.bak; [ ! -e /etc/hosts ] || cp -p /etc/hosts /run/lab-hosts.bak'
	cx sh -c 'echo "10.10.10.99 meta.pigsty.test" >>/etc/hosts'
	check "$l: hosts: a shadowing line answers getent" 10.10.10.99 "$(ge meta.pigsty.test)"
	out=$(cx pigsty-dns route status --state-dir $STATE 2>&1); echo "$out" >"$LAB/logs/route-status-hosts-shadow.log"
	check "$l: hosts: route status fails the shadowed name with its line" 1 \
		"$(grep -c '^FAIL hosts: shadowed name meta.pigsty.test: line [0-9]* (' <<<"$out")"
	cx sh -c 'if [ -e /run/lab-hosts.bak ]; then cp -p /run/lab-hosts.bak /etc/hosts; else rm -f /etc/hosts; fi'
	out=$(cx pigsty-dns route status --state-dir $STATE 2>&1); echo "$out" >"$LAB/logs/route-status-hosts-clean.log"
	check "$l: hosts: after the line is removed, route status has no hosts failure" 0 "$(grep -c '^FAIL hosts' <<<"$out")"
	check "$l: hosts: ... and getent gets the zone's address" 10.10.10.10 "$(ge meta.pigsty.test)"
	now() { date +%s.%N; }
	since() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.1f", a - b }'; }
	for i in $(seq "$runs"); do
		cx sh -c "printf 'all:\n  hosts:\n    10.10.10.10: { nodename: meta }\n    10.10.10.20: { nodename: conv$i }\n    10.10.10.30: { nodename: gone$i }\n' >/run/lab-conv-a.yml
			printf 'all:\n  hosts:\n    10.10.10.10: { nodename: meta }\n    10.10.10.21: { nodename: conv$i }\n    10.10.10.40: { nodename: new$i }\n' >/run/lab-conv-b.yml"
		cx pigsty-dns load /run/lab-conv-a.yml --ttl $ttl --state-dir $STATE >>"$LAB/logs/load.log" 2>&1
		# programs ask just before the change: the resolver caches the answers (and new's NXDOMAIN)
		ge "conv$i.pigsty.test" >/dev/null; ge "gone$i.pigsty.test" >/dev/null; ge "new$i.pigsty.test" >/dev/null
		cx pigsty-dns load /run/lab-conv-b.yml --ttl $ttl --state-dir $STATE >>"$LAB/logs/load.log" 2>&1
		t0=$(now); a=; b=; c=
		for _ in $(seq $(( (ttl + 7) * 5 ))); do
			[ -z "$a" ] && [ "$(ge "conv$i.pigsty.test")" = 10.10.10.21 ] && a=$(since "$t0")
			[ -z "$b" ] && [ "$(ge "new$i.pigsty.test")" = 10.10.10.40 ] && b=$(since "$t0")
			[ -z "$c" ] && [ -z "$(ge "gone$i.pigsty.test")" ] && c=$(since "$t0")
			[ -n "$a" ] && [ -n "$b" ] && [ -n "$c" ] && break; sleep 0.1
		done
		ra+=("${a:-999}"); rb+=("${b:-999}"); rc_+=("${c:-999}")
		echo "# $l: hosts: run $i: changed ${a:-never} s, new (NXDOMAIN cached) ${b:-never} s, removed ${c:-never} s"
	done
	stats() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {printf "median %.1f s, max %.1f s", v[int((NR+1)/2)], v[NR]}'; }
	within() { local m; m=$(printf '%s\n' "${@:2}" | sort -g | tail -1); awk -v m="$m" -v b="$1" 'BEGIN { exit !(m <= b + 1.5) }' && echo yes || echo "no: max $m s"; }
	echo "# $l: hosts: convergence, --ttl $ttl, SOA minimum $neg, $runs runs: changed $(stats "${ra[@]}"); new $(stats "${rb[@]}"); removed $(stats "${rc_[@]}")"
	check "$l: hosts: a changed address is visible within the TTL ($ttl s) + 1.5 s" yes "$(within $ttl "${ra[@]}")"
	check "$l: hosts: a new name (NXDOMAIN cached) is visible within the SOA minimum ($neg s) + 1.5 s" yes "$(within $neg "${rb[@]}")"
	check "$l: hosts: a removed name is gone within the TTL ($ttl s) + 1.5 s" yes "$(within $ttl "${rc_[@]}")"
	cx pigsty-dns load /srv/lab/pigsty.test.yml --state-dir $STATE >>"$LAB/logs/load.log" 2>&1
}
# ================================================================ end of issue 23 (hosts-wire)

# ================================================================ issue 26 row 1: reboot
# The route and the pigsty-dns *system* unit (`service install --system`, Type=notify) installed, a clean
# poweroff, the same overlay booted again, REBOOTS times (default 2; 0 skips the row). Boot units make
# the machine what start_machine made it by hand: lab-boot-upstream (the uplink veth, the "labup"
# namespace and the upstream stand-in, ordered before NetworkManager, so every query NM's resolver
# sends upstream from its first one on is in /run/lab-upstream.log) and lab-boot-probe (from sysinit
# on: dig @RESOLVER meta.pigsty.test every 0.1 s, each dig on its own so a timeout does not slow the
# polling, plus a fresh control name every 1 s; CLOCK_MONOTONIC, which in nspawn is the host's).
# Figures are from the container's PID 1 start (systemd's UserspaceTimestampMonotonic), from the host's
# `start` (nspawn launched) and from the unit's READY (its ActiveEnterTimestampMonotonic = the journal's
# "Started pigsty-dns.service"). The last of two or more boots holds the daemon back HOLD s (a lab
# drop-in: ExecStartPre=/bin/sleep), so the resolver is up before the daemon and the window before
# READY is seen through the resolver (otherwise the daemon is READY before NM's dnsmasq even listens).
REBOOTS=${REBOOTS:-2}
HOLD=3
SYS_STATE=/var/lib/pigsty-dns
ZONE_RE=' ([^ ]*\.)?(pigsty\.test|pigsty|10\.10\.10\.in-addr\.arpa) '
hmono() { perl -MTime::HiRes=clock_gettime,CLOCK_MONOTONIC -e 'printf "%.6f\n", clock_gettime(CLOCK_MONOTONIC)' 2>/dev/null ||
	python3 -c 'import time; print("%.6f" % time.monotonic())' 2>/dev/null || echo 0; }
mprop() { cx systemctl show "$1" -p "$2" --value; }   # a *Monotonic property, in s
mono_s() { awk -v u="$1" 'BEGIN { printf "%.3f", u / 1e6 }'; }
sub_s() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a - b }'; }

boot_probe() {   # the probe program, in python3 (python3-minimal is in the pid1 root)
	cat <<-'EOF'
	#!/usr/bin/python3
	# lab-boot-probe SERVER NAME WANT OUT: see nm-lab.sh (issue 26 row 1). Bounded: 60 s.
	import subprocess, sys, threading, time
	server, name, want, out = sys.argv[1:5]
	f = open(out, "a", buffering=1); lock = threading.Lock(); good = threading.Event()
	def classify(o):
	    for line in o.splitlines():
	        if "status: " in line:
	            st = line.split("status: ")[1].split(",")[0]
	            a = [l.split()[4] for l in o.splitlines() if not l.startswith(";") and len(l.split()) > 4 and l.split()[3] == "A"]
	            return st + ("/" + a[0] if a else "")
	    if "connection refused" in o: return "port-closed"
	    if "timed out" in o or "no servers could be reached" in o: return "timeout"
	    return "other:" + (o.strip().splitlines() or ["-"])[-1].replace(" ", "_")[:40]
	def ask(kind, q, t0):
	    try:
	        p = subprocess.run(["dig", "+time=1", "+tries=1", "+noall", "+comments", "+answer", "@" + server, q, "A"],
	                           capture_output=True, text=True, timeout=5)
	        r = classify(p.stdout + p.stderr)
	    except Exception as e:
	        r = "error:" + type(e).__name__
	    with lock: f.write("%.6f %.6f %s %s %s\n" % (t0, time.monotonic(), kind, q, r))
	    if kind == "zone" and r == "NOERROR/" + want: good.set()
	end, stop, i, th = time.monotonic() + 60, None, 0, []
	while time.monotonic() < end and (stop is None or time.monotonic() < stop):
	    t0 = time.monotonic()
	    th.append(threading.Thread(target=ask, args=("zone", name, t0))); th[-1].start()
	    if i % 3 == 0:
	        th.append(threading.Thread(target=ask, args=("control", "lab-boot-ctl-%d.example.org" % i, t0))); th[-1].start()
	    if good.is_set() and stop is None: stop = t0 + 1
	    i += 1
	    time.sleep(max(0, t0 + 0.1 - time.monotonic()))
	for t in th: t.join()
	f.write("done %d rounds\n" % i)
	EOF
}

boot_units() {   # $1: the resolver's address. Written and enabled inside, once.
	local dns="--conf-file=/dev/null --port=53 --listen-address=$UP --bind-interfaces --no-resolv --no-hosts --no-negcache --cache-size=0 --user=root --pid-file=/run/lab-boot-upstream.pid --address=/#/203.0.113.99 --log-queries=extra --log-facility=/run/lab-upstream.log"
	boot_probe | cx sh -c 'cat >/usr/local/sbin/lab-boot-probe && chmod 0755 /usr/local/sbin/lab-boot-probe'
	cx sh -c 'cat >/etc/systemd/system/lab-boot-upstream.service' <<-EOF
	[Unit]
	Description=lab: the uplink veth and the default-upstream stand-in, up before NetworkManager
	Before=NetworkManager.service
	[Service]
	# dnsmasq forks once its socket is bound: "started" means it listens
	Type=forking
	PIDFile=/run/lab-boot-upstream.pid
	ExecStartPre=/usr/sbin/ip netns add labup
	ExecStartPre=/usr/sbin/ip link add labv0 type veth peer name labv1 netns labup
	ExecStartPre=/usr/sbin/ip -n labup addr add $UP/24 dev labv1
	ExecStartPre=/usr/sbin/ip -n labup link set labv1 up
	ExecStartPre=/usr/sbin/ip -n labup link set lo up
	ExecStart=/usr/sbin/ip netns exec labup /usr/sbin/dnsmasq $dns
	[Install]
	WantedBy=multi-user.target
	EOF
	cx sh -c 'cat >/etc/systemd/system/lab-boot-probe.service' <<-EOF
	[Unit]
	Description=lab: dig @$1 meta.pigsty.test from early boot until it answers
	DefaultDependencies=no
	Conflicts=shutdown.target
	Before=shutdown.target
	[Service]
	ExecStart=/usr/local/sbin/lab-boot-probe $1 meta.pigsty.test 10.10.10.10 /run/lab-boot-probe.log
	RuntimeMaxSec=90
	[Install]
	WantedBy=sysinit.target
	EOF
	cx systemctl enable -q lab-boot-upstream.service lab-boot-probe.service
}

system_unit_and_route() {   # the lab daemon out; the real system unit on the same port, loaded; the route
	local out rc
	cx systemctl stop lab-pigsty-dns.service
	cx useradd --system --no-create-home pigsty-dns
	out=$(cx pigsty-dns service install --system --user pigsty-dns --program /usr/local/bin/pigsty-dns \
		--listen 127.0.0.1:$PORT 2>&1); rc=$?
	echo "$out" >"$LAB/logs/service-install-system.log"
	check "reboot: service install --system --user pigsty-dns --listen 127.0.0.1:$PORT" 0 "$rc"
	[ "$rc" = 0 ] || echo "$out" | tail -10
	out=$(cx runuser -u pigsty-dns -- /usr/local/bin/pigsty-dns load /srv/lab/pigsty.test.yml --state-dir $SYS_STATE 2>&1)
	echo "$out" >"$LAB/logs/load-system.log"
	ok "reboot: load into the system unit's state dir -> live" "$(grep -o 'live (serial [0-9]*)' <<<"$out" | head -1)" grep -q 'live (serial' <<<"$out"
	STATE=$SYS_STATE   # the counters and route status read the system unit's state from here on
	out=$(cx pigsty-dns route install --server 127.0.0.1:$PORT --yes --check-name meta.pigsty.test --state-dir $STATE 2>&1); rc=$?
	echo "$out" >"$LAB/logs/route-install-reboot.log"
	check "reboot: route install again, to the system unit (verified)" "0 $1" "$rc $(route_json adapter)"
	[ "$rc" = 0 ] || echo "$out" | tail -10
	check "reboot: the system unit is enabled" enabled "$(cx systemctl is-enabled pigsty-dns.service)"
}

reboot_row() {   # $1: label (the adapter), $2: the resolver's address, $3: the "route is back" check
	[ "$REBOOTS" -gt 0 ] || return 0
	local t0=$SECONDS n
	system_unit_and_route "$1"
	boot_units "$2"
	for n in $(seq "$REBOOTS"); do
		if [ "$n" -gt 1 ] && [ "$n" = "$REBOOTS" ]; then
			echo "# $1, reboot $n: the daemon held back $HOLD s at boot (lab drop-in ExecStartPre=/bin/sleep $HOLD)"
			cx sh -c "mkdir -p /etc/systemd/system/pigsty-dns.service.d &&
				printf '[Service]\nExecStartPre=/bin/sleep $HOLD\n' >/etc/systemd/system/pigsty-dns.service.d/lab-hold.conf"
		fi
		reboot_once "$1, reboot $n" "$2" "$3" "$n" || break
	done
	echo "# reboot row ($1, $REBOOTS boots) took $((SECONDS - t0)) s"
}

reboot_once() {   # $1: label, $2: resolver, $3: route-back check, $4: the boot's number
	local l=$1 n=$4 out hs i s
	out=$(P stop 2>&1); echo "$out" >>"$LAB/logs/reboot-stop.log"
	check "$l: clean poweroff (no SIGKILL of nspawn)" 0 "$(grep -c SIGKILL <<<"$out")"
	hs=$(hmono)
	P start >>"$LAB/logs/reboot-start.log" 2>&1 || { check "$l: the container booted again" 0 1; return 1; }
	for i in $(seq 100); do s=$(cx systemctl is-active pigsty-dns.service); [ "$s" = active ] && break; sleep 0.2; done
	check "$l: the system unit is active by itself" active "$s"
	check "$l: NRestarts 0 (a fresh start at boot)" 0 "$(mprop pigsty-dns.service NRestarts)"
	for i in $(seq 150); do cx grep -q '^done' /run/lab-boot-probe.log 2>/dev/null && break; sleep 0.5; done
	cx cat /run/lab-boot-probe.log >"$LAB/logs/boot-probe-$n.log" 2>/dev/null
	cx journalctl --no-pager -q -o short-monotonic -b >"$LAB/logs/boot-$n.journal"
	"$3" "$l"
	zone_answers "$l" "$2"
	unrelated_stays_out "$l"
	reverse_answers "$l" "$2"
	route_status_ok "$l" "reboot-$n"
	boot_figures "$l" "$hs" "$LAB/logs/boot-probe-$n.log" "$2"
	cx test -e /etc/systemd/system/pigsty-dns.service.d/lab-hold.conf && held_window "$l" "$LAB/logs/boot-probe-$n.log"
	boot_leaks "$l" "$LAB/logs/boot-probe-$n.log"
}

boot_figures() {   # $1: label, $2: host monotonic at `start`, $3: the probe's log, $4: the resolver
	local pid1 ready exec up nm up_us nm_us first win
	pid1=$(mono_s "$(cx systemctl show -p UserspaceTimestampMonotonic --value)")
	ready=$(mono_s "$(mprop pigsty-dns.service ActiveEnterTimestampMonotonic)")
	exec=$(mono_s "$(mprop pigsty-dns.service ExecMainStartTimestampMonotonic)")
	up_us=$(mprop lab-boot-upstream.service ActiveEnterTimestampMonotonic)
	nm_us=$(mprop NetworkManager.service ExecMainStartTimestampMonotonic)
	up=$(mono_s "$up_us"); nm=$(mono_s "$nm_us")
	# the first good answer is the earliest *received* one: NM's dnsmasq holds a question it could not
	# forward and answers it (and its repeats) once the daemon is up, so one asked earlier may be
	# answered later
	first=$(awk '$3 == "zone" && $5 == "NOERROR/10.10.10.10" && (f == "" || $2 < f) { f = $2 } END { print f }' "$3")
	ok "$1: the boot probe got NOERROR 10.10.10.10 within 60 s" "first received at ${first:-never}" test -n "$first"
	# Before=NetworkManager.service orders NM's start after the stand-in is active: what that
	# guarantees is "not later", in systemd's microseconds (the same millisecond happens, and was seen)
	ok "$1: the upstream stand-in was up before NetworkManager started" "$up <= $nm" \
		awk -v a="$up_us" -v b="$nm_us" 'BEGIN { exit !(a + 0 > 0 && a + 0 <= b + 0) }'
	# what the probe got before the first good answer: counts by result (zone name only)
	win=$(awk -v f="${first:-1e18}" '$3 == "zone" && $2 < f { n[$5]++ } END { for (k in n) printf "%s %dx, ", k, n[k] }' "$3")
	echo "# measured: $1: boot -> first NOERROR through $4: $(sub_s "${first:-0}" "$pid1") s after PID 1 started," \
		"$(sub_s "${first:-0}" "$2") s after nspawn was launched, $(sub_s "${first:-0}" "$ready") s after READY" \
		"(unit exec $(sub_s "$exec" "$pid1") s, READY $(sub_s "$ready" "$pid1") s, NetworkManager exec $(sub_s "$nm" "$pid1") s after PID 1);" \
		"before it: ${win:-nothing}"
	check "$1: the zone name never got NXDOMAIN or another address, before or after the first good answer" "" \
		"$(awk '$3 == "zone" && ($5 ~ /^NXDOMAIN/ || $5 ~ /^NOERROR/) && $5 != "NOERROR/10.10.10.10" { print $5 }' "$3" | sort -u | paste -sd' ' -)"
}

boot_leaks() {   # $1: label, $2: the probe's log. The stand-in's log since boot: no zone query, ever.
	local log; log=$(cx cat /run/lab-upstream.log)
	check "$1: since boot the upstream stand-in saw no query in pigsty.test, pigsty or 10.10.10.in-addr.arpa" 0 \
		"$(grep -cE "query\[[A-Z]+\]$ZONE_RE" <<<"$log")"
	# the check can fail: the probe's control names went through the same resolver to the stand-in
	ok "$1: control: the stand-in logged the probe's control names during boot" \
		"$(grep -c 'query\[A\] lab-boot-ctl-' <<<"$log") logged, first answered $(awk '$3 == "control" && $5 == "NOERROR/203.0.113.99" { print $1; exit }' "$2")" \
		grep -q 'query\[A\] lab-boot-ctl-' <<<"$log"
}
dnsmasq_back() {   # $1: label. The drop-in is there and NM's new dnsmasq reads its directory.
	local p; p=$(dnsmasq_pid)
	check "$1: the drop-in is still there" "server=/pigsty.test/127.0.0.1#$PORT server=/pigsty/127.0.0.1#$PORT server=/10.10.10.in-addr.arpa/127.0.0.1#$PORT" \
		"$(cx grep -v '^#' /etc/NetworkManager/dnsmasq.d/pigsty-dns.conf | paste -sd' ' -)"
	check "$1: NM's dnsmasq of this boot reads the drop-in's directory" 1 \
		"$(cx sh -c "tr '\\0' '\\n' </proc/$p/cmdline" 2>/dev/null | grep -cx -- '--conf-dir=/etc/NetworkManager/dnsmasq.d')"
}
resolved_back() {   # $1: label. resolved has the route again (the link's boot unit, or the delegate file).
	local i s
	for i in $(seq 50); do s=$(the_route); [ "$s" = "$ROUTE" ] && break; sleep 0.2; done
	check "$1: resolved has the route again ($KIND)" "$ROUTE" "$s"
	[ "$KIND" = link ] && check "$1: the route's boot unit is active" active "$(cx systemctl is-active pigsty-dns-route.service)"
	return 0
}
held_window() {   # $1: label, $2: the probe's log. The held boot: the resolver did answer before READY.
	local ready up
	ready=$(mono_s "$(mprop pigsty-dns.service ActiveEnterTimestampMonotonic)")
	up=$(awk '$3 == "zone" && $5 != "port-closed" { print $1; exit }' "$2")
	ok "$1: held back: the resolver took questions before the daemon was READY (the window was seen)" \
		"resolver from ${up:-never}, READY $ready" awk -v a="${up:-1e18}" -v b="$ready" 'BEGIN { exit !(a < b) }'
}
# ================================================================ end of issue 26 row 1

scenario_dnsmasq() {
	local conf=/etc/NetworkManager/dnsmasq.d/pigsty-dns.conf i old new
	check "NM's DNS mode" 's "dnsmasq"' "$(cx busctl get-property org.freedesktop.NetworkManager \
		/org/freedesktop/NetworkManager/DnsManager org.freedesktop.NetworkManager.DnsManager Mode)"
	for i in $(seq 100); do cx ss -lunp | grep -q '127.0.0.1:53 .*dnsmasq' && break; sleep 0.1; done
	ok "NM's dnsmasq listens on 127.0.0.1:53" "pid $(dnsmasq_pid)" cx sh -c "ss -lunp | grep -q '127.0.0.1:53 .*dnsmasq'"
	check "NM wrote resolv.conf: nameserver 127.0.0.1" "nameserver 127.0.0.1" "$(cx grep -x 'nameserver 127.0.0.1' /etc/resolv.conf)"
	mark
	check "control, before the route: meta.pigsty.test goes to the default upstream" 203.0.113.99 "$(ge meta.pigsty.test)"
	check "control, before the route: the upstream log saw it" yes "$(upstream_saw meta.pigsty.test)"
	etc_fingerprint >"$LAB/etc-before"; nm_state >"$LAB/nm-before"
	old=$(dnsmasq_pid)
	route_install nm-dnsmasq
	new=$(dnsmasq_pid)
	ok "the adapter's reload restarted NM's dnsmasq (new pid)" "$old -> $new" test -n "$new" -a "$new" != "$old"
	check "the drop-in: the marker, then the server lines (each served zone, the reverse zone)" \
		"yes server=/pigsty.test/127.0.0.1#$PORT server=/pigsty/127.0.0.1#$PORT server=/10.10.10.in-addr.arpa/127.0.0.1#$PORT" \
		"$(cx head -1 $conf | grep -q '^# Written by pigsty-dns' && echo yes || echo no) $(cx grep -v '^#' $conf | paste -sd' ' -)"
	check "the drop-in: root-owned 0644" "0:0 644" "$(cx stat -c '%u:%g %a' $conf)"
	zone_answers "through NM's dnsmasq" 127.0.0.1
	unrelated_stays_out "through NM's dnsmasq"
	reverse_answers "through NM's dnsmasq" 127.0.0.1
	route_status_ok "nm-dnsmasq" installed
	dnsmasq_events
	hosts_mode nm-dnsmasq   # issue 23
	daemon_down 127.0.0.1
	route_uninstall 203.0.113.99
	reboot_row nm-dnsmasq 127.0.0.1 dnsmasq_back   # issue 26 row 1
}

# issue 26, row 3 for nm-dnsmasq: NM reloaded and restarted; its dnsmasq comes back with the drop-in
dnsmasq_events() {
	local ev i t0 ms
	for ev in "nmcli general reload" "systemctl restart NetworkManager"; do
		t0=$(date +%s%N)
		cx sh -c "$ev" >>"$LAB/logs/nm-events.log" 2>&1 || echo "# '$ev' exited $?"
		for i in $(seq 150); do [ "$(dq meta.pigsty.test 127.0.0.1)" = "NOERROR 10.10.10.10" ] && break; sleep 0.1; done
		ms=$(( ($(date +%s%N) - t0) / 1000000 ))
		echo "# measured: nm-dnsmasq: $ev: first good answer through NM's dnsmasq $ms ms after the command started"
		zone_answers "nm-dnsmasq, $ev" 127.0.0.1
		unrelated_stays_out "nm-dnsmasq, $ev"
	done
}

link_route() {   # resolved's per-link settings of the route's link, one line
	{ cx resolvectl --no-pager dns pigsty-dns0; cx resolvectl --no-pager domain pigsty-dns0
		cx resolvectl --no-pager default-route pigsty-dns0; } 2>&1 | sed 's/^Link [0-9]* (pigsty-dns0): *//' | paste -sd';' -
}
delegate_route() {   # the "Delegate pigsty-dns" block of resolvectl status, one line
	cx resolvectl --no-pager status 2>/dev/null | awk '/^Delegate /{on = ($2 == "pigsty-dns")} /^(Link|Global)/{on = 0} on' |
		sed 's/^ *//' | grep -v '^Current DNS Server' | paste -sd';' -
}
nm_link() { cx nmcli -t -f DEVICE,TYPE,STATE,CONNECTION device | grep '^pigsty-dns0:' || echo none; }
the_route() { if [ "$KIND" = link ]; then link_route; else delegate_route; fi; }

survives() {   # $1: label. The route is still in resolved, the zone answers, nothing leaks.
	check "$1: resolved still has the route ($KIND)" "$ROUTE" "$(the_route)"
	zone_answers "$1" 127.0.0.53
	unrelated_stays_out "$1"
	reverse_answers "$1" 127.0.0.53
}

nm_event() {   # $1: label, then the commands (;-separated words in one string each)
	local label=$1 c; shift
	local cur; cur=$(jcursor)
	for c in "$@"; do cx sh -c "$c" >>"$LAB/logs/nm-events.log" 2>&1 || echo "# '$c' exited $?"; done
	nm_connected || echo "# $label: lab-uplink not activated again within 30 s"
	# NM pushes DNS to resolved asynchronously after activation: let it settle before checking
	sleep 2
	[ "$KIND" = link ] && echo "# $label: NM's view of the route's link: $(nm_link)"
	cx journalctl --no-pager -q -o short-monotonic --after-cursor="$cur" >"$LAB/logs/event-$(tr -c 'a-z0-9\n' - <<<"$label" | head -c 40).journal"
	survives "$label"
}

# resolved-link only: the route's link as a veth, a kind NM manages (the ifb the route makes here is a
# "Generic" device NM leaves alone anyway; with the dummy driver it would be a dummy, which NM takes).
# A lab-only step: the ifb goes, a veth of the same name comes, and the route's own boot unit puts
# the address and resolved settings on it -- no nmcli call, so only the drop-in keeps NM off it.
veth_stand_in() {
	# install applied the route itself and only enabled the unit: it is inactive; stop it anyway (its
	# ExecStop deletes the link), and delete the ifb
	cx systemctl stop pigsty-dns-route.service; cx ip link del pigsty-dns0 2>/dev/null
	check "veth stand-in: the ifb is gone" none "$(nm_link)"
	cx ip link add pigsty-dns0 type veth peer name pigsty-dnsp; cx ip link set pigsty-dnsp up
	cx systemctl start pigsty-dns-route.service  # its "ip link add ... ifb" fails (tolerated): the veth is there
	sleep 2
	check "veth stand-in: NM takes the veth as unmanaged from its configuration alone" \
		"pigsty-dns0:ethernet:unmanaged:" "$(nm_link)"
	check "veth stand-in: the route's address is on it" 1 "$(cx ip -br addr show pigsty-dns0 | grep -c '198.18.53.53/32')"
	survives "veth stand-in"
	nm_event "veth stand-in: systemctl restart NetworkManager" "systemctl restart NetworkManager"
	check "veth stand-in: unmanaged after the NM restart" "pigsty-dns0:ethernet:unmanaged:" "$(nm_link)"
	nm_event "veth stand-in: nmcli networking off/on" "nmcli networking off" "sleep 1" "nmcli networking on"
	check "veth stand-in: the address survives networking off/on" 1 "$(cx ip -br addr show pigsty-dns0 | grep -c '198.18.53.53/32')"
	route_status_ok "veth stand-in" veth
	check "veth stand-in: route status: NetworkManager reports the link unmanaged" 1 \
		"$(grep -c '^ok   NetworkManager: link pigsty-dns0 is unmanaged' "$LAB/logs/route-status-veth.log")"
}

# 2./3. NM with dns=systemd-resolved and the real resolved of the suite.
scenario_resolved() {
	local adapter i
	check "NM's DNS mode" 's "systemd-resolved"' "$(cx busctl get-property org.freedesktop.NetworkManager \
		/org/freedesktop/NetworkManager/DnsManager org.freedesktop.NetworkManager.DnsManager Mode)"
	check "systemd-resolved runs, networkd does not" "active inactive" \
		"$(cx systemctl is-active systemd-resolved) $(cx systemctl is-active systemd-networkd)"
	for i in $(seq 100); do cx resolvectl --no-pager dns labv0 | grep -q "$UP" && break; sleep 0.1; done
	check "NM pushed the uplink's DNS to resolved" "$UP" "$(cx resolvectl --no-pager dns labv0 | sed 's/^Link [0-9]* (labv0): *//')"
	mark
	check "control, before the route: meta.pigsty.test goes to the default upstream" 203.0.113.99 "$(ge meta.pigsty.test)"
	check "control, before the route: the upstream log saw it" yes "$(upstream_saw meta.pigsty.test)"
	etc_fingerprint >"$LAB/etc-before"; nm_state >"$LAB/nm-before"; resolved_links >"$LAB/resolved-before"
	if [ "$SYSTEMD" -ge 258 ]; then
		adapter=resolved-delegate KIND=delegate ROUTE="Delegate pigsty-dns;DNS Servers: 127.0.0.1:$PORT;DNS Domain: ~pigsty.test ~pigsty ~10.10.10.in-addr.arpa;Default Route: no"
	else
		adapter=resolved-link KIND=link ROUTE="127.0.0.1:$PORT;~pigsty.test ~pigsty ~10.10.10.in-addr.arpa;no"
	fi
	route_install $adapter
	if [ "$KIND" = link ]; then
		check "resolved-link: the runtime variant (no networkd), its boot unit enabled" "runtime enabled" \
			"$(cx sed -n 's/^ *"variant": *"\([^"]*\)".*/\1/p' /var/lib/pigsty-dns-route/journal.json) $(cx systemctl is-enabled pigsty-dns-route.service)"
		echo "# NM's view of the route's link after install: $(nm_link)"
		local nmconf=/etc/NetworkManager/conf.d/pigsty-dns.conf
		check "resolved-link: the NM drop-in: the marker, then the unmanaged line" \
			"yes [keyfile] unmanaged-devices+=interface-name:pigsty-dns0" \
			"$(cx head -1 $nmconf | grep -q '^# Written by pigsty-dns' && echo yes || echo no) $(cx grep -v '^#' $nmconf | paste -sd' ' -)"
		check "resolved-link: NM's merged configuration lists the link unmanaged" 1 \
			"$(cx NetworkManager --print-config | grep -c '^unmanaged-devices=.*interface-name:pigsty-dns0')"
	fi
	survives "after install"
	route_status_ok "after install" installed
	nm_event "nmcli general reload" "nmcli general reload"
	nm_event "systemctl restart NetworkManager" "systemctl restart NetworkManager"
	nm_event "uplink down and up" "nmcli connection down lab-uplink" "nmcli --wait 20 connection up lab-uplink"
	nm_event "nmcli networking off/on" "nmcli networking off" "sleep 1" "nmcli networking on"
	route_status_ok "after the NM events" events
	[ "$KIND" = link ] && veth_stand_in
	daemon_down 127.0.0.53
	route_uninstall 203.0.113.99
	check "resolved's state: no route" none "$(route_kind)"
	resolved_links >"$LAB/resolved-after"
	check "resolved's per-link DNS and domains as before the install" "" "$(diff "$LAB/resolved-before" "$LAB/resolved-after" | head -10)"
	reboot_row $adapter 127.0.0.53 resolved_back   # issue 26 row 1
}

root_fingerprint() { (cd "$NMROOT" && find etc usr/local var/lib -xdev -printf '%p %s %T@\n' 2>/dev/null | LC_ALL=C sort); }

test_run() {
	[ "$(id -u)" = 0 ] || die "must run as root"
	local t
	for t in unshare nsenter setsid systemd-nspawn flock awk sha256sum chroot; do command -v "$t" >/dev/null || die "missing $t"; done
	[ -x "${PIGSTY_DNS_BIN:-}" ] || die "set PIGSTY_DNS_BIN to the pigsty-dns binary"
	[ -f "${PIGSTY_DNS_RECORDS:-}" ] || die "set PIGSTY_DNS_RECORDS to zones/pigsty.test.yml"
	local t0=$SECONDS
	build_root
	echo "# NM root ready: $NMROOT in $((SECONDS - t0)) s"
	mkdir -p "$LAB" || die "cannot create $LAB"
	root_fingerprint >"$LAB/root-before"
	setup_machine
	trap 'P stop' EXIT
	trap 'exit 130' INT TERM
	local t1=$SECONDS
	start_machine
	SYSTEMD=$(cx systemctl --version | awk 'NR == 1 { print $2 }')
	echo "# NetworkManager $(cx NetworkManager --version), systemd $SYSTEMD, [main] dns=$NM_DNS, $SUITE, $(cx uname -r); up in $((SECONDS - t1)) s"
	case "$NM_DNS" in
	dnsmasq) scenario_dnsmasq ;;
	systemd-resolved) scenario_resolved ;;
	esac
	cx journalctl --no-pager -q -o short-monotonic -b -u NetworkManager >"$LAB/logs/NetworkManager.journal"
	cx journalctl --no-pager -q -o short-monotonic -b -u systemd-resolved >"$LAB/logs/resolved.journal" 2>/dev/null
	P stop
	trap - EXIT
	check "the cached NM $SUITE root is unchanged (the run wrote only to its overlay)" "" \
		"$(root_fingerprint | diff - "$LAB/root-before" | head -5)"
	echo "# $SUITE dns=$NM_DNS took $((SECONDS - t1)) s (logs: $LAB/logs)"
	echo "$PASS passed, $FAIL failed"
	[ "$FAIL" = 0 ]
}

case "${1:-}" in
test) test_run ;;
build) build_root; echo "# NM root ready: $NMROOT ($(sed -n 's/^nm=//p' "$NMROOT/.nm-root-ok"))" ;;
start) build_root; setup_machine; start_machine ;;
exec) shift; cx "$@" ;;
stop) P stop ;;
*) echo "usage: $0 test|build|start|exec CMD...|stop" >&2; exit 2 ;;
esac
