//! What an installed route lives through (issue 26), under a `--root` prefix with a scripted runner:
//! another link claiming the zones (install refuses, status names it), the daemon stopped / crashed /
//! never started, the link lost, an install or uninstall cut short (what a SIGKILL leaves), a damaged
//! journal, a hand-edited file, uninstall then install. The live halves are the labs' rows.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use pigsty_dns::dns::name::{Zone, Zones};
use pigsty_dns::error::Class;
use pigsty_dns::route::adapter::{AdapterName, Variant};
use pigsty_dns::route::detect::{Driver, Facts};
use pigsty_dns::route::plan::Request;
use pigsty_dns::route::{self, Ctx, journal};
use pigsty_dns::sys::Os;
use pigsty_dns::sys::runner::{Output, ScriptedRunner};
use pigsty_dns::sys::systemd::SystemdVersion;

use crate::route_adapters::{META_10, store_generation};

const LINK: &str = "Link 3 (pigsty-dns0)\nCurrent Scopes: DNS\n     Protocols: -DefaultRoute -LLMNR -mDNS\n   DNS Servers: 127.0.0.1:5354\n    DNS Domain: ~10.10.10.in-addr.arpa ~pigsty.test\n";
const DELEGATE: &str = "Global\nDelegate pigsty-dns\n  DNS Servers: 127.0.0.1:5354\n   DNS Domain: ~pigsty.test ~10.10.10.in-addr.arpa\n";
const SOA: &str = "pigsty.test IN SOA localhost hostmaster.pigsty.test 7 3600 900 604800 5\n";
const LINK_UP: &str = "3: pigsty-dns0: <BROADCAST,NOARP,UP,LOWER_UP> mtu 1500 state UNKNOWN\n    inet 198.18.53.53/32 scope global pigsty-dns0\n";
const NETDEV: &str = "/etc/systemd/network/50-pigsty-dns0.netdev";
const NETWORK: &str = "/etc/systemd/network/50-pigsty-dns0.network";

/// resolved shows a healthy route; `resolvectl domain` as given.
fn runner(domains: &str) -> ScriptedRunner {
    let mut r = ScriptedRunner::new();
    r.always("resolvectl --no-pager domain", Output::ok_with(domains))
        .always(
            "resolvectl --no-pager status pigsty-dns0",
            Output::ok_with(LINK),
        )
        .always("resolvectl --no-pager status", Output::ok_with(DELEGATE))
        .always("resolvectl --cache=no query -t SOA", Output::ok_with(SOA))
        .always(
            "resolvectl --cache=no query -4",
            Output::ok_with("meta.pigsty.test: 10.10.10.10    -- link: pigsty-dns0\n"),
        )
        .always(
            "getent ahostsv4",
            Output::ok_with("10.10.10.10     STREAM meta.pigsty.test\n"),
        )
        .always(
            "resolvectl --cache=no query 10.10.10.10",
            Output::ok_with("10.10.10.10: meta.pigsty.test            -- link: pigsty-dns0\n"),
        )
        .always(
            "getent hosts 10.10.10.10",
            Output::ok_with("10.10.10.10     meta.pigsty.test\n"),
        )
        .always("ip addr show dev pigsty-dns0", Output::ok_with(LINK_UP))
        .always(
            "ip -o -4 addr show",
            Output::ok_with("1: lo    inet 127.0.0.1/8 scope host lo\n"),
        );
    r.fallback = Some(Output::ok_with(""));
    r
}

const NO_CLAIM: &str = "Global:\nLink 2 (pu0):\nLink 3 (pigsty-dns0): ~10.10.10.in-addr.arpa ~pigsty.test\nLink 4 (vpn0): ~.\n";

fn up(_: SocketAddr, _: &Zone) -> Result<u32, String> {
    Ok(7)
}
fn down(a: SocketAddr, _: &Zone) -> Result<u32, String> {
    Err(format!("no answer over UDP from {a}"))
}
fn lookup(_: SocketAddr, _: &str) -> Result<Option<Ipv4Addr>, String> {
    Ok(Some(Ipv4Addr::new(10, 10, 10, 10)))
}

