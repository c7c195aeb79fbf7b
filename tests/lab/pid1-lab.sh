#!/bin/bash
# pid1-lab.sh - the whole `pigsty-dns service` + `route` journey under a REAL systemd as PID 1: a
# debootstrapped Debian root booted with systemd-nspawn on a host whose own PID 1 is not systemd (this
# machine, CI). Adapted from the project's reference lab (shared/lab/pid1-lab.sh).
#
#   pid1-lab.sh test          build the root if needed, boot it, run the journey; PASS/FAIL lines, then
#                             "N passed, N failed"; exit 0 iff nothing failed; the container is always
#                             stopped at the end (EXIT trap), also when a check fails or a signal comes
#   pid1-lab.sh build         debootstrap the root once (about 2 min each), cached
#   pid1-lab.sh start|stop    boot the per-run container in the background / clean poweroff (SIGKILL
#                             of nspawn after 30 s)
#   pid1-lab.sh exec CMD...   run CMD inside, in every namespace of the container's PID 1, clean env
#   pid1-lab.sh user CMD...   run CMD as the test user with its user manager and bus (lingering)
#   pid1-lab.sh path          print the cached root's directory
#
# The cached root ($PID1_CACHE/$SUITE-<digest of INCLUDE>) is never written after it is built: each run boots an overlay
# (lower: the cached root, upper: $LAB/upper) mounted in a private mount namespace that lives exactly as
# long as nspawn, so the host's mount table never sees it. The upper dir survives a stop/start of the
# container (the "reboot" checks), and is thrown away with $LAB.
#
# Environment:
#   SUITE            bookworm (default; systemd 252, boots on this host's hybrid cgroup layout) or sid
#                    (systemd >= 258; cgroup v2 only, so SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 is set)
#   PID1_CACHE       where roots are cached (default ${TMPDIR:-/tmp}/pigsty-dns-pid1-lab)
#   LAB              per-run dir: overlay upper, nspawn pid and log (default $PID1_CACHE/run-$SUITE)
#   NAME             machine name (default pid1lab-$SUITE)
#   NET              private (default: --private-network, only lo inside; the route steps never touch
#                    the host's network namespace) or host
#   PIGSTY_DNS_BIN   the pigsty-dns binary copied into the root as /usr/local/bin/pigsty-dns (test)
#   PIGSTY_DNS_RECORDS  zones/pigsty.test.yml (test)
#   PIGSTY_DNS_DEB   the Debian package built in this run (deploy/debian/build-deb.sh): after the journey
#                    above, `dpkg -i` it and do the journey again with /usr/bin/pigsty-dns and the
#                    package's account, then `dpkg -r` and `dpkg -P` (test)
#   PARTS            all (default) or package: boot, then only the package journey (for working on it)
#   MIRROR           Debian archive URL for debootstrap (default: the host's own apt sources)
#   REBUILD=1        build the root again
#
# Facts found while building this (systemd 252 and 262 on this host):
# - `--register=no --keep-unit` are needed: there is no machined and no host systemd to ask for a scope.
# - In *user* units on 252, ProtectSystem=, ProtectHome= and PrivateTmp= are silently ignored unless
#   PrivateUsers=yes; on 262 that is implied. ProtectHome=yes/tmpfs also hides /run/user, which breaks
#   sd_notify (socket not found / EACCES) and a StateDirectory under $HOME; ProtectHome=read-only works.
# - RestartSteps=/RestartMaxDelaySec= exist from systemd 254: on bookworm (252) restarts come at a fixed
#   RestartSec; on sid they back off.
# - The boot log's "Some capabilities will not be set" (no CAP_SYS_RESOURCE in the host's bounding set)
#   is harmless.
# - nspawn installs its own seccomp filter and bounding set for everything in the container, so "Seccomp: 2"
#   alone proves nothing about the unit: the checks compare Seccomp_filters with the container's PID 1
#   (system unit) and the user manager (user unit). A process nsenter'd from the host carries neither.
# - nsenter passes the host's environment in: every command inside runs under `env -i`.
# - A lab unit in multi-user.target with Before=systemd-resolved.service is an ordering cycle (resolved
#   is in sysinit.target): systemd silently drops resolved's start job. The boot checks grep for cycles.
#   The lab's units that must be up before resolved (the uplink, the upstream stand-in) and the boot
#   probe have DefaultDependencies=no and are wanted by sysinit.target instead.
# - In the container CLOCK_MONOTONIC is the host's (no time namespace) and there is no kernel timestamp:
#   the boot's zero is PID 1's UserspaceTimestampMonotonic; the journal's monotonic times, the units'
#   *TimestampMonotonic and the probe's clock_gettime all read the same clock.
# - 252: when the start limit stops an automatic restart, Result= stays "exit-code"; the journal says
#   "Start request repeated too quickly". `systemctl reset-failed` also resets the start-limit window.
# - Debian sid's sudo (1.9.17) has secure_path="/usr/sbin:/usr/bin:/sbin:/bin": `sudo -u U pigsty-dns`
#   is "command not found" for /usr/local/bin/pigsty-dns; bookworm's includes /usr/local/bin.
# - This host's kernel has no dummy driver (ifb only): the route picks ifb by itself, and so does the
#   lab's uplink stand-in.
# - The host's cgroup layout is hybrid (controllers on v1): no memory controller reaches the container, so
#   MemoryMax= is set on the unit but cannot be enforced here (reported, not checked).
#
# Addresses: only loopback and, inside the container's own network namespace, TEST-NET-2
# 198.51.100.254/32 on an ifb/dummy "uplink" stand-in (resolved uses a link or delegate scope only while
# some link has a routable address) and the route's own link address (198.18.53.53/32, resolved-link).
# The system unit listens on 127.0.0.1:5399, the user unit on 127.0.0.1:5398.
set -uo pipefail
SUITE=${SUITE:-bookworm}
PID1_CACHE=${PID1_CACHE:-${TMPDIR:-/tmp}/pigsty-dns-pid1-lab}
LAB=${LAB:-$PID1_CACHE/run-$SUITE}
NAME=${NAME:-pid1lab-$SUITE}
NET=${NET:-private}
MERGED=$LAB/merged
TUSER=tester; TUID=1000
PORT=5399; UPORT=5398
SELF=$(readlink -f "$0")
# adduser (the package's Depends), man-db (man -w) and bash-completion: for the package journey
INCLUDE=systemd,systemd-sysv,dbus,dbus-user-session,libpam-systemd,systemd-resolved,iproute2,procps,sudo,python3-minimal,bind9-dnsutils,adduser,man-db,bash-completion
# The root's name carries a digest of INCLUDE: checkouts with another package list keep their own
# cached root instead of rebuilding each other's in turn.
ROOT=$PID1_CACHE/$SUITE-$(printf %s "$INCLUDE" | sha256sum | cut -c1-8)
IN_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
die() { echo "pid1-lab: $*" >&2; exit 2; }
case "$SUITE" in
bookworm) ;;
sid) export SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 ;;
*) die "SUITE must be bookworm or sid, not $SUITE" ;;
esac

# ---------------------------------------------------------------- the cached root
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
	# URIs that look like a Debian archive (…/debian) are tried first, security archives never
	for u in $({ apt_uris | grep -E '/debian/?$'; apt_uris; } | grep -vi security | awk '!seen[$0]++'); do
		u=${u%/}
		# grep without -q reads to the end: with pipefail, an early exit would fail wget (SIGPIPE)
		if timeout 60 wget -q -O - "$u/dists/$SUITE/Release" 2>/dev/null | grep '^Origin: Debian' >/dev/null; then
			echo "$u"; return 0
		fi
	done
	return 1
}

root_ok() { [ -f "$ROOT/.lab-root-ok" ] && grep -qxF "include=$INCLUDE" "$ROOT/.lab-root-ok"; }
root_version() { sed -n 's/^systemd=//p' "$ROOT/.lab-root-ok" 2>/dev/null; }