struct L {
    root: tempfile::TempDir,
    _state: tempfile::TempDir,
    state_dir: PathBuf,
    runner: ScriptedRunner,
    preflight: fn(SocketAddr, &Zone) -> Result<u32, String>,
    networkd: bool,
}

impl L {
    fn new(networkd: bool) -> L {
        let state = tempfile::tempdir().unwrap();
        let state_dir = state.path().join("state");
        store_generation(&state_dir, META_10);
        L {
            root: crate::route_adapters::host_root(),
            _state: state,
            state_dir,
            runner: runner(NO_CLAIM),
            preflight: up,
            networkd,
        }
    }
    fn root(&self) -> &Path {
        self.root.path()
    }
    fn jdir(&self) -> PathBuf {
        self.root().join("var/lib/pigsty-dns-route")
    }
    fn at(&self, abs: &str) -> PathBuf {
        self.root().join(abs.trim_start_matches('/'))
    }
    fn ctx_do<R>(&mut self, f: impl FnOnce(&mut Ctx<'_>) -> R) -> R {
        let mut facts = Facts {
            os: Os::Linux,
            is_root: true,
            systemd: SystemdVersion::parse("systemd 252 (252.39-1~deb12u2)"),
            resolved_running: true,
            networkd_running: self.networkd,
            systemd_booted: false,
            nm_dns_mode: None,
            resolv_conf: None,
            dummy: Driver::Present,
            ifb: Driver::Present,
            ip_path: "/usr/sbin/ip".into(),
            resolvectl_path: "/usr/bin/resolvectl".into(),
            notes: vec![],
        };
        facts.networkd_running = self.networkd;
        let mut ctx = Ctx {
            root: self.root.path().to_path_buf(),
            journal_dir: self.jdir(),
            runner: &mut self.runner,
            facts,
            preflight: &self.preflight,
            lookup_a: &lookup,
            confirm: None,
            settle: Duration::ZERO,
            status_wait: Duration::ZERO,
            check_name: Some("meta.pigsty.test".into()),
            status_file: None,
            state_dir: Some(self.state_dir.clone()),
            out: vec![],
        };
        f(&mut ctx)
    }
    fn install_as(&mut self, a: AdapterName) -> Result<String, pigsty_dns::error::AppError> {
        let r = Request {
            zones: Zones::parse(&["pigsty.test"]).unwrap(),
            server: "127.0.0.1:5354".parse().unwrap(),
            adapter: Some(a),
            variant: Some(if self.networkd {
                Variant::Networkd
            } else {
                Variant::Runtime
            }),
            link: "pigsty-dns0".into(),
            link_address: "198.18.53.53/32".into(),
            link_kind: None,
        };
        self.ctx_do(|c| route::install(c, &r, false, true).map(|r| r.render(false)))
    }
    fn install(&mut self) -> Result<String, pigsty_dns::error::AppError> {
        self.install_as(AdapterName::ResolvedLink)
    }
    /// Uninstall, with resolved showing the link gone once its undo steps ran; healthy again after.
    fn uninstall(&mut self) -> Result<String, pigsty_dns::error::AppError> {
        let mut gone = ScriptedRunner::new();
        gone.always(
            "resolvectl --no-pager status",
            Output::fail(1, "Failed to resolve interface \"pigsty-dns0\""),
        );
        gone.fallback = Some(Output::ok_with(""));
        let healthy = std::mem::replace(&mut self.runner, gone);
        let r = self.ctx_do(|c| route::uninstall(c, false, true).map(|r| r.render(false)));
        self.runner = healthy;
        r
    }
    fn status(&mut self) -> String {
        self.ctx_do(|c| route::status(c).map(|r| r.render(false)))
            .unwrap()
    }
    /// What the commands left under the root, without the host's own nsswitch.conf.
    fn tree(&self) -> Vec<String> {
        let mut t = crate::util::tree(self.root());
        t.retain(|p| p != "etc/nsswitch.conf");
        t
    }
}

/// The `next:` line under the FAIL line of `item`.
fn next_of(text: &str, item: &str) -> String {
    let mut lines = text.lines();
    while let Some(l) = lines.next() {
        if l.starts_with(&format!("FAIL {item}:")) {
            return lines
                .next()
                .unwrap_or("")
                .trim()
                .trim_start_matches("next: ")
                .to_string();
        }
    }
    panic!("no FAIL {item} in:\n{text}")
}

// ---------------------------------------------------------------- row 6: a VPN

#[test]
fn a_link_claiming_either_zone_or_a_subdomain_makes_install_refuse_naming_it() {
    for a in [AdapterName::ResolvedLink, AdapterName::ResolvedDelegate] {
        for claim in [
            "~pigsty.test",
            "~corp.pigsty.test",
            "~10.10.10.in-addr.arpa",
            "~5.10.10.10.in-addr.arpa",
        ] {
            let mut l = L::new(false);
            l.runner = runner(&NO_CLAIM.replace("(vpn0): ~.", &format!("(vpn0): ~. {claim}")));
            let e = l.install_as(a).unwrap_err();
            assert_eq!(e.class, Class::Conflict, "{a:?} {claim}: {e:?}");
            assert_eq!(e.class.exit_code(), 4);
            assert!(e.message.contains("link vpn0 claims"), "{e:?}");
            assert!(e.message.contains(claim), "{e:?}");
            assert!(e.next.contains(claim), "{e:?}");
            assert!(l.tree().is_empty(), "{a:?} {claim}: wrote {:?}", l.tree());
        }
    }
}

#[test]
fn a_default_route_vpn_is_no_claim_and_a_later_claim_is_named_by_status() {
    let mut l = L::new(false);
    l.install().unwrap();
    let text = l.status();
    assert!(!text.contains("FAIL"), "{text}");
    assert!(
        text.contains(
            "ok   other resolvers: no other link claims pigsty.test or 10.10.10.in-addr.arpa"
        ),
        "{text}"
    );
    assert!(text.contains("link vpn0 routes ~."), "{text}");
    l.runner = runner(&NO_CLAIM.replace("(vpn0): ~.", "(vpn0): ~. ~corp.pigsty.test"));
    let text = l.status();
    assert!(
        text.contains(
            "FAIL other resolvers: link vpn0 claims ~corp.pigsty.test (a subdomain of pigsty.test)"
        ),
        "{text}"
    );
    assert!(next_of(&text, "other resolvers").starts_with("drop ~corp.pigsty.test from link vpn0"));
}

// ---------------------------------------------------------------- row 2: the daemon

fn write_status(dir: &Path, state: &str, pid: u32) {
    std::fs::create_dir_all(dir).unwrap();
    let s = format!(
        r#"{{"format": 1, "state": "{state}", "pid": {pid}, "started": "2026-12-03T08:00:00Z", "started_unix": 0,
  "updated": "2026-12-03T08:00:02Z", "listen": ["127.0.0.1:5354"], "zone": "pigsty.test", "serial": 1,
  "record_digest": null, "records": 1, "counters": {{"noerror": 0, "nxdomain": 0, "refused": 0, "formerr": 0,
  "notimp": 0, "servfail": 0, "badvers": 0, "other": 0, "dropped": 0, "truncated": 0, "tcp_accepted": 0,
  "tcp_refused": 0}}}}"#
    );
    std::fs::write(dir.join("status.json"), s).unwrap();
}

#[test]
fn status_says_whether_the_daemon_stopped_crashed_or_never_started() {
    let mut l = L::new(false);
    l.install().unwrap();
    l.preflight = down;
    let text = l.status();
    assert!(
        text.contains("FAIL daemon: never started at 127.0.0.1:5354"),
        "{text}"
    );
    let dir = l.state_dir.display().to_string();
    assert_eq!(
        next_of(&text, "daemon"),
        format!(
            "start it: pigsty-dns serve --listen 127.0.0.1:5354 --state-dir {dir} (or pigsty-dns service install)"
        )
    );
    write_status(&l.state_dir.clone(), "stopped", 4242);
    let text = l.status();
    assert!(
        text.contains("FAIL daemon: stopped at 127.0.0.1:5354"),
        "{text}"
    );
    assert!(text.contains("nothing leaks: the route stays"), "{text}");
    // A killed server leaves "running" with a pid that is gone (pid_max is at most 2^22).
    write_status(&l.state_dir.clone(), "running", 1 << 23);
    let text = l.status();
    assert!(
        text.contains("FAIL daemon: crashed at 127.0.0.1:5354"),
        "{text}"
    );
    assert!(
        text.contains("is gone (killed or crashed, no clean stop)"),
        "{text}"
    );
    assert!(
        text.contains("FAIL lookup: zone lookups fail while the daemon is down"),
        "{text}"
    );
}