build() {   # under an flock: concurrent runs build the cached root once
	mkdir -p "$PID1_CACHE"
	exec 9>"$PID1_CACHE/.lock-$SUITE"
	flock -w 400 9 || die "another run holds $PID1_CACHE/.lock-$SUITE"
	if [ -z "${REBUILD:-}" ] && root_ok; then exec 9>&-; return 0; fi
	local p
	for p in systemd-container debootstrap wget; do
		dpkg -s "$p" >/dev/null 2>&1 || die "missing $p (apt-get install $p; .ci/run installs it)"
	done
	local mirror d
	mirror=$(pick_mirror) || die "no Debian archive in the host's apt sources serves $SUITE (set MIRROR=)"
	for d in "$ROOT" "$ROOT.new"; do   # never delete through a mount point
		[ -e "$d" ] || continue
		awk -v p="$d" '$5 == p || index($5, p "/") == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo &&
			die "something is mounted under $d; refusing to delete it"
	done
	rm -rf "$ROOT.new"
	echo "# building the $SUITE root from $mirror (log: $PID1_CACHE/debootstrap-$SUITE.log)"
	local t0=$SECONDS
	# a private mount namespace keeps debootstrap's /proc and /sys mounts in the target off the host
	timeout -k 10 900 unshare --mount --propagation private debootstrap --variant=minbase \
		--include="$INCLUDE" "$SUITE" "$ROOT.new" "$mirror" >"$PID1_CACHE/debootstrap-$SUITE.log" 2>&1 ||
		die "debootstrap failed (see $PID1_CACHE/debootstrap-$SUITE.log)"
	rm -f "$ROOT.new"/var/cache/apt/archives/*.deb
	rm -rf "$ROOT.new"/var/lib/apt/lists/*
	echo "$NAME" >"$ROOT.new/etc/hostname"
	# A fixed machine id: no first-boot presets, the same journal across the reboot checks.
	od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$ROOT.new/etc/machine-id"; echo >>"$ROOT.new/etc/machine-id"
	chroot "$ROOT.new" useradd -m -u "$TUID" -s /bin/bash "$TUSER" || die "useradd $TUSER"
	if [ "$SUITE" = bookworm ]; then
		# the bookworm "machine" manages its network with networkd (resolved-link's networkd variant)
		chroot "$ROOT.new" systemctl enable systemd-networkd.service >/dev/null 2>&1 || die "enable networkd"
	fi
	local v
	v=$(chroot "$ROOT.new" /usr/lib/systemd/systemd --version 2>/dev/null | awk 'NR == 1 { print $2 }')
	[ -n "$v" ] || die "no systemd in the new $SUITE root"
	printf 'suite=%s\nsystemd=%s\ninclude=%s\n' "$SUITE" "$v" "$INCLUDE" >"$ROOT.new/.lab-root-ok"
	rm -rf "$ROOT"; mv "$ROOT.new" "$ROOT"
	echo "# $SUITE root built in $((SECONDS - t0)) s: $(du -sh "$ROOT" | cut -f1), systemd $v"
	exec 9>&-
}

# ---------------------------------------------------------------- the per-run container
npid() { cat "$LAB/nspawn.pid" 2>/dev/null; }
running() { local p; p=$(npid) && [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }
cpid() { local n; n=$(npid) && [ -n "$n" ] && pgrep -P "$n" | head -n1; }
# a command inside the container, with a clean environment (nothing of the host's leaks in)
cx() {
	local p; p=$(cpid) && [ -n "$p" ] || { echo "pid1-lab: container not running" >&2; return 125; }
	nsenter -t "$p" -a env -i PATH="$IN_PATH" HOME=/root USER=root LOGNAME=root LANG=C.UTF-8 TERM=dumb "$@"
}
ux() {   # as the test user, with the user manager (lingering) and its bus
	cx loginctl enable-linger "$TUSER" </dev/null && cx systemctl start "user@$TUID.service" </dev/null || return 125
	uxq "$@"
}
uxq() {  # as ux, but neither lingering nor the user manager started: only what is there already
	cx runuser -u "$TUSER" -- env -i PATH="$IN_PATH" HOME=/home/$TUSER USER=$TUSER LOGNAME=$TUSER LANG=C.UTF-8 \
		XDG_RUNTIME_DIR=/run/user/$TUID DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/$TUID/bus "$@"
}

start() {
	build
	running && die "already running (nspawn pid $(npid))"
	mkdir -p "$LAB/upper" "$LAB/work" "$MERGED"
	local net=()
	[ "$NET" = private ] && net=(--private-network)
	# The overlay exists only in this mount namespace, which lives as long as nspawn (exec'd into).
	setsid unshare --mount --propagation private sh -c '
		mount -t overlay -o "lowerdir=$1,upperdir=$2/upper,workdir=$2/work" pid1lab "$3" || exit 97
		shift 3; exec "$@"' sh "$ROOT" "$LAB" "$MERGED" \
		systemd-nspawn --register=no --keep-unit "${net[@]}" -D "$MERGED" -M "$NAME" -b \
		--console=passive >>"$LAB/nspawn.log" 2>&1 </dev/null &
	echo $! >"$LAB/nspawn.pid"
	local p s=
	for _ in $(seq 300); do
		running || { tail -20 "$LAB/nspawn.log" >&2; rm -f "$LAB/nspawn.pid"; die "nspawn exited"; }
		p=$(cpid || true)
		if [ -n "$p" ]; then
			s=$(nsenter -t "$p" -a systemctl is-system-running 2>/dev/null || true)
			case "$s" in running|degraded) echo "# $SUITE booted: PID 1 is host pid $p ($s)"; return 0 ;; esac
		fi
		sleep 0.2
	done
	die "no running state after 60 s (last: ${s:-none}; see $LAB/nspawn.log)"
}

stop() {
	running || { rm -f "$LAB/nspawn.pid"; return 0; }
	local np; np=$(npid)
	nsenter -t "$(cpid)" -a systemctl poweroff 2>/dev/null || kill -TERM "$np" 2>/dev/null || true
	for _ in $(seq 150); do kill -0 "$np" 2>/dev/null || break; sleep 0.2; done
	if kill -0 "$np" 2>/dev/null; then echo "# still running after 30 s: SIGKILL nspawn $np"; kill -KILL "$np"; fi
	for _ in $(seq 50); do kill -0 "$np" 2>/dev/null || break; sleep 0.1; done
	rm -f "$LAB/nspawn.pid"
}

# ---------------------------------------------------------------- checks
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

show() {   # show UNIT PROPS [--user]: "k=v;k=v", in the order asked
	local u=$1 p out=()
	for p in ${2//,/ }; do out+=("$p=$(prop "$u" "$p" "${3:-}")"); done
	(IFS=';'; echo "${out[*]}")
}
prop() { if [ "${3:-}" = --user ]; then ux systemctl --user show "$1" -p "$2" --value; else cx systemctl show "$1" -p "$2" --value; fi; }
pstatus() { cx cat "/proc/$1/status" | awk -v k="$2:" '$1 == k { print $2 }'; }
dq() {   # dig at a port inside the container: "STATUS first-A" / for SOA: "STATUS serial"
	local out st a
	out=$(cx timeout 10 dig +time=2 +tries=1 +noall +comments +answer @127.0.0.1 -p "$1" "$2" "${3:-A}" 2>&1)
	st=$(grep -o 'status: [A-Z]*' <<<"$out" | head -1); st=${st#status: }
	case "${3:-A}" in
	SOA) a=$(awk '!/^;/ && $4 == "SOA" { print $7; exit }' <<<"$out") ;;
	*) a=$(awk '!/^;/ && $4 == "A" { print $5; exit }' <<<"$out") ;;
	esac
	echo "${st:-NOANSWER}${a:+ $a}"
}
ge() { cx timeout 20 getent ahostsv4 "$1" | awk '{ print $1; exit }'; }
# Wait (bounded) until UNIT's ActiveState is one of STATES (|-separated); prints the last state.
wait_state() {
	local u=$1 want=$2 n=${3:-150} s= i
	for ((i = 0; i < n; i++)); do
		s=$(prop "$u" ActiveState "${4:-}")
		case "|$want|" in *"|$s|"*) echo "$s"; return 0 ;; esac
		sleep 0.2
	done
	echo "$s"; return 1
}
etc_fingerprint() {   # every path under /etc: type, mode, owner, symlink target; sha256 of files
	cx sh -c 'find /etc -xdev -printf "%y %m %u:%g %p %l\n" | LC_ALL=C sort
		find /etc -xdev -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum'
}
exposure() { awk '/Overall exposure level/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+$/) { print $i; exit } }'; }
# journal lines of this boot after a cursor, short-monotonic ("[  12.345678] host proc[pid]: text")
jsince() { cx journalctl --no-pager -q -o short-monotonic --after-cursor="$1" "${@:2}"; }
jcursor() { cx journalctl --no-pager -q -n 0 --show-cursor | sed -n 's/^-- cursor: //p'; }
mono() { sed -n 's/^\[ *\([0-9.]*\)\].*/\1/p'; }

# ---------------------------------------------------------------- the journey
setup_machine() {   # the lab's own additions to the "machine", before anything is measured
	local up=$LAB/upper
	install -d -m 0755 "$up/usr/local/bin" "$up/srv/lab" "$up/etc/systemd/system/sysinit.target.wants"
	install -o root -g root -m 0755 "$PIGSTY_DNS_BIN" "$up/usr/local/bin/pigsty-dns"
	install -o root -g root -m 0644 "$PIGSTY_DNS_RECORDS" "$up/srv/lab/pigsty.test.yml"
	install -o root -g root -m 0644 "$PIGSTY_DNS_DEB" "$up/srv/lab/pigsty-dns.deb"
	# The uplink stand-in: resolved uses a link or delegate scope only while some link has a routable
	# address. The kernel may lack the dummy driver; ifb behaves the same for resolved.
	cat >"$up/etc/systemd/system/lab-uplink.service" <<'EOF'
[Unit]
Description=pid1-lab: an uplink stand-in with a TEST-NET-2 address (private network namespace only)
# Up before resolved, as a real uplink may be: the reboot checks want the upstream reachable from
# resolved's first query on. Before=systemd-resolved.service from a unit in multi-user.target is an
# ordering cycle (resolved is part of sysinit.target): so no default dependencies, in sysinit.target.
DefaultDependencies=no
Before=systemd-resolved.service
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh -c 'ip link add pu0 type dummy 2>/dev/null || ip link add pu0 type ifb'
ExecStart=/usr/sbin/ip link set pu0 addrgenmode none
ExecStart=/usr/sbin/ip addr add 198.51.100.254/32 dev pu0
ExecStart=/usr/sbin/ip link set pu0 up
[Install]
WantedBy=sysinit.target
EOF
	ln -sf /etc/systemd/system/lab-uplink.service "$up/etc/systemd/system/sysinit.target.wants/lab-uplink.service"
	setup_boot_watch "$up"
	# A port taker for the "port in use" check (UDP and TCP, the daemon's address), run as a transient unit.
	cat >"$up/srv/lab/take-port.py" <<'EOF'
import socket, sys, time
port = int(sys.argv[1])
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", port))
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM); t.bind(("127.0.0.1", port)); t.listen(1)
time.sleep(600)
EOF
	# resolved's state and the unit's, every 50 ms (bounded: 600 samples); systemd-run would expand $
	cat >"$up/srv/lab/sampler.sh" <<'EOF'
i=0
while [ $i -lt 600 ]; do
	r=none; s=$(resolvectl --no-pager status 2>/dev/null)
	case "$s" in *"Delegate pigsty-dns"*|*pigsty-dns0*) r=route ;; esac
	echo "$(cut -d' ' -f1 /proc/uptime) $r $(systemctl is-active pigsty-dns.service)" >>/run/lab-sampler.log
	sleep 0.05; i=$((i + 1))
done
EOF
}