// ---------------------------------------------------------------- row 5: the link

#[test]
fn a_lost_link_or_address_fails_status_with_the_leak_and_the_exact_repair() {
    let mut l = L::new(false);
    l.install().unwrap();
    assert!(
        l.status()
            .contains("ok   link: pigsty-dns0 is up with 198.18.53.53/32")
    );
    for (out, want) in [
        (
            Output::fail(1, "Device \"pigsty-dns0\" does not exist.\n"),
            "FAIL link: pigsty-dns0 is gone (deleted?): resolved has no DNS scope for pigsty.test and 10.10.10.in-addr.arpa then, so their names leak to the default upstream",
        ),
        (
            Output::ok_with(LINK_UP.lines().next().unwrap()),
            "FAIL link: pigsty-dns0 has lost its address 198.18.53.53/32: resolved has no DNS scope",
        ),
    ] {
        l.runner.once("ip addr show dev pigsty-dns0", out);
        let text = l.status();
        assert!(text.contains(want), "{text}");
        let root = l.root().display().to_string();
        let dir = l.state_dir.display().to_string();
        assert_eq!(
            next_of(&text, "link"),
            format!(
                "sudo pigsty-dns route install --adapter resolved-link --server 127.0.0.1:5354 --zone pigsty.test --link-variant runtime --link pigsty-dns0 --link-address 198.18.53.53/32 --link-kind dummy --root {root} --state-dir {dir} --yes"
            )
        );
    }
}

// ---------------------------------------------------------------- row 7: cut short

/// What a SIGKILL right after the first file leaves: the journal (written `applying` before any
/// change) and the first of its files.
fn interrupted_install(l: &mut L) {
    l.install().unwrap();
    std::fs::remove_file(l.at(NETWORK)).unwrap();
    let p = journal::path(&l.jdir());
    let j = std::fs::read_to_string(&p)
        .unwrap()
        .replace("\"installed\"", "\"applying\"");
    std::fs::write(&p, j).unwrap();
}

#[test]
fn an_install_cut_short_is_reported_from_the_journal_and_uninstalled_exactly() {
    let mut l = L::new(true);
    interrupted_install(&mut l);
    let text = l.status();
    let (netdev, network) = (l.at(NETDEV), l.at(NETWORK));
    assert!(
        text.contains(&format!(
            "an install was interrupted (journal state applying): written {}; not written {}",
            netdev.display(),
            network.display()
        )),
        "{text}"
    );
    assert_eq!(
        next_of(&text, "journal"),
        "sudo pigsty-dns route uninstall --yes removes what it wrote; then install again"
    );
    // The missing file is no drift of an install that never finished.
    assert!(!text.contains("FAIL drift"), "{text}");
    let out = l.uninstall().unwrap();
    assert!(
        out.contains(&format!("removed {}", netdev.display())),
        "{out}"
    );
    assert!(l.tree().is_empty(), "left: {:?}", l.tree());
    assert!(l.install().unwrap().starts_with("installed:"));
}