# Issue 26 row 1, the reboot: what watches the second boot. The upstream stand-in (resolved's global DNS
# server) and the uplink are up before resolved starts (no default dependencies, in sysinit.target: no
# ordering cycle), so a zone name that leaks at any time of the boot has somewhere to go and is
# recorded. The probe (armed only for that boot) asks the stub from early in sysinit on. Both log
# CLOCK_MONOTONIC: the clock of systemd's *TimestampMonotonic and the journal's (no time namespace).
setup_boot_watch() {
	local up=$1
	install -d -m 0755 "$up/etc/systemd/resolved.conf.d"
	printf '[Resolve]\nDNS=127.0.0.2\n' >"$up/etc/systemd/resolved.conf.d/lab-upstream.conf"
	cat >"$up/srv/lab/upstream.py" <<'EOF'
# The default-upstream stand-in on 127.0.0.2:53 (UDP and TCP): records every question it gets
# ("CLOCK_MONOTONIC proto name qtype") in /run/lab-upstream.log and answers NXDOMAIN (no SOA: nothing
# cached), so a leaked zone name shows in this log and as NXDOMAIN at the client. READY=1 once bound.
import os, socket, struct, threading, time

LOG, ADDR, LIFE = "/run/lab-upstream.log", ("127.0.0.2", 53), 1800


def record(proto, q):
    i, labels = 12, []
    while i < len(q) and q[i] and len(labels) < 128:
        labels.append(q[i + 1:i + 1 + q[i]].decode("ascii", "replace"))
        i += 1 + q[i]
    qtype = struct.unpack("!H", q[i + 1:i + 3])[0] if i + 3 <= len(q) else 0
    with open(LOG, "a") as f:
        f.write("%.6f %s %s. %d\n" % (time.clock_gettime(time.CLOCK_MONOTONIC), proto, ".".join(labels), qtype))
    end = min(i + 5, len(q))
    rd = struct.unpack("!H", q[2:4])[0] & 0x0100 if len(q) >= 4 else 0
    # QR, RD copied, RA, NXDOMAIN; the question echoed, nothing else (the client's OPT dropped)
    return q[:2] + struct.pack("!HHHHH", 0x8000 | rd | 0x0080 | 3, 1, 0, 0, 0) + q[12:end]


def tcp(srv):
    while True:
        c, _ = srv.accept()
        c.settimeout(2)
        try:
            n = struct.unpack("!H", c.recv(2))[0]
            q = b""
            while len(q) < n:
                b = c.recv(n - len(q))
                if not b:
                    break
                q += b
            a = record("tcp", q)
            c.sendall(struct.pack("!H", len(a)) + a)
        except Exception:
            pass
        c.close()


u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(ADDR)
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(ADDR)
t.listen(16)
threading.Thread(target=tcp, args=(t,), daemon=True).start()
ns = os.environ.get("NOTIFY_SOCKET")
if ns:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.sendto(b"READY=1", "\0" + ns[1:] if ns.startswith("@") else ns)
end = time.monotonic() + LIFE   # bounded: every server a test starts stops by itself
while time.monotonic() < end:
    u.settimeout(max(0.1, end - time.monotonic()))
    try:
        q, peer = u.recvfrom(4096)
    except socket.timeout:
        continue
    if len(q) >= 12:
        u.sendto(record("udp", q), peer)
EOF
	cat >"$up/srv/lab/boot-probe.py" <<'EOF'
# The boot probe: from early in boot, asks resolved's stub for meta.pigsty.test A with dig every
# ~50 ms (one try, 1 s timeout) and writes "SENT DONE OUTCOME [A]" per question to
# /run/lab-boot-probe.log (CLOCK_MONOTONIC seconds; OUTCOME: an rcode, refused = nothing listens on
# the stub yet, timeout). Bounded: 60 s, or the first NOERROR and 3 more.
import re, subprocess, time

LOG, NAME = "/run/lab-boot-probe.log", "meta.pigsty.test"
mono = lambda: time.clock_gettime(time.CLOCK_MONOTONIC)
end, good = mono() + 60, 0
with open(LOG, "a") as f:
    while mono() < end and good < 4:
        t0 = mono()
        p = subprocess.run(["dig", "+tries=1", "+time=1", "+noall", "+comments", "+answer",
                            "@127.0.0.53", NAME, "A"], capture_output=True, text=True)
        t1 = mono()
        m = re.search(r"status: ([A-Z]+)", p.stdout)
        a = re.search(r"\sIN\s+A\s+(\S+)", p.stdout)
        if m:
            out = m.group(1)
        elif "refused" in p.stdout + p.stderr:
            out = "refused"
        elif "timed out" in p.stdout + p.stderr or "no servers" in p.stdout + p.stderr:
            out = "timeout"
        else:
            out = "error(rc=%d)" % p.returncode
        f.write("%.6f %.6f %s%s\n" % (t0, t1, out, " " + a.group(1) if a else ""))
        f.flush()
        good += out == "NOERROR"
        time.sleep(0.05)
EOF
	cat >"$up/etc/systemd/system/lab-upstream.service" <<'EOF'
[Unit]
Description=pid1-lab: the default-upstream stand-in on 127.0.0.2:53, recording every question
DefaultDependencies=no
Before=systemd-resolved.service shutdown.target
Conflicts=shutdown.target
[Service]
Type=notify
ExecStart=/usr/bin/python3 /srv/lab/upstream.py
[Install]
WantedBy=sysinit.target
EOF
	cat >"$up/etc/systemd/system/lab-boot-probe.service" <<'EOF'
[Unit]
Description=pid1-lab: the boot probe (meta.pigsty.test through resolved's stub from early boot)
DefaultDependencies=no
ConditionPathExists=/var/lib/lab-boot-probe.armed
Before=shutdown.target
Conflicts=shutdown.target
[Service]
ExecStart=/usr/bin/python3 /srv/lab/boot-probe.py
[Install]
WantedBy=sysinit.target
EOF
	local u
	for u in lab-upstream lab-boot-probe; do
		ln -sf "/etc/systemd/system/$u.service" "$up/etc/systemd/system/sysinit.target.wants/$u.service"
	done
}

boot_sane() {   # the lab's own machine must boot clean, or later checks mean little
	local i s
	for i in $(seq 50); do s=$(cx systemctl is-system-running 2>/dev/null); [ "$s" = running ] && break; sleep 0.2; done
	check "$1 boot: is-system-running, no failed units" "running " "$s $(cx systemctl --failed --no-legend --plain | awk '{ print $1 }' | paste -sd' ' -)"
	check "$1 boot: no ordering cycle" 0 "$(grep -c 'ordering cycle' "$LAB/nspawn.log")"
	cat "$LAB/nspawn.log" >>"$LAB/logs/nspawn-boots.log"; : >"$LAB/nspawn.log"
}

# 1. The system unit: install, READY=1, hardening in the running process, systemd-analyze security.
system_unit() {
	local out rc pid st base_filters base_bnd
	check "lab: the container's network namespace has only lo and the uplink stand-in" "lo: pu0:" \
		"$(cx ip -o link show | awk '{ print $2 }' | paste -sd' ' -)"
	check "systemd-resolved runs as a unit" "active" "$(wait_state systemd-resolved.service active 50)"
	[ "$SUITE" = bookworm ] && check "systemd-networkd runs as a unit" "active" "$(wait_state systemd-networkd.service active 50)"
	# as the README says: the account, then the install
	cx useradd --system --no-create-home pigsty-dns
	check "useradd --system --no-create-home pigsty-dns" 0 "$?"
	etc_fingerprint >"$LAB/etc-before"
	out=$(cx pigsty-dns service install --system --user pigsty-dns --program /usr/local/bin/pigsty-dns \
		--listen 127.0.0.1:$PORT 2>&1); rc=$?
	echo "$out" >"$LAB/logs/install-system.log"
	check "service install --system --user pigsty-dns --listen 127.0.0.1:$PORT" 0 "$rc"
	[ "$rc" = 0 ] || echo "$out" | tail -15
	ok "install waited for the zone SOA (its last step)" "$(grep -o '127.0.0.1:[0-9]* answers [^ ]* SOA (serial [0-9]*)' <<<"$out")" \
		grep -q "127.0.0.1:$PORT answers pigsty.test SOA" <<<"$out"
	st=$(show pigsty-dns.service Type,NotifyAccess,ActiveState,SubState,UnitFileState,User)
	check "unit: Type=notify, active (running), enabled, User=pigsty-dns" \
		"Type=notify;NotifyAccess=main;ActiveState=active;SubState=running;UnitFileState=enabled;User=pigsty-dns" "$st"
	st=$(prop pigsty-dns.service StatusText)
	# Type=notify counts as started only on READY=1; the daemon sends STATUS= in the same datagram
	check "StatusText is what the daemon sends with READY=1" "serving pigsty.test, pigsty serial 0 on [127.0.0.1:$PORT]" "$st"
	pid=$(prop pigsty-dns.service MainPID)
	ok "MainPID is the daemon" "$pid: $(cx cat /proc/"$pid"/cmdline 2>/dev/null | tr '\0' ' ' | cut -c1-60)" \
		grep -q "^/usr/local/bin/pigsty-dns serve --listen 127.0.0.1:$PORT --state-dir /var/lib/pigsty-dns" \
		<<<"$(cx cat /proc/"$pid"/cmdline | tr '\0' ' ')"
	# READY=1 only after the sockets are bound and the generation loaded: the daemon's "answering" log
	# line comes before systemd's "Started", and the job was not done at exec time.
	local j; j=$(cx journalctl --no-pager -q -o cat -b -u pigsty-dns.service | grep -n -E '"answering"|answering|Started ' | tail -2)
	ok "journal: the daemon logged \"answering\" before systemd logged \"Started\"" "$(cut -c1-40 <<<"$j" | paste -sd'|' -)" \
		awk -F: 'NR == 1 && /answering/ { a = 1 } NR == 2 && /Started/ && a { ok = 1 } END { exit !ok }' <<<"$j"
	local t_exec t_active
	t_exec=$(prop pigsty-dns.service ExecMainStartTimestampMonotonic)
	t_active=$(prop pigsty-dns.service ActiveEnterTimestampMonotonic)
	ok "active only after start-up (ActiveEnter - ExecMainStart > 0)" "$(( (t_active - t_exec) / 1000 )) ms" \
		test "$t_active" -gt "$t_exec"

	# the hardening, read from the running process, against a plain process of the same container
	base_filters=$(pstatus 1 Seccomp_filters)
	base_bnd=$(pstatus 1 CapBnd)
	check "process: uid/gid are pigsty-dns's" "$(cx id -u pigsty-dns) $(cx id -g pigsty-dns)" \
		"$(pstatus "$pid" Uid) $(pstatus "$pid" Gid)"
	check "process: NoNewPrivs" 1 "$(pstatus "$pid" NoNewPrivs)"
	check "process: Seccomp (filter mode)" 2 "$(pstatus "$pid" Seccomp)"
	local f; f=$(pstatus "$pid" Seccomp_filters)
	ok "process: more seccomp filters than the container's own (SystemCallFilter, RestrictAddressFamilies)" \
		"$f > $base_filters" test "${f:-0}" -gt "${base_filters:-0}"
	check "process: CapEff/CapPrm/CapBnd all empty (container's own CapBnd: $base_bnd)" \
		"0000000000000000 0000000000000000 0000000000000000" \
		"$(pstatus "$pid" CapEff) $(pstatus "$pid" CapPrm) $(pstatus "$pid" CapBnd)"
	# in the process's mount namespace (as root, so only the mount flags can refuse)
	out=$(cx nsenter -t "$pid" -m sh -c 'touch /usr/.lab-probe 2>&1; touch /etc/.lab-probe 2>&1' | sed 's/.*: //' | paste -sd'|' -)
	check "ProtectSystem=strict: /usr and /etc read-only in the process's namespace" \
		"Read-only file system|Read-only file system" "$out"
	check "ProtectHome=yes: /home, /root and /run/user empty in the process's namespace" "0 0 0" \
		"$(cx nsenter -t "$pid" -m sh -c 'for d in /home /root /run/user; do ls -A $d 2>/dev/null | wc -l; done' | paste -sd' ' -)"
	ok "lab: /home is not empty outside (tester's home)" "$(cx ls -A /home | paste -sd' ' -)" test -n "$(cx ls -A /home)"
	cx touch /tmp/lab-outside-marker
	check "PrivateTmp=yes: the process's /tmp is its own" "no" \
		"$(cx nsenter -t "$pid" -m sh -c 'test -e /tmp/lab-outside-marker && echo yes || echo no')"
	cx rm -f /tmp/lab-outside-marker
	check "StateDirectory=pigsty-dns: /var/lib/pigsty-dns owned by the service user, mode 0700" \
		"pigsty-dns:pigsty-dns 700" "$(cx stat -c '%U:%G %a' /var/lib/pigsty-dns)"
	check "StateDirectory: writable in the process's namespace (status.json is the daemon's)" "pigsty-dns" \
		"$(cx stat -c '%U' /var/lib/pigsty-dns/status.json 2>&1)"
	local mem; mem=$(prop pigsty-dns.service MemoryCurrent)
	if [[ "$mem" =~ ^[0-9]+$ ]]; then   # a memory controller reaches the container: the limit must be on the cgroup
		check "MemoryMax=256M on the unit's cgroup" 268435456 \
			"$(cx cat "/sys/fs/cgroup$(prop pigsty-dns.service ControlGroup)/memory.max" 2>/dev/null)"
	else
		echo "# MemoryMax=$(prop pigsty-dns.service MemoryMax) is set, but MemoryCurrent=$mem: no memory controller reaches the container on this host's cgroup layout, so the limit is not enforced here (not checked)"
	fi

	out=$(cx systemd-analyze security --no-pager pigsty-dns.service 2>&1)
	echo "$out" >"$LAB/logs/security.log"
	SCORE=$(exposure <<<"$out")
	echo "# systemd-analyze security pigsty-dns.service (systemd $(root_version)): $(grep 'Overall exposure' <<<"$out" | sed 's/^[^O]*//')"
	ok "systemd-analyze security: exposure $SCORE <= recorded $MAX_SCORE" "$SCORE" \
		awk -v s="${SCORE:-99}" -v m="$MAX_SCORE" 'BEGIN { exit !(s + 0 <= m + 0) }'
}

# 2. load -> live; service status shows the unit and the daemon.
load_and_status() {
	local out rc note w words=()
	# Every way to load that install printed must reach the service: as its user, into its state dir.
	note=$(grep ' load FILE' "$LAB/logs/install-system.log")
	check "install's load instructions all name the service user and state dir" \
		"note: load records as that user: sudo -u pigsty-dns /usr/local/bin/pigsty-dns load FILE --state-dir /var/lib/pigsty-dns" "$note"
	# Debian sid's sudo has secure_path without /usr/local/bin: the bare name is not found there.
	echo "# sudo -u pigsty-dns pigsty-dns (bare name, secure_path $(cx sh -c "grep -h '^Defaults.*secure_path' /etc/sudoers | cut -d= -f2-")): $(cx sudo -u pigsty-dns pigsty-dns --version 2>&1 | head -1)"
	for w in ${note#note: load records as that user: }; do
		[ "$w" = FILE ] && w=/srv/lab/pigsty.test.yml; words+=("$w")
	done
	out=$(cx "${words[@]}" 2>&1); rc=$?
	echo "$out" >"$LAB/logs/load.log"
	SERIAL=$(grep -o 'live (serial [0-9]*)' <<<"$out" | grep -o '[0-9]*' | head -1)
	ok "the printed command, sudo -u pigsty-dns /usr/local/bin/pigsty-dns load FILE --state-dir /var/lib/pigsty-dns -> live (serial N)" \
		"rc $rc, serial ${SERIAL:-none}" test "$rc" = 0 -a -n "$SERIAL"
	check "the daemon answers the generation: meta.pigsty.test" "NOERROR 10.10.10.10" "$(dq $PORT meta.pigsty.test)"
	check "the daemon's SOA serial is the loaded one" "NOERROR $SERIAL" "$(dq $PORT pigsty.test SOA)"
	out=$(cx pigsty-dns service status --system 2>&1); rc=$?
	echo "$out" >"$LAB/logs/status-system.log"
	check "service status --system: exit 0" 0 "$rc"
	ok "service status: the unit line (active, running, enabled)" "$(head -1 <<<"$out" | cut -c1-90)" \
		grep -q '^unit pigsty-dns.service (system): loaded, active (running), pid [0-9]*, restarts 0, enabled' <<<"$out"
	ok "service status: the daemon's own status (serial $SERIAL)" "$(grep -m1 -i serial <<<"$out" | cut -c1-80)" \
		grep -q "$SERIAL" <<<"$(sed 1,2d <<<"$out")"
}

# 3. kill -9 -> restarted, same generation; a taken port -> exit 6, no spinning.
restarts() {
	local pid pid2 n0 n1 st i out cur
	pid=$(prop pigsty-dns.service MainPID); n0=$(prop pigsty-dns.service NRestarts)
	cx kill -9 "$pid"
	pid2=$pid
	for i in $(seq 100); do
		pid2=$(prop pigsty-dns.service MainPID)
		[ "$pid2" != 0 ] && [ "$pid2" != "$pid" ] && [ "$(prop pigsty-dns.service ActiveState)" = active ] && break
		sleep 0.1
	done
	ok "kill -9 of the main PID -> systemd restarted it (new MainPID, active)" "$pid -> $pid2" \
		test "$pid2" != "$pid" -a "$pid2" != 0 -a "$(prop pigsty-dns.service ActiveState)" = active
	n1=$(prop pigsty-dns.service NRestarts)
	check "NRestarts counts the restart" "$((n0 + 1))" "$n1"
	check "after the restart: the same generation is served (SOA serial)" "NOERROR $SERIAL" "$(dq $PORT pigsty.test SOA)"
	check "after the restart: StatusText" "serving pigsty.test, pigsty serial $SERIAL on [127.0.0.1:$PORT]" "$(prop pigsty-dns.service StatusText)"

	# the port taken by another process while the unit is down
	cx systemctl stop pigsty-dns.service
	cx systemctl reset-failed pigsty-dns.service   # a fresh start-limit window: the count below is exact
	cx systemd-run -q --unit=lab-port-taker -p Type=simple python3 /srv/lab/take-port.py $PORT
	for i in $(seq 50); do cx ss -lun | grep -q " 127.0.0.1:$PORT " && break; sleep 0.1; done
	ok "lab: another process holds 127.0.0.1:$PORT (UDP)" "$(cx ss -lunp | grep -c ":$PORT ") socket(s)" cx sh -c "ss -lun | grep -q ' 127.0.0.1:$PORT '"
	cur=$(jcursor)
	local t0=$SECONDS seen=
	# --no-block: whether the start job waits through the auto-restarts differs between versions
	cx systemctl start --no-block pigsty-dns.service
	for i in $(seq 100); do [ "$(prop pigsty-dns.service ExecMainStatus)" = 6 ] && break; sleep 0.1; done
	check "the daemon exited with the documented exit 6 (port in use)" "6 exit-code" \
		"$(prop pigsty-dns.service ExecMainStatus) $(prop pigsty-dns.service Result)"
	local why; why=$(jsince "$cur" -u pigsty-dns.service -o cat | grep -i -m1 'in use')
	ok "the daemon said why (journal)" "$(cut -c1-110 <<<"$why")" test -n "$why"
	if [ "$(root_version)" -ge 254 ]; then
		# RestartSteps back-off: wait for 4 starts (3 delays), then stop it
		for i in $(seq 300); do
			seen+=" $(prop pigsty-dns.service ActiveState)"
			[ "$(jsince "$cur" -u pigsty-dns.service | grep -c 'status=6/')" -ge 4 ] && break; sleep 0.1
		done
		cx systemctl stop pigsty-dns.service
	else
		# fixed RestartSec, then the start limit (StartLimitBurst=10 in StartLimitIntervalSec=120)
		local a
		for i in $(seq 300); do
			a=$(prop pigsty-dns.service ActiveState); seen+=" $a"
			[ "$a" = failed ] && break; sleep 0.1
		done
		# 252 keeps Result=exit-code when the limit stops an automatic restart; the journal says why
		check "252: after the burst the unit gave up (failed, 'Start request repeated too quickly')" "failed 1" \
			"$(prop pigsty-dns.service ActiveState) $(jsince "$cur" -u pigsty-dns.service | grep -c 'Start request repeated too quickly')"
	fi
	local took=$((SECONDS - t0))
	check "while the port was taken the unit was never active (no READY=1)" "" "$(tr ' ' '\n' <<<"$seen" | grep -x active | head -1)"
	jsince "$cur" -u pigsty-dns.service >"$LAB/logs/port-taken.journal"
	local starts; starts=$(grep 'Main process exited, code=exited, status=6/' "$LAB/logs/port-taken.journal" | mono | paste -sd' ' -)
	local delays; delays=$(awk '{ for (i = 2; i <= NF; i++) printf "%s%.1f", (i > 2 ? " " : ""), $i - $(i - 1); print "" }' <<<"$starts")
	echo "# port taken: $(wc -w <<<"$starts") starts in $took s; delays between starts (s): $delays"
	local nstarts; nstarts=$(wc -w <<<"$starts")
	ok "no spinning: every delay between starts >= RestartSec (2 s)" "$delays" \
		awk -v d="$delays" 'BEGIN { n = split(d, a, " "); if (n < 2) exit 1; for (i = 1; i <= n; i++) if (a[i] < 1.9) exit 1 }'
	if [ "$(root_version)" -ge 254 ]; then
		ok ">= 254: the delays grow (RestartSteps back-off)" "$delays" \
			awk -v d="$delays" 'BEGIN { n = split(d, a, " "); if (n < 3) exit 1; for (i = 2; i <= n; i++) if (a[i] < a[i - 1] * 1.25) exit 1 }'
	else
		# (the lab polls systemd while it restarts, on 2 busy cores: a delay may run a little long)
		ok "252: fixed interval (every delay under 3.5 s, no growth)" "$delays" \
			awk -v d="$delays" 'BEGIN { n = split(d, a, " "); if (n < 5) exit 1; for (i = 1; i <= n; i++) if (a[i] > 3.5) exit 1 }'
		check "252: the start limit allowed 10 starts (StartLimitBurst=10)" 10 "$nstarts"
	fi
	# free the port; the unit comes back with the same generation
	cx systemctl stop lab-port-taker.service
	cx systemctl reset-failed pigsty-dns.service
	cx systemctl start pigsty-dns.service
	check "port free again: systemctl start -> active" active "$(wait_state pigsty-dns.service active 50)"
	check "and serves the same generation" "NOERROR $SERIAL" "$(dq $PORT pigsty.test SOA)"
}

# 4. The user unit through systemctl --user, with lingering.
user_unit() {
	local out rc st pid base_filters f
	out=$(ux pigsty-dns service install --listen 127.0.0.1:$UPORT --program /usr/local/bin/pigsty-dns 2>&1); rc=$?
	echo "$out" >"$LAB/logs/install-user.log"
	check "user unit: service install (as $TUSER, lingering on)" 0 "$rc"
	[ "$rc" = 0 ] || echo "$out" | tail -15
	ok "user unit: no 'runs only while you are logged in' note (lingering)" "" \
		sh -c "! grep -q 'enable-linger' '$LAB/logs/install-user.log'"
	st=$(show pigsty-dns.service Type,ActiveState,SubState,UnitFileState --user)
	check "user unit: Type=notify, active (running), enabled (systemctl --user)" \
		"Type=notify;ActiveState=active;SubState=running;UnitFileState=enabled" "$st"
	check "user unit: StatusText from READY=1 (the notify socket under /run/user reached)" \
		"serving pigsty.test, pigsty serial 0 on [127.0.0.1:$UPORT]" "$(prop pigsty-dns.service StatusText --user)"
	check "user unit: NOTIFY_SOCKET is the user manager's, under /run/user" "/run/user/$TUID/systemd/notify" \
		"$(cx cat /proc/"$(prop pigsty-dns.service MainPID --user)"/environ | tr '\0' '\n' | sed -n 's/^NOTIFY_SOCKET=//p')"
	check "user unit: ProtectHome is not set (ProtectHome=yes would hide that socket)" "no" \
		"$(prop pigsty-dns.service ProtectHome --user)"
	pid=$(prop pigsty-dns.service MainPID --user)
	base_filters=$(pstatus "$(prop user@$TUID.service MainPID)" Seccomp_filters)
	check "user unit process: runs as $TUSER" "$TUID" "$(pstatus "$pid" Uid)"
	check "user unit process: NoNewPrivs (NoNewPrivileges=yes)" 1 "$(pstatus "$pid" NoNewPrivs)"
	f=$(pstatus "$pid" Seccomp_filters)
	ok "user unit process: more seccomp filters than its user manager (SystemCallFilter, RestrictAddressFamilies)" \
		"$f > $base_filters" test "${f:-0}" -gt "${base_filters:-0}"
	check "user unit process: no capabilities" "0000000000000000" "$(pstatus "$pid" CapEff)"
	check "user unit: MemoryMax set" 268435456 "$(prop pigsty-dns.service MemoryMax --user)"
	check "user unit: answers on its own port" "NOERROR" "$(dq $UPORT pigsty.test SOA | cut -d' ' -f1)"
	out=$(ux pigsty-dns service status 2>&1); rc=$?
	echo "$out" >"$LAB/logs/status-user.log"
	ok "user unit: service status" "$(head -1 <<<"$out" | cut -c1-90)" \
		grep -q '^unit pigsty-dns.service (user): loaded, active (running)' <<<"$out"
	# The control: the same unit with ProtectHome=yes (PrivateUsers=yes: 252 ignores ProtectHome= in a
	# user unit without it) and its state dir moved out of $HOME, so only the notify socket is hidden.
	local d=/home/$TUSER/.config/systemd/user/pigsty-dns.service.d
	ux sh -c "mkdir -p $d && cat >$d/lab-control.conf" <<EOF
[Service]
ProtectHome=yes
PrivateUsers=yes
TimeoutStartSec=5s
Restart=no
ExecStart=
ExecStart=/usr/local/bin/pigsty-dns serve --listen 127.0.0.1:$UPORT --state-dir /var/tmp/lab-control --zone pigsty.test --log-format json
EOF
	local cur; cur=$(jcursor)
	ux systemctl --user daemon-reload; ux systemctl --user restart pigsty-dns.service 2>/dev/null
	check "control: the user unit with ProtectHome=yes never becomes active (start times out)" "failed timeout" \
		"$(prop pigsty-dns.service ActiveState --user) $(prop pigsty-dns.service Result --user)"
	out=$(jsince "$cur" -o cat | grep -m1 'cannot notify')
	ok "control: the daemon could not reach the notify socket" "$(sed 's/.*"message":"\([^"]*\)".*/\1/' <<<"$out")" test -n "$out"
	ux rm -rf "$d" /var/tmp/lab-control; ux systemctl --user daemon-reload
	ux systemctl --user restart pigsty-dns.service
	check "control removed: our user unit is active again" active "$(prop pigsty-dns.service ActiveState --user)"

	out=$(ux pigsty-dns service uninstall 2>&1); rc=$?
	echo "$out" >"$LAB/logs/uninstall-user.log"
	check "user unit: service uninstall" 0 "$rc"
	check "user unit: gone (file and unit)" "no inactive" \
		"$(cx test -e /home/$TUSER/.config/systemd/user/pigsty-dns.service && echo yes || echo no) $(prop pigsty-dns.service ActiveState --user)"
	check "the system unit was not touched by the user unit's install/uninstall" active "$(prop pigsty-dns.service ActiveState)"
}

route_state() {   # resolved's own view of the route: "link" / "delegate" / "none"
	local s; s=$(cx resolvectl --no-pager status 2>/dev/null)
	if grep -q '^Delegate pigsty-dns' <<<"$s"; then echo delegate
	elif grep -q 'pigsty-dns0' <<<"$s"; then echo link
	else echo none; fi
}

# 5a. The route with the real resolved of this suite.
route_install() {
	local out rc
	out=$(cx pigsty-dns route install --server 127.0.0.1:$PORT --yes --check-name meta.pigsty.test \
		--state-dir /var/lib/pigsty-dns 2>&1); rc=$?
	echo "$out" >"$LAB/logs/route-install.log"
	check "route install --server 127.0.0.1:$PORT (verified by the route itself)" 0 "$rc"
	[ "$rc" = 0 ] || echo "$out" | tail -15
	out=$(cx pigsty-dns route status --json 2>&1)
	echo "$out" >"$LAB/logs/route-status.json"
	check "route status: the adapter for systemd $(root_version)" "$ADAPTER" \
		"$(sed -n 's/^ *"adapter": *"\([^"]*\)".*/\1/p' <<<"$out" | head -1)"
	check "resolved's state: the route is there" "$ROUTE_KIND" "$(route_state)"
	check "getent ahostsv4 meta.pigsty.test (nss -> resolved stub -> route -> daemon)" 10.10.10.10 "$(ge meta.pigsty.test)"
}

# 6. Stop and start the container: unit and route come back by themselves.
container_restart() {
	local t0=$SECONDS t1
	before_reboot "$VARIANT"
	stop; start >/dev/null || return 1
	echo "# container stopped and started again in $((SECONDS - t0)) s"
	boot_sane second
	t1=$SECONDS
	RB=reboot; RBTAG=reboot
	boot_probe_report
	check "after the restart: the system unit is active by itself" active "$(wait_state pigsty-dns.service active 100)"
	check "after the restart: NRestarts 0 (a fresh boot, not a crash loop)" 0 "$(prop pigsty-dns.service NRestarts)"
	check "after the restart: the newest good generation is served" "NOERROR $SERIAL" "$(dq $PORT pigsty.test SOA)"
	check "after the restart: StatusText" "serving pigsty.test, pigsty serial $SERIAL on [127.0.0.1:$PORT]" "$(prop pigsty-dns.service StatusText)"
	local i s=none
	for i in $(seq 50); do s=$(route_state); [ "$s" = "$ROUTE_KIND" ] && break; sleep 0.2; done
	check "after the restart: the route is back in resolved" "$ROUTE_KIND" "$s"
	check "after the restart: getent ahostsv4 meta.pigsty.test" 10.10.10.10 "$(ge meta.pigsty.test)"
	local out rc; out=$(cx pigsty-dns route status 2>&1); rc=$?
	echo "$out" >"$LAB/logs/route-status-after-reboot.log"
	check "after the restart: route status all ok" "0 0" "$rc $(grep -c '^FAIL' <<<"$out")"
	user_after_reboot
	leak_check
	echo "# reboot checks (boot probe, user unit, leak check) took $((SECONDS - t1)) s, the restart itself $((t1 - t0)) s"
}

# ---------------------------------------------------------------- the reboot (issue 26, row 1)
usec() { prop "$1" "$2"; }   # a unit's *TimestampMonotonic: CLOCK_MONOTONIC in µs
# (mawk's printf %d stops at 2^31: µs of CLOCK_MONOTONIC pass that after 36 min of uptime, so %.0f)
ms() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || a == 0 || b == 0) print "?"; else printf "%.0f", (b - a) / 1000 }'; }
# PID 1's own start: in a container there is no kernel timestamp; systemd's userspace timestamp is
# PID 1's exec (CLOCK_MONOTONIC), the only "boot" the container has.
boot_usec() { cx systemctl show -p UserspaceTimestampMonotonic --value; }
route_journal() { cx cat /var/lib/pigsty-dns-route/journal.json 2>/dev/null; }
route_variant() { route_journal | sed -n 's/^ *"variant": *"\([^"]*\)".*/\1/p' | head -1; }

RB=reboot; RBTAG=reboot   # the check's label and log names of this reboot
KNOWN_LEAK=   # set for the runtime variant's reboot: its boot window leaks (see runtime_reboot)
# A leak check: a check, or for a known leak a "# KNOWN" line with the same evidence (not counted).
leak_verdict() {
	if [ -z "$KNOWN_LEAK" ]; then check "$@"; return; fi
	if [ "$2" = "$3" ]; then echo "# KNOWN ($KNOWN_LEAK), not seen this time: $1 [$3]"
	else echo "# KNOWN ($KNOWN_LEAK), seen: $1 [expected '$2', got '$3']"; fi
}

# bookworm: the runtime variant too (ip + resolvectl at install, its boot unit after resolved) across a
# reboot of its own; then back to the default variant (networkd) for the restart and the teardown.
reroute() {   # route uninstall, then route install --link-variant VARIANT
	local out rc
	out=$(cx pigsty-dns route uninstall --yes 2>&1); rc=$?
	echo "$out" >"$LAB/logs/route-uninstall-to-$1.log"
	out=$(cx pigsty-dns route install --server 127.0.0.1:$PORT --yes --check-name meta.pigsty.test \
		--state-dir /var/lib/pigsty-dns --link-variant "$1" 2>&1); rc=$((rc + $?))
	echo "$out" >"$LAB/logs/route-install-$1.log"
	check "route uninstall, route install --link-variant $1" "0 link $1" "$rc $(route_state) $(route_variant)"
	[ "$rc" = 0 ] || echo "$out" | tail -15
}
runtime_reboot() {
	local t0=$SECONDS out rc i s=none
	reroute runtime
	cx touch /var/lib/lab-boot-probe.armed
	stop; start >/dev/null || return 1
	boot_sane runtime-variant
	RB="reboot (runtime variant)"; RBTAG=reboot-runtime
	# Its unit runs after resolved (resolvectl needs it): until it has run, resolved has no scope for
	# the zone and sends it to the global servers. The probe starts in sysinit, before nss-lookup.target,
	# so it sees that window: measured, reported as KNOWN, not counted (issue 26).
	KNOWN_LEAK="runtime variant: resolved answers before the route's boot unit has run"
	boot_probe_report
	# ... but nss-lookup.target, which boot-time programs that look names up order after, waits for it.
	local troute tnss
	troute=$(usec pigsty-dns-route.service ActiveEnterTimestampMonotonic); tnss=$(usec nss-lookup.target ActiveEnterTimestampMonotonic)
	check "$RB: nss-lookup.target reached only after the route's boot unit was active" yes \
		"$( [ "${troute:-0}" -gt 0 ] && [ "${tnss:-0}" -ge "$troute" ] && echo yes || echo "no: route unit ${troute:-?}, nss-lookup.target ${tnss:-?}")"
	echo "# $RB: nss-lookup.target reached $(ms "$troute" "$tnss") ms after the route's boot unit was active"
	check "$RB: the system unit is active by itself" active "$(wait_state pigsty-dns.service active 100)"
	for i in $(seq 50); do s=$(route_state); [ "$s" = link ] && break; sleep 0.2; done
	check "$RB: the route is back (its boot unit ran)" "link active" "$s $(prop pigsty-dns-route.service ActiveState)"
	check "$RB: getent ahostsv4 meta.pigsty.test" 10.10.10.10 "$(ge meta.pigsty.test)"
	out=$(cx pigsty-dns route status 2>&1); rc=$?
	echo "$out" >"$LAB/logs/route-status-after-reboot-runtime.log"
	check "$RB: route status all ok" "0 0" "$rc $(grep -c '^FAIL' <<<"$out")"
	leak_check
	KNOWN_LEAK=
	reroute networkd
	echo "# the runtime variant's reboot (reinstall, restart, checks, back to networkd) took $((SECONDS - t0)) s"
}

# Before the poweroff: the user unit again, kept this time; the boot probe armed for the next boot.
before_reboot() {
	local out rc
	out=$(ux pigsty-dns service install --listen 127.0.0.1:$UPORT --program /usr/local/bin/pigsty-dns 2>&1); rc=$?
	echo "$out" >"$LAB/logs/install-user-kept.log"
	check "before the restart: the user unit installed again and kept (lingering)" "0 active" \
		"$rc $(prop pigsty-dns.service ActiveState --user)"
	cx touch /var/lib/lab-boot-probe.armed
	check "before the restart: the route ($ADAPTER${1:+, variant $1})" "$ROUTE_KIND${1:+ $1}" "$(route_state)${1:+ $(route_variant)}"
}

# The probe's lines "SENT DONE OUTCOME [A]" (s) -> "first-good-done(µs) before-counts bad-before bad-all"
probe_summary() {
	awk '{ good = ($3 == "NOERROR" && $4 == "10.10.10.10") }
		!first && good { first = $2 }
		!first && !good { n[$3]++; if ($3 != "refused" && $3 != "timeout" && $3 != "SERVFAIL") bb++ }
		!good && ($3 == "NXDOMAIN" || $3 == "NOERROR") { ba++ }
		END { c = ""; for (k in n) c = c (c ? "," : "") k ":" n[k]
			printf "%.0f %s %d %d\n", first * 1e6, (c ? c : "none"), bb, ba }' "$1"
}

# After the boot: from PID 1's start to the first good answer through the stub, and what came before.
boot_probe_report() {
	local i s t0 tres tready troute first before bb ba sent1
	for i in $(seq 350); do   # the probe is bounded at 60 s (+ one dig)
		s=$(prop lab-boot-probe.service ActiveState); [ "$s" = active ] || [ "$s" = activating ] || break; sleep 0.2
	done
	cx rm -f /var/lib/lab-boot-probe.armed
	cx cat /run/lab-boot-probe.log >"$LAB/logs/boot-probe-$RBTAG.log" 2>/dev/null
	check "$RB: the boot probe ran and ended by itself" "inactive 0" "$s $(prop lab-boot-probe.service ExecMainStatus)"
	# (boot_sane greps the console for cycles; the journal has what PID 1 logged after journald started)
	check "$RB: no ordering cycle in this boot's journal" 0 "$(cx journalctl -b -q -o cat | grep -ci 'ordering cycle')"
	t0=$(boot_usec); tres=$(usec systemd-resolved.service ActiveEnterTimestampMonotonic)
	tready=$(usec pigsty-dns.service ActiveEnterTimestampMonotonic)
	case "$ROUTE_KIND/$(route_variant)" in
	link/runtime) troute=$(usec pigsty-dns-route.service ActiveEnterTimestampMonotonic) ;;
	link/networkd) troute=$(cx journalctl -b -q -o short-monotonic -u systemd-networkd.service |
		grep -m1 -E 'pigsty-dns0: (Configured|Gained carrier|Link UP)' | mono | awk '{ printf "%.0f", $1 * 1e6 }') ;;
	*) troute=$tres ;;   # delegate: resolved reads its delegate files as it starts
	esac
	read -r first before bb ba <<<"$(probe_summary "$LAB/logs/boot-probe-$RBTAG.log")"
	sent1=$(awk 'NR == 1 { printf "%.0f", $1 * 1e6 }' "$LAB/logs/boot-probe-$RBTAG.log")
	echo "# $RB ($SUITE, systemd $(root_version), $ADAPTER$(route_variant | sed "s/^./ &/")): from PID 1's start: probe's first question $(ms "$t0" "$sent1") ms, resolved active $(ms "$t0" "$tres") ms, route up $(ms "$t0" "$troute") ms, pigsty-dns READY $(ms "$t0" "$tready") ms, first good answer $(ms "$t0" "$first") ms; READY -> first good answer $(ms "$tready" "$first") ms; before it: $before ($(wc -l <"$LAB/logs/boot-probe-$RBTAG.log") questions in all)"
	ok "$RB: the probe asked before pigsty-dns was READY (it saw the window)" "$(ms "$t0" "$sent1") ms < $(ms "$t0" "$tready") ms" \
		test "${sent1:-0}" -gt 0 -a "${sent1:-0}" -lt "${tready:-0}"
	ok "$RB: a good answer through resolved's stub (NOERROR 10.10.10.10)" "$(ms "$t0" "$first") ms after PID 1" test "${first:-0}" -gt 0
	leak_verdict "$RB: before the first good answer only refused, timeout or SERVFAIL ($before)" 0 "$bb"
	leak_verdict "$RB: the probe never got NXDOMAIN or another answer (a leak or a negative cache)" 0 "$ba"
}

# After the boot: the user manager and its unit came back by lingering alone; then uninstalled.
user_after_reboot() {
	local i s out rc
	check "after the restart: user@$TUID.service runs by itself (lingering)" active "$(wait_state "user@$TUID.service" active 100)"
	for i in $(seq 100); do
		s=$(uxq systemctl --user show pigsty-dns.service -p ActiveState --value 2>/dev/null); [ "$s" = active ] && break; sleep 0.2
	done
	# (>= 256 lists the user manager's own session, class "manager": not a login)
	check "after the restart: the user unit is active by itself (no login: linger)" "active " \
		"$s $(cx loginctl list-sessions --no-legend 2>/dev/null | awk -v u="$TUSER" '$3 == u && !/ manager(-early)? /')"
	echo "# user unit READY $(ms "$(boot_usec)" "$(uxq systemctl --user show pigsty-dns.service -p ActiveEnterTimestampMonotonic --value)") ms after PID 1's start"
	check "after the restart: the user unit answers on its own port" NOERROR "$(dq $UPORT pigsty.test SOA | cut -d' ' -f1)"
	# The system unit's route (to 127.0.0.1:$PORT) is none of the user unit's: its uninstall leaves it.
	out=$(ux pigsty-dns service uninstall --dry-run 2>&1); rc=$?
	echo "$out" >"$LAB/logs/uninstall-user-dry-run-after-reboot.log"
	check "after the restart: user unit: service uninstall --dry-run leaves the system unit's route alone" "0 1" \
		"$rc $(grep -c "goes to 127.0.0.1:$PORT, not to this unit: left in place" <<<"$out")"
}
user_unit_last() {   # after the teardown (no route any more): the user unit that came back by itself
	local out rc
	out=$(ux pigsty-dns service uninstall 2>&1); rc=$?
	echo "$out" >"$LAB/logs/uninstall-user-after-reboot.log"
	check "after the restart: user unit: service uninstall (once the route is gone)" "0 no inactive" \
		"$rc $(cx test -e /home/$TUSER/.config/systemd/user/pigsty-dns.service && echo yes || echo no) $(prop pigsty-dns.service ActiveState --user)"
}

# After the boot and every check above: the upstream stand-in, up before resolved, never saw the zone.
leak_check() {
	local rev ctl=lab-control-$RANDOM.example.org i leaks tup tupl tres
	rev=$(route_journal | grep -o '[0-9.]*in-addr\.arpa' | head -1)
	tup=$(usec lab-upstream.service ActiveEnterTimestampMonotonic); tupl=$(usec lab-uplink.service ActiveEnterTimestampMonotonic)
	tres=$(usec systemd-resolved.service ExecMainStartTimestampMonotonic)
	# ordered Before=systemd-resolved.service: guaranteed "not later", in systemd's microseconds
	ok "$RB: the upstream stand-in and the uplink were up before resolved started" "$tup, $tupl <= $tres" \
		test "${tup:-0}" -gt 0 -a "${tup:-0}" -le "${tres:-0}" -a "${tupl:-0}" -gt 0 -a "${tupl:-0}" -le "${tres:-0}"
	# the reverse zone through the stub too (whatever the daemon answers, it must not go upstream)
	echo "# dig -x 10.10.10.10 through the stub: $(cx dig +tries=1 +time=2 @127.0.0.53 -x 10.10.10.10 | grep -o 'status: [A-Z]*')"
	cx dig +tries=1 +time=2 @127.0.0.53 "$ctl" A >/dev/null
	for i in $(seq 20); do cx grep -q " $ctl\. " /run/lab-upstream.log && break; sleep 0.1; done
	cx cat /run/lab-upstream.log >"$LAB/logs/upstream-$RBTAG.log"
	leaks=$(grep -iE " ([^ ]*\.)?(pigsty\.test|${rev//./\\.})\. " "$LAB/logs/upstream-$RBTAG.log" | head -3 | paste -sd'|' -)
	[ -n "$rev" ] || leaks="no reverse zone in the route journal"
	leak_verdict "$RB: the upstream stand-in saw no question for pigsty.test or ${rev:-the reverse zone} during or after the boot" "" "$leaks"
	ok "$RB: ... and it saw the control name (so the leak check can fail)" \
		"$ctl; $(wc -l <"$LAB/logs/upstream-$RBTAG.log") questions logged" grep -q " $ctl\. " "$LAB/logs/upstream-$RBTAG.log"
}

# 5b. The ordered teardown: route first (from the journal and resolved's state), then the unit.
teardown() {
	local out rc cur
	# A sampler of resolved's state and the unit's, every 50 ms while uninstall runs (bounded: 30 s).
	cx systemd-run -q --unit=lab-sampler /bin/sh /srv/lab/sampler.sh
	sleep 0.5
	cur=$(jcursor)
	out=$(cx pigsty-dns service uninstall --system --with-route 2>&1); rc=$?
	echo "$out" >"$LAB/logs/uninstall-system.log"
	sleep 0.5; cx systemctl stop lab-sampler.service 2>/dev/null
	cx cat /run/lab-sampler.log >"$LAB/logs/sampler.log" 2>/dev/null
	check "service uninstall --system --with-route" 0 "$rc"
	[ "$rc" = 0 ] || echo "$out" | tail -15
	ok "uninstall's own steps: route uninstall, route checked gone, then disable --now" \
		"$(grep -n -E 'route uninstall|route status|disable --now' <<<"$out" | cut -c1-50 | paste -sd'|' -)" \
		awk '/route uninstall/ && !r { r = NR } /disable --now/ && !d { d = NR } END { exit !(r && d && r < d) }' <<<"$out"
	# the sampler: the route vanished while the unit was still active; never a route to a stopped unit
	local samples; samples=$(awk '{ print $2 "/" $3 }' "$LAB/logs/sampler.log" | uniq | paste -sd' ' -)
	check "resolved's state over time (sampled every 50 ms): route gone before the unit stopped" \
		"route/active none/active" "$(awk '{ print $2 "/" $3 }' "$LAB/logs/sampler.log" | uniq | head -2 | paste -sd' ' -)"
	ok "never a route in resolved to a stopped unit" "$samples" \
		awk '$2 == "route" && $3 != "active" { bad = 1 } END { exit bad + (NR < 3) }' "$LAB/logs/sampler.log"
	# the journal: the route's removal is logged before systemd stops the unit
	jsince "$cur" >"$LAB/logs/uninstall.journal"
	local t_route t_stop
	case "$ROUTE_KIND" in
	delegate) t_route=$(grep -m1 -E 'Reload(ing|ed) systemd-resolved' "$LAB/logs/uninstall.journal" | mono) ;;
	link) t_route=$(grep -m1 -E 'pigsty-dns0' "$LAB/logs/uninstall.journal" | mono) ;;
	esac
	t_stop=$(grep -m1 -E 'Stopping pigsty-dns.service|Stopping pigsty-dns:' "$LAB/logs/uninstall.journal" | mono)
	ok "journal: the route's removal ($ROUTE_KIND) is logged before 'Stopping pigsty-dns.service'" \
		"${t_route:-none} <= ${t_stop:-none}" awk -v r="${t_route:-}" -v s="${t_stop:-}" 'BEGIN { exit !(r != "" && s != "" && r + 0 <= s + 0) }'
	check "resolved's state: no route" none "$(route_state)"
	check "getent ahostsv4 meta.pigsty.test finds nothing now" "" "$(ge meta.pigsty.test)"
	check "the unit is gone" "inactive not-found" \
		"$(prop pigsty-dns.service ActiveState) $(prop pigsty-dns.service LoadState)"
	etc_fingerprint >"$LAB/etc-after"
	check "/etc byte-identical to before the install (files, modes, owners, symlinks)" "" \
		"$(diff "$LAB/etc-before" "$LAB/etc-after" | head -20)"
	ok "the records stay (no --purge)" "$(cx ls /var/lib/pigsty-dns | paste -sd' ' -)" cx test -d /var/lib/pigsty-dns/generations
	out=$(cx pigsty-dns service uninstall --system --with-route 2>&1); rc=$?
	echo "$out" >"$LAB/logs/uninstall-system-2.log"
	etc_fingerprint >"$LAB/etc-after-2"
	check "a second uninstall is harmless (exit 0, /etc unchanged)" "0" \
		"$rc$(diff "$LAB/etc-before" "$LAB/etc-after-2" | head -5)"
}