#[test]
fn an_uninstall_cut_short_is_drift_and_uninstall_again_completes() {
    let mut l = L::new(true);
    l.install().unwrap();
    std::fs::remove_file(l.at(NETDEV)).unwrap();
    let text = l.status();
    assert!(
        text.contains(&format!(
            "FAIL drift: {} is missing",
            l.at(NETDEV).display()
        )),
        "{text}"
    );
    assert!(
        next_of(&text, "drift").contains("pigsty-dns route uninstall --yes"),
        "{text}"
    );
    l.uninstall().unwrap();
    assert!(l.tree().is_empty(), "left: {:?}", l.tree());
}

// ---------------------------------------------------------------- row 8: external edits

#[test]
fn a_hand_edited_file_is_named_and_never_removed() {
    let mut l = L::new(true);
    l.install().unwrap();
    let p = l.at(NETWORK);
    let mut body = std::fs::read_to_string(&p).unwrap();
    body.push_str("# mine\n");
    std::fs::write(&p, &body).unwrap();
    let text = l.status();
    assert!(
        text.contains(&format!(
            "FAIL drift: {} changed by hand (uninstall leaves it)",
            p.display()
        )),
        "{text}"
    );
    assert!(
        next_of(&text, "drift").starts_with("undo the hand edit"),
        "{text}"
    );
    let e = l.uninstall().unwrap_err();
    assert_eq!(e.class, Class::Partial, "{e:?}");
    assert_eq!(std::fs::read_to_string(&p).unwrap(), body);
}

/// Damages the journal file at the path.
type Damage<'a> = Box<dyn Fn(&Path) + 'a>;

#[test]
fn a_damaged_journal_is_named_precisely_and_nothing_acts_on_it() {
    use std::os::unix::fs::PermissionsExt;
    let mut l = L::new(true);
    l.install().unwrap();
    let p = journal::path(&l.jdir());
    let good = std::fs::read(&p).unwrap();
    let cases: [(&str, Damage); 3] = [
        (
            "is truncated",
            Box::new(|p| std::fs::write(p, &good[..120]).unwrap()),
        ),
        (
            "is not JSON",
            Box::new(|p| std::fs::write(p, "not json\n").unwrap()),
        ),
        (
            "has mode 0666: writable by others, not trusted",
            Box::new(|p| {
                std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o666)).unwrap()
            }),
        ),
    ];
    for (want, damage) in cases {
        std::fs::write(&p, &good).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        damage(&p);
        let before = l.tree();
        let text = l.status();
        assert!(
            text.contains(&format!("FAIL journal: {} {want}", p.display())),
            "{text}"
        );
        assert!(
            next_of(&text, "journal").contains(&p.display().to_string()),
            "{text}"
        );
        let e = l.uninstall().unwrap_err();
        assert_eq!(e.class, Class::Integrity, "{want}: {e:?}");
        let e = l.install().unwrap_err();
        assert_eq!(e.class, Class::Integrity, "{want}: {e:?}");
        assert_eq!(l.tree(), before, "{want}");
    }
}

// ---------------------------------------------------------------- row 9: uninstall, then install

#[test]
fn uninstall_then_install_gives_the_same_bytes_and_an_equivalent_journal() {
    let mut l = L::new(true);
    l.install().unwrap();
    let files = |l: &L| [NETDEV, NETWORK].map(|f| std::fs::read(l.at(f)).unwrap());
    let first = files(&l);
    let j1 = journal::read(&l.jdir()).unwrap().unwrap();
    l.uninstall().unwrap();
    assert!(l.tree().is_empty());
    l.install().unwrap();
    assert_eq!(files(&l), first);
    let mut j2 = journal::read(&l.jdir()).unwrap().unwrap();
    j2.written_at = j1.written_at.clone();
    assert_eq!(j2, j1);
}