# 7. The Debian package built in this run: dpkg -i, the journey with /usr/bin/pigsty-dns and the
# package's account, then dpkg -r (route first, then the unit, by prerm) and dpkg -P.
ours_everywhere() {   # every path named *pigsty* outside the lab's own files, the journal and homes
	cx sh -c 'find / /run -xdev \( -path /proc -o -path /sys -o -path /srv/lab -o -path /home -o -path /var/log/journal \) -prune \
		-o -name "*pigsty*" -print' | LC_ALL=C sort
}
etc_minus_accounts() {   # /etc's fingerprint without the account files (the account is policy's to keep)
	etc_fingerprint | grep -Ev ' /etc/(passwd|group|shadow|gshadow)-? |/etc/(passwd|group|shadow|gshadow)-?$'
}
# prerm's one refusal: a route that no system unit of the package serves (here a hand-run server),
# without the package's system unit (TAG no-unit) and beside it (TAG beside-unit: the unit stays).
package_refuses() {
	local out rc hp=5397 tag=$1 unit=""
	[ "$tag" = beside-unit ] && unit=" $(prop pigsty-dns.service ActiveState)"
	cx systemd-run -q --unit=lab-hand-server /usr/bin/pigsty-dns serve --listen 127.0.0.1:$hp \
		--records /srv/lab/pigsty.test.yml --state-dir /var/tmp/lab-hand
	local i; for i in $(seq 50); do [ "$(dq $hp pigsty.test SOA | cut -d' ' -f1)" = NOERROR ] && break; sleep 0.2; done
	out=$(cx pigsty-dns route install --server 127.0.0.1:$hp --yes --check-name meta.pigsty.test \
		--state-dir /var/tmp/lab-hand 2>&1); rc=$?
	echo "$out" >"$LAB/logs/pkg-hand-route-$tag.log"
	check "package ($tag): a route to a hand-run server (no unit of the package serves it)" "0 $ROUTE_KIND" "$rc $(route_state)"
	if [ "$tag" = no-unit ]; then
		# issue 33: the service account's state dir (no unit yet to make it) holding a FIFO as its
		# status file, as that account could leave it: prerm's `route status` looks there for the
		# route's daemon. Read blindly, it hung apt; bounded only, prerm waits 30 s and cannot decide.
		cx sh -c 'install -d -o pigsty-dns -g pigsty-dns -m 0700 /var/lib/pigsty-dns &&
			mkfifo -m 0600 /var/lib/pigsty-dns/status.json && chown pigsty-dns:pigsty-dns /var/lib/pigsty-dns/status.json'
	fi
	local t0=$SECONDS
	out=$(cx timeout 300 dpkg -r pigsty-dns 2>&1); rc=$?
	local took=$((SECONDS - t0))
	echo "$out" >"$LAB/logs/dpkg-r-refused-$tag.log"
	if [ "$tag" = no-unit ]; then
		check "package (no-unit): with a FIFO as the account's status.json, prerm decides at once (no 30 s timeout)" \
			"yes" "$([ "$took" -lt 20 ] && echo yes || echo "no: $took s, rc $rc")"
		cx rm -rf /var/lib/pigsty-dns
	fi
	ok "package ($tag): dpkg -r refused by prerm (route with no unit of ours), saying what to run" \
		"rc $rc: $(grep -m1 'next:' <<<"$out" | cut -c1-70)" \
		sh -c "[ $rc != 0 ] && grep -q 'refusing removal' '$LAB/logs/dpkg-r-refused-$tag.log' && grep -q 'next: sudo /usr/bin/pigsty-dns route uninstall --yes' '$LAB/logs/dpkg-r-refused-$tag.log'"
	# (dpkg keeps the wish to remove, "deinstall", until the next dpkg -r or an install)
	check "package ($tag): after the refusal: still installed, the route (and the unit) still there" "installed $ROUTE_KIND$unit" \
		"$(cx dpkg-query -W -f '${db:Status-Status}' pigsty-dns) $(route_state)${unit:+ $(prop pigsty-dns.service ActiveState)}"
	out=$(cx pigsty-dns route uninstall --yes 2>&1); rc=$?
	echo "$out" >"$LAB/logs/pkg-hand-route-uninstall-$tag.log"
	cx systemctl stop lab-hand-server.service; cx rm -rf /var/tmp/lab-hand
	check "package ($tag): the route removed as prerm said" "0 none" "$rc $(route_state)"
}
package_journey() {
	local out rc st pid
	# the journey above made its own account, kept its records and ran the copied binary: the package
	# starts from nothing, and every bare `pigsty-dns` below is the package's
	cx userdel pigsty-dns 2>/dev/null; cx rm -rf /var/lib/pigsty-dns /var/lib/pigsty-dns-route /usr/local/bin/pigsty-dns
	check "package: no pigsty-dns account before dpkg -i" "" "$(cx getent passwd pigsty-dns)"
	ours_everywhere >"$LAB/pkg-ours-before"
	etc_minus_accounts >"$LAB/pkg-etc-before"
	out=$(cx dpkg -i /srv/lab/pigsty-dns.deb 2>&1); rc=$?
	echo "$out" >"$LAB/logs/dpkg-i.log"
	check "package: dpkg -i pigsty-dns.deb" 0 "$rc"
	[ "$rc" = 0 ] || echo "$out" | tail -15
	check "package: the bare name is the package's binary" /usr/bin/pigsty-dns "$(cx sh -c 'command -v pigsty-dns')"
	check "package: /usr/bin/pigsty-dns --version names this version" "pigsty-dns $(cx dpkg-query -W -f '${Version}' pigsty-dns | cut -d- -f1)" \
		"$(cx /usr/bin/pigsty-dns --version | cut -d' ' -f1-2)"
	local acct; acct=$(cx getent passwd pigsty-dns)
	ok "package: postinst made the system account (uid < 1000, nologin, no home)" "$acct" \
		awk -F: -v a="$acct" 'BEGIN { split(a, f, ":"); exit !(f[3] > 0 && f[3] < 1000 && f[7] ~ /nologin$/ && f[6] == "/nonexistent") }'
	check "package: its own group" "pigsty-dns" "$(cx id -gn pigsty-dns)"
	check "package: no unit installed, enabled or started by installing" "not-found inactive" \
		"$(prop pigsty-dns.service LoadState) $(prop pigsty-dns.service ActiveState)"
	check "package: nothing listens on 5354 or $PORT" "" "$(cx ss -Hlun | awk '$4 ~ /:(5354|'$PORT')$/')"
	check "package: man -w pigsty-dns" "/usr/share/man/man1/pigsty-dns.1.gz" "$(cx man -w pigsty-dns 2>&1)"
	check "package: man -w pigsty-dns-route-install (one page per subcommand)" \
		"/usr/share/man/man1/pigsty-dns-route-install.1.gz" "$(cx man -w pigsty-dns-route-install 2>&1)"
	# bash-completion loads completions on demand from /usr/share/bash-completion/completions/NAME
	out=$(cx bash -c '. /usr/share/bash-completion/bash_completion
		if declare -F _comp_load >/dev/null; then _comp_load pigsty-dns; else __load_completion pigsty-dns; fi
		complete -p pigsty-dns' 2>&1)
	ok "package: bash completion, loaded on demand by bash-completion (complete -p pigsty-dns)" "$out" \
		grep -Eq '^complete .*-F _pigsty__dns( .*)? pigsty-dns$' <<<"$out"
	out=$(cx bash -c '. /usr/share/bash-completion/bash_completion; __load_completion pigsty-dns 2>/dev/null || _comp_load pigsty-dns
		COMP_WORDS=(pigsty-dns rou); COMP_CWORD=1; COMP_LINE="pigsty-dns rou"; COMP_POINT=${#COMP_LINE}
		_pigsty__dns pigsty-dns rou pigsty-dns; printf "%s\n" "${COMPREPLY[@]}"' 2>&1)
	check "package: bash completes 'pigsty-dns rou' to route" "route" "$out"
	check "package: zsh and fish completions in their vendor directories" "2" \
		"$(cx dpkg -L pigsty-dns | grep -cxE '/usr/share/zsh/vendor-completions/_pigsty-dns|/usr/share/fish/vendor_completions.d/pigsty-dns.fish')"
	check "package: the unit template and the plist as examples" "3" \
		"$(cx dpkg -L pigsty-dns | grep -cE '^/usr/share/doc/pigsty-dns/examples/(pigsty-dns-system.service|pigsty-dns.service|io.pigsty.dns.plist)$')"

	package_refuses no-unit
	etc_fingerprint >"$LAB/pkg-etc-installed"
	out=$(cx pigsty-dns service install --system --user pigsty-dns --listen 127.0.0.1:$PORT 2>&1); rc=$?
	echo "$out" >"$LAB/logs/pkg-install-system.log"
	check "package: service install --system --user pigsty-dns (no --program: this binary)" 0 "$rc"
	[ "$rc" = 0 ] || echo "$out" | tail -15
	st=$(show pigsty-dns.service ActiveState,SubState,UnitFileState,User)
	check "package: unit active (running), enabled, User=pigsty-dns" \
		"ActiveState=active;SubState=running;UnitFileState=enabled;User=pigsty-dns" "$st"
	pid=$(prop pigsty-dns.service MainPID)
	ok "package: the unit runs /usr/bin/pigsty-dns" "$(cx cat /proc/"$pid"/cmdline 2>/dev/null | tr '\0' ' ' | cut -c1-60)" \
		grep -q "^/usr/bin/pigsty-dns serve --listen 127.0.0.1:$PORT " <<<"$(cx cat /proc/"$pid"/cmdline | tr '\0' ' ')"
	# /usr/bin is in every sudo's secure_path: the bare name works (it does not for /usr/local/bin on sid)
	out=$(cx sudo -u pigsty-dns pigsty-dns load /srv/lab/pigsty.test.yml --state-dir /var/lib/pigsty-dns 2>&1); rc=$?
	echo "$out" >"$LAB/logs/pkg-load.log"
	local serial; serial=$(grep -o 'live (serial [0-9]*)' <<<"$out" | grep -o '[0-9]*' | head -1)
	ok "package: sudo -u pigsty-dns pigsty-dns load FILE --state-dir /var/lib/pigsty-dns -> live" \
		"rc $rc, serial ${serial:-none}" test "$rc" = 0 -a -n "$serial"
	package_refuses beside-unit
	out=$(cx pigsty-dns route install --server 127.0.0.1:$PORT --yes --check-name meta.pigsty.test \
		--state-dir /var/lib/pigsty-dns 2>&1); rc=$?
	echo "$out" >"$LAB/logs/pkg-route-install.log"
	check "package: route install --server 127.0.0.1:$PORT" 0 "$rc"
	[ "$rc" = 0 ] || echo "$out" | tail -15
	check "package: getent ahostsv4 meta.pigsty.test through the route" 10.10.10.10 "$(ge meta.pigsty.test)"
	out=$(cx pigsty-dns route status 2>&1); rc=$?
	echo "$out" >"$LAB/logs/pkg-route-status.log"
	check "package: route status all ok" "0 0" "$rc $(grep -c '^FAIL' <<<"$out")"
	# the leftover search below must be able to see what is ours: it finds it while installed
	check "package: the search for leftovers finds the binary, the unit, the records and the route journal" 4 \
		"$(ours_everywhere | grep -cxE '/usr/bin/pigsty-dns|/etc/systemd/system/pigsty-dns.service|/var/lib/pigsty-dns|/var/lib/pigsty-dns-route')"

	out=$(cx dpkg -r pigsty-dns 2>&1); rc=$?
	echo "$out" >"$LAB/logs/dpkg-r.log"
	check "package: dpkg -r pigsty-dns (prerm takes down the route, then the unit)" 0 "$rc"
	[ "$rc" = 0 ] || echo "$out" | tail -15
	ok "package: prerm removed the route before the unit" \
		"$(grep -n -E 'route uninstall|disable --now' <<<"$out" | cut -c1-50 | paste -sd'|' -)" \
		awk '/route uninstall/ && !r { r = NR } /disable --now/ && !d { d = NR } END { exit !(r && d && r < d) }' <<<"$out"
	check "package -r: no route in resolved" none "$(route_state)"
	check "package -r: getent finds nothing" "" "$(ge meta.pigsty.test)"
	check "package -r: no unit (file and systemd)" "no not-found" \
		"$(cx test -e /etc/systemd/system/pigsty-dns.service && echo yes || echo no) $(prop pigsty-dns.service LoadState)"
	check "package -r: no pigsty-dns process" "" "$(cx pgrep -a -f '^/usr/bin/pigsty-dns')"
	check "package -r: binary, man pages and completions gone" "" \
		"$(cx sh -c 'ls -d /usr/bin/pigsty-dns /usr/share/man/man1/pigsty-dns* /usr/share/bash-completion/completions/pigsty-dns 2>/dev/null')"
	check "package -r: no journal of ours (the unit logs to the system journal, which keeps its lines)" "" \
		"$(cx sh -c 'ls -d /var/log/journal/*/*pigsty* /run/log/journal/*/*pigsty* /var/log/*pigsty* 2>/dev/null')"
	check "package -r: policy keeps the account and the records (config-files state)" \
		"pigsty-dns yes deinstall ok config-files" \
		"$(cx id -un pigsty-dns) $(cx test -d /var/lib/pigsty-dns/generations && echo yes || echo no) $(cx dpkg-query -W -f '${Status}' pigsty-dns)"
	etc_fingerprint >"$LAB/pkg-etc-removed"
	check "package -r: /etc as after dpkg -i (the unit and the route left no trace)" "" \
		"$(diff "$LAB/pkg-etc-installed" "$LAB/pkg-etc-removed" | head -10)"

	out=$(cx dpkg -P pigsty-dns 2>&1); rc=$?
	echo "$out" >"$LAB/logs/dpkg-P.log"
	check "package: dpkg -P pigsty-dns" 0 "$rc"
	check "package -P: not known to dpkg any more" "" "$(cx dpkg-query -W -f '${Status}' pigsty-dns 2>/dev/null)"
	check "package -P: the records are gone" "no" "$(cx test -e /var/lib/pigsty-dns && echo yes || echo no)"
	check "package -P: policy keeps the account" "pigsty-dns" "$(cx id -un pigsty-dns)"
	check "package -P: nothing named *pigsty* left that was not there before dpkg -i" "" \
		"$(ours_everywhere | diff "$LAB/pkg-ours-before" - | head -10)"
	check "package -P: /etc as before dpkg -i, but for the account files" "" \
		"$(etc_minus_accounts | diff "$LAB/pkg-etc-before" - | head -10)"
}

host_fingerprint() {   # the host's side: nothing of the journey may reach it
	sha256sum /etc/resolv.conf /etc/nsswitch.conf /etc/passwd /etc/group 2>/dev/null
	find /etc/systemd -type f -exec sha256sum {} + 2>/dev/null | sort -k2
	ip -o link show | awk '{ print $2 }'; ip -o addr show | awk '{ print $2, $4 }'
}
root_fingerprint() { (cd "$ROOT" && find etc usr/local var/lib -xdev -printf '%p %s %T@\n' 2>/dev/null | LC_ALL=C sort); }

test_run() {
	[ "$(id -u)" = 0 ] || die "must run as root"
	local t
	for t in unshare nsenter setsid systemd-nspawn flock awk sha256sum pgrep; do command -v "$t" >/dev/null || die "missing $t"; done
	[ -x "${PIGSTY_DNS_BIN:-}" ] || die "set PIGSTY_DNS_BIN to the pigsty-dns binary"
	[ -f "${PIGSTY_DNS_RECORDS:-}" ] || die "set PIGSTY_DNS_RECORDS to zones/pigsty.test.yml"
	[ -f "${PIGSTY_DNS_DEB:-}" ] || die "set PIGSTY_DNS_DEB to the package (deploy/debian/build-deb.sh prints its path)"
	local t0=$SECONDS
	build
	echo "# root ready: $ROOT (systemd $(root_version)) in $((SECONDS - t0)) s"
	running && die "a container of this LAB is running already (nspawn pid $(npid))"
	[ -e "$LAB/upper" ] && { rm -rf "$LAB/upper" "$LAB/work" || die "cannot clear $LAB"; }
	mkdir -p "$LAB/logs" || die "cannot create $LAB"
	if [ "$(root_version)" -ge 258 ]; then ADAPTER=resolved-delegate; ROUTE_KIND=delegate; MAX_SCORE=$MAX_SCORE_SID
	else ADAPTER=resolved-link; ROUTE_KIND=link; MAX_SCORE=$MAX_SCORE_252; fi
	# the route's default variant here: networkd runs in the bookworm machine (see build)
	VARIANT=; [ "$ROUTE_KIND" = link ] && VARIANT=networkd
	host_fingerprint >"$LAB/host-before"
	root_fingerprint >"$LAB/root-before"
	setup_machine
	trap 'stop' EXIT
	trap 'exit 130' INT TERM
	local t1=$SECONDS
	start || exit 2
	echo "# systemd $(cx systemctl --version | head -1 | cut -d' ' -f2-) in a $SUITE container, network: $NET, $(cx uname -r)"
	boot_sane first
	if [ "${PARTS:-all}" = all ]; then
		system_unit
		load_and_status
		restarts
		user_unit
		route_install
		[ "$VARIANT" = networkd ] && runtime_reboot
		container_restart
		teardown
		user_unit_last
	fi
	package_journey
	stop
	trap - EXIT
	if host_fingerprint | diff - "$LAB/host-before" >/dev/null; then
		check "host: resolv.conf, nsswitch.conf, passwd, group, /etc/systemd, links and addresses unchanged" "" ""
	else
		check "host: nothing changed" "" "$(host_fingerprint | diff - "$LAB/host-before" | head -5)"
	fi
	check "the cached $SUITE root is unchanged (the run wrote only to its overlay)" "" \
		"$(root_fingerprint | diff - "$LAB/root-before" | head -5)"
	echo "# $SUITE journey took $((SECONDS - t1)) s (logs: $LAB/logs)"
	echo "$PASS passed, $FAIL failed"
	[ "$FAIL" = 0 ]
}

# systemd-analyze security exposure of the system unit, recorded (lower is better): a change to
# deploy/systemd/pigsty-dns-system.service must not make it worse.
MAX_SCORE_252=4.0   # measured: 4.0 OK (systemd 252.39)
MAX_SCORE_SID=4.0   # measured: 4.0 OK (systemd 262.1)

case "${1:-}" in
test) test_run ;;
build) build; echo "# root ready: $ROOT (systemd $(root_version))" ;;
start) start ;;
exec) shift; cx "$@" ;;
user) shift; ux "$@" ;;
stop) stop ;;
path) echo "$ROOT" ;;
*) echo "usage: $0 test|build|start|exec CMD...|user CMD...|stop|path" >&2; exit 2 ;;
esac
