//! `route status`, `route install` and `route uninstall`, text and `--json`, byte for byte against the
//! files in tests/golden/route/ (`UPDATE_GOLDEN=1` rewrites them): many states at once — a healthy
//! route, drift, a half-installed journal, an unreadable one, files without a journal, another resolver
//! for the zone, the old mDNS port, refusals. The temporary directories and the journal's time stamp
//! are replaced by placeholders; everything else is the commands' own output.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use pigsty_dns::dns::name::{Zone, Zones};
use pigsty_dns::error::AppError;
use pigsty_dns::route::adapter::{self, AdapterName, Variant};
use pigsty_dns::route::detect::{Driver, Facts};
use pigsty_dns::route::installed::default_params;
use pigsty_dns::route::journal::{self, Journal, JournalFile, State};
use pigsty_dns::route::plan::Request;
use pigsty_dns::route::{self, Ctx, files};
use pigsty_dns::sys::runner::{Output, ScriptedRunner};
use pigsty_dns::sys::{Os, systemd::SystemdVersion};

use crate::route_adapters::{META_10, META_12, host_root, store_generation};

const SERVER: &str = "127.0.0.1:5354";
const LINK_OK: &str = "Link 3 (pigsty-dns0)\nCurrent Scopes: DNS\n     Protocols: -DefaultRoute -LLMNR -mDNS\n   DNS Servers: 127.0.0.1:5354\n    DNS Domain: ~10.10.10.in-addr.arpa ~pigsty.test\n";
const LINK_NO_SCOPE: &str = "Link 3 (pigsty-dns0)\nCurrent Scopes: none\n     Protocols: -DefaultRoute\n   DNS Servers: 127.0.0.1:5354\n    DNS Domain: ~pigsty.test\n";
const DELEGATE_OK: &str = "Global\nDelegate pigsty-dns\n  DNS Servers: 127.0.0.1:5354\n   DNS Domain: ~pigsty.test ~10.10.10.in-addr.arpa\n";
const SOA: &str = "pigsty.test IN SOA localhost hostmaster.pigsty.test 7 3600 900 604800 5\n";
const NM_DEVICES: &str = "nmcli -t -f DEVICE,STATE device";
/// `scutil --dns` with a VPN's supplemental resolver for the zone and none of the route's.
const SCUTIL_VPN: &str = "DNS configuration\n\nresolver #1\n  search domain[0] : lan\n  nameserver[0] : 192.168.1.1\n  if_index : 6 (en0)\n  flags    : Request A records\n  reach    : 0x00020002 (Reachable,Directly Reachable Address)\n\nresolver #2\n  domain   : pigsty.test\n  nameserver[0] : 10.8.0.1\n  if_index : 17 (utun4)\n  flags    : Supplemental, Request A records\n  reach    : 0x00000002 (Reachable)\n";

fn linux(version: &str) -> Facts {
    Facts {
        os: Os::Linux,
        is_root: true,
        systemd: SystemdVersion::parse(version),
        resolved_running: true,
        networkd_running: false,
        systemd_booted: true,
        nm_dns_mode: None,
        resolv_conf: None,
        dummy: Driver::Present,
        ifb: Driver::Present,
        ip_path: "/usr/sbin/ip".into(),
        resolvectl_path: "/usr/bin/resolvectl".into(),
        notes: vec![],
    }
}

fn mac() -> Facts {
    Facts {
        os: Os::Macos,
        systemd: None,
        resolved_running: false,
        systemd_booted: false,
        dummy: Driver::Unknown,
        ifb: Driver::Unknown,
        ..linux("")
    }
}

fn req(adapter: Option<AdapterName>, variant: Option<Variant>) -> Request {
    Request {
        zones: Zones::parse(&["pigsty.test"]).unwrap(),
        server: SERVER.parse().unwrap(),
        adapter,
        variant,
        link: "pigsty-dns0".into(),
        link_address: "198.18.53.53/32".into(),
        link_kind: None,
    }
}

fn up(_: SocketAddr, _: &Zone) -> Result<u32, String> {
    Ok(7)
}
fn down(a: SocketAddr, _: &Zone) -> Result<u32, String> {
    Err(format!("no answer over UDP from {a}"))
}
fn lookup(_: SocketAddr, _: &str) -> Result<Option<Ipv4Addr>, String> {
    Ok(Some(Ipv4Addr::new(10, 10, 10, 10)))
}

/// Every command succeeds; resolved, NSS and NM answer as given in `first` (first match wins), else
/// as a healthy route.
fn runner(first: &[(&str, &str)], link: &str) -> ScriptedRunner {
    let mut r = ScriptedRunner::new();
    for (cmd, out) in first {
        r.always(cmd, Output::ok_with(out));
    }
    r.always(
        "resolvectl --no-pager status pigsty-dns0",
        Output::ok_with(link),
    )
    .always("resolvectl --no-pager status", Output::ok_with(DELEGATE_OK))
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
    .always(
        "ip -o -4 addr show",
        Output::ok_with("1: lo    inet 127.0.0.1/8 scope host lo\n"),
    )
    .always(NM_DEVICES, Output::ok_with("pigsty-dns0:unmanaged\n"));
    r.fallback = Some(Output::ok_with(""));
    r
}

/// One host under a root prefix, with the daemon's state dir beside it.
struct W {
    root: tempfile::TempDir,
    state: tempfile::TempDir,
    state_dir: Option<PathBuf>,
    runner: ScriptedRunner,
    facts: Facts,
    preflight: fn(SocketAddr, &Zone) -> Result<u32, String>,
}

impl W {
    fn new(facts: Facts) -> W {
        W {
            root: host_root(),
            state: tempfile::tempdir().unwrap(),
            state_dir: None,
            runner: runner(&[], LINK_OK),
            facts,
            preflight: up,
        }
    }
    fn with_generation(mut self, yaml: &str) -> W {
        let d = self.state.path().join("state");
        store_generation(&d, yaml);
        self.state_dir = Some(d);
        self
    }
    fn jdir(&self) -> PathBuf {
        self.root
            .path()
            .join(journal::default_dir(self.facts.os).trim_start_matches('/'))
    }
    fn path(&self, abs: &str) -> PathBuf {
        files::under(self.root.path(), abs)
    }
    fn ctx_do<R>(&mut self, f: impl FnOnce(&mut Ctx<'_>) -> R) -> R {
        let mut ctx = Ctx {
            root: self.root.path().to_path_buf(),
            journal_dir: self.jdir(),
            runner: &mut self.runner,
            facts: self.facts.clone(),
            preflight: &self.preflight,
            lookup_a: &lookup,
            confirm: None,
            settle: Duration::ZERO,
            status_wait: Duration::ZERO,
            check_name: Some("meta.pigsty.test".into()),
            status_file: None,
            state_dir: self.state_dir.clone(),
            out: vec![],
        };
        f(&mut ctx)
    }
    fn install(&mut self, r: &Request) {
        let out = self.ctx_do(|c| route::install(c, r, false, true));
        assert!(out.is_ok(), "{:?}", out.err());
    }
    /// Rewrites the journal through `f`.
    fn edit_journal(&self, f: impl FnOnce(&mut Journal)) {
        let mut j = journal::read(&self.jdir()).unwrap().unwrap();
        f(&mut j);
        journal::write(&self.jdir(), &j).unwrap();
    }
    /// The output with this world's temporary paths and time stamp replaced by placeholders.
    fn norm(&self, s: &str) -> String {
        let mut s = s
            .replace(&self.state.path().display().to_string(), "<state>")
            .replace(&self.root.path().display().to_string(), "<root>");
        if let Ok(Some(j)) = journal::read(&self.jdir()) {
            s = s.replace(&j.written_at, "<written_at>");
        }
        s
    }
    /// Text and JSON of a command's report, both checked against their golden files.
    fn check(
        &mut self,
        name: &str,
        f: impl Fn(&mut Ctx<'_>) -> Result<pigsty_dns::output::Report, AppError>,
    ) {
        let r = self
            .ctx_do(|c| f(c))
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        golden(&format!("{name}.txt"), &self.norm(&r.render(false)));
        golden(&format!("{name}.json"), &self.norm(&r.render(true)));
    }
    fn status(&mut self, name: &str) {
        self.check(name, route::status);
    }
    fn plan(&mut self, name: &str, r: &Request) {
        self.check(name, |c| route::install(c, r, true, false));
    }
    fn uninstall_plan(&mut self, name: &str) {
        self.check(name, |c| route::uninstall(c, true, false));
    }
    /// A refusal as class, exit code, error and next lines.
    fn refusal(&self, e: &AppError) -> String {
        self.norm(&format!(
            "{:?} (exit {})\nerror: {}\nnext: {}\n",
            e.class,
            e.class.exit_code(),
            e.message,
            e.next
        ))
    }
}

pub fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/route")
        .join(name);
    if std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()));
    assert_eq!(actual, want, "{name} differs from its golden file");
}

fn with_nm(mut w: W) -> W {
    w.facts.nm_dns_mode = Some("systemd-resolved".into());
    w
}

// ---------------------------------------------------------------- route status

#[test]
fn route_status_golden_nothing_installed_and_files_without_a_journal() {
    let mut w = W::new(linux("systemd 252 (252.39-1)"));
    w.status("status-none");
    w.install(&req(Some(AdapterName::ResolvedDelegate), None));
    std::fs::remove_dir_all(w.jdir()).unwrap();
    w.status("status-orphans");
    std::fs::create_dir_all(w.jdir()).unwrap();
    std::fs::write(w.jdir().join(journal::FILE), "{ not json").unwrap();
    w.status("status-unreadable-journal");
}

#[test]
fn route_status_golden_healthy_link_with_networkmanager_and_reverse_zone() {
    let mut w = with_nm(W::new(linux("systemd 252 (252.39-1)"))).with_generation(META_10);
    w.install(&req(None, Some(Variant::Runtime)));
    w.status("status-link-nm-healthy");
}

#[test]
fn route_status_golden_half_installed_drifted_down_on_the_mdns_port() {
    let mut w = with_nm(W::new(linux("systemd 252 (252.39-1)"))).with_generation(META_10);
    w.install(&req(None, Some(Variant::Runtime)));
    w.edit_journal(|j| {
        j.state = State::Applying;
        j.server = "127.0.0.1:5353".into();
    });
    std::fs::write(
        w.path("/etc/systemd/system/pigsty-dns-route.service"),
        "changed",
    )
    .unwrap();
    std::fs::remove_file(w.path("/etc/NetworkManager/conf.d/pigsty-dns.conf")).unwrap();
    store_generation(w.state_dir.as_ref().unwrap(), META_12);
    w.runner = runner(
        &[(NM_DEVICES, "pigsty-dns0:connected (externally)\n")],
        LINK_NO_SCOPE,
    );
    w.preflight = down;
    w.status("status-link-half-installed-drift-down");
}

#[test]
fn route_status_golden_lookups_that_fail_and_a_journal_zone_that_is_not_one() {
    let mut w = W::new(linux("systemd 262 (262.1-1)")).with_generation(META_10);
    w.install(&req(None, None));
    w.runner = runner(
        &[
            ("getent ahostsv4", "203.0.113.99  STREAM meta.pigsty.test\n"),
            (
                "getent hosts 10.10.10.10",
                "10.10.10.10     pg-meta.pigsty.test\n",
            ),
        ],
        LINK_OK,
    );
    w.status("status-delegate-lookups-fail");
    // As a release that routed one zone wrote it (no `zones`), its zone damaged.
    w.edit_journal(|j| {
        j.zone = "not a zone".into();
        j.zones.clear();
    });
    w.status("status-delegate-bad-zone");
}

/// Hosts mode (issue 23): Barn's block, the old Pigsty section and a line of the user's own, seen by
/// `route status` and the install plan, each finding with its line, class and next step.
const HOSTS_MODE: &str = "127.0.0.1\tlocalhost\n# barn:begin\n10.10.10.10\tmeta.pigsty.test\n10.10.10.2\tpg-meta.pigsty.test\n# barn:end\n# pigsty dns records\n10.10.10.10 meta pigsty c.pigsty\n10.10.10.11 node-1   # sandbox node node-1\n10.10.10.3 meta  # typo\n";

#[test]
fn route_golden_hosts_mode_findings_in_status_and_the_plan() {
    let mut w = W::new(linux("systemd 252 (252.39-1)")).with_generation(META_10);
    std::fs::write(w.path("/etc/hosts"), HOSTS_MODE).unwrap();
    w.status("status-none-hosts-mode");
    w.plan(
        "install-plan-hosts-mode",
        &req(None, Some(Variant::Runtime)),
    );
    w.install(&req(None, Some(Variant::Runtime)));
    w.status("status-link-hosts-mode");
    std::fs::write(w.path("/etc/hosts"), "# barn:begin\n# barn:begin\n").unwrap();
    w.status("status-link-hosts-unreadable");
}

/// What a macOS install of `server` leaves: both resolver files and the journal (verification there
/// needs the daemon's counters, which route_macos.rs fakes; status here needs only the files).
fn mac_installed(w: &W, server: &str) {
    let mut p = default_params(&w.facts);
    p.server = server.parse().unwrap();
    p.reverse = Some("10.10.10.in-addr.arpa".into());
    let r = adapter::render(AdapterName::MacosResolver, &p);
    let mut jfiles = vec![];
    for (path, content) in &r.files {
        let on_disk = w.path(path);
        std::fs::create_dir_all(on_disk.parent().unwrap()).unwrap();
        std::fs::write(&on_disk, content).unwrap();
        jfiles.push(JournalFile {
            path: on_disk.display().to_string(),
            existed_before: false,
            sha256: pigsty_dns::digest::sha256_hex(content.as_bytes()),
        });
    }
    let j = Journal {
        format: journal::FORMAT,
        state: State::Installed,
        adapter: AdapterName::MacosResolver,
        zone: p.zones[0].clone(),
        zones: p.zones.clone(),
        reverse_zone: p.reverse.clone(),
        server: server.into(),
        variant: None,
        link: None,
        link_address: None,
        link_kind: None,
        root: w.root.path().display().to_string(),
        files: jfiles,
        created_dirs: vec![w.path("/etc/resolver").display().to_string()],
        pre_undo: r.pre_undo.clone(),
        undo: r.undo.clone(),
        written_at: "2026-01-01T00:00:00Z".into(),
    };
    journal::write(&w.jdir(), &j).unwrap();
}

#[test]
fn route_status_golden_macos_other_resolvers_and_the_old_port() {
    let mut w = W::new(mac());
    w.runner = ScriptedRunner::new().on("/usr/sbin/scutil --dns", 0, SCUTIL_VPN);
    w.runner.fallback = Some(Output::ok_with(""));
    std::fs::create_dir_all(w.path("/etc/resolver")).unwrap();
    std::fs::write(
        w.path("/etc/resolver/corp"),
        "domain pigsty.test\nnameserver 10.0.0.53\n",
    )
    .unwrap();
    w.status("status-macos-none-claimants");
    mac_installed(&w, "127.0.0.1:5353");
    w.preflight = down;
    w.status("status-macos-5353-claimants-down");
}

// ---------------------------------------------------------------- route install

#[test]
fn route_install_golden_plans() {
    // resolved-link with NetworkManager: the files exist, as the previous generation's /24 had them.
    let mut w = with_nm(W::new(linux("systemd 252 (252.39-1)"))).with_generation(META_10);
    w.install(&req(None, Some(Variant::Runtime)));
    store_generation(w.state_dir.as_ref().unwrap(), META_12);
    w.plan(
        "install-plan-link-nm-moved",
        &req(None, Some(Variant::Runtime)),
    );
    // networkd files, no dummy driver, systemd not PID 1, the mDNS port, no state dir.
    let mut f = linux("systemd 255 (255.4-1)");
    f.networkd_running = true;
    f.dummy = Driver::Missing;
    f.systemd_booted = false;
    f.notes = vec!["a note of detection".into()];
    let mut w = W::new(f);
    let mut r = req(None, None);
    r.server = "127.0.0.1:5353".parse().unwrap();
    w.plan("install-plan-networkd-ifb-5353", &r);
    // resolved-global, asked for.
    let mut w = W::new(linux("systemd 262 (262.1-1)")).with_generation(META_10);
    w.plan(
        "install-plan-global",
        &req(Some(AdapterName::ResolvedGlobal), None),
    );
    // A file that is not ours where the delegate goes, and a journaled file no longer routed.
    let mut w = W::new(linux("systemd 262 (262.1-1)"));
    w.install(&req(Some(AdapterName::NmDnsmasq), None));
    let stale = w.path("/etc/NetworkManager/dnsmasq.d/pigsty-dns.conf");
    w.edit_journal(|j| j.adapter = AdapterName::ResolvedDelegate);
    let foreign = w.path("/etc/systemd/dns-delegate.d/pigsty-dns.dns-delegate");
    std::fs::create_dir_all(foreign.parent().unwrap()).unwrap();
    std::fs::write(&foreign, "[Delegate]\nDNS=10.0.0.1\n").unwrap();
    w.plan("install-plan-delegate-not-ours-stale", &req(None, None));
    assert!(stale.exists());
    // macOS: another resolver file and a VPN claim the zone; both zones routed.
    let mut w = W::new(mac()).with_generation(META_10);
    w.runner = ScriptedRunner::new().on("/usr/sbin/scutil --dns", 0, SCUTIL_VPN);
    std::fs::create_dir_all(w.path("/etc/resolver")).unwrap();
    std::fs::write(
        w.path("/etc/resolver/corp"),
        "domain pigsty.test\nnameserver 10.0.0.53\n",
    )
    .unwrap();
    w.plan("install-plan-macos-claimants", &req(None, None));
}

#[test]
fn route_install_golden_installed_and_refusals() {
    let mut w = W::new(linux("systemd 262 (262.1-1)")).with_generation(META_10);
    w.check("install-delegate-installed", |c| {
        route::install(c, &req(None, None), false, true)
    });
    let mut out = String::new();
    let mut refuse = |w: &mut W, what: &str, r: &Request| {
        let e = w.ctx_do(|c| route::install(c, r, false, true)).unwrap_err();
        out.push_str(&format!("== {what}\n{}", w.refusal(&e)));
    };
    // Another route is in place.
    refuse(
        &mut w,
        "another route installed",
        &req(Some(AdapterName::ResolvedGlobal), None),
    );
    // Not root.
    let mut f = linux("systemd 262 (262.1-1)");
    f.is_root = false;
    refuse(&mut W::new(f), "not root", &req(None, None));
    // A file not ours.
    let mut n = W::new(linux("systemd 262 (262.1-1)"));
    let foreign = n.path("/etc/systemd/dns-delegate.d/pigsty-dns.dns-delegate");
    std::fs::create_dir_all(foreign.parent().unwrap()).unwrap();
    std::fs::write(&foreign, "[Delegate]\nDNS=10.0.0.1\n").unwrap();
    refuse(&mut n, "not ours", &req(None, None));
    // The daemon does not answer.
    let mut d = W::new(linux("systemd 262 (262.1-1)"));
    d.preflight = down;
    refuse(&mut d, "preflight", &req(None, None));
    // Verification fails: undone.
    let mut v = W::new(linux("systemd 252 (252.39-1)"));
    v.runner = runner(&[], LINK_NO_SCOPE);
    refuse(&mut v, "verification", &req(None, Some(Variant::Runtime)));
    // macOS: another resolver, then no status file of the daemon.
    let mut m = W::new(mac());
    m.runner = ScriptedRunner::new().on("/usr/sbin/scutil --dns", 0, SCUTIL_VPN);
    refuse(&mut m, "macos claimant", &req(None, None));
    let mut m = W::new(mac());
    m.runner = ScriptedRunner::new().on("/usr/sbin/scutil --dns", 0, "DNS configuration\n");
    refuse(&mut m, "macos no status file", &req(None, None));
    // NSS never reaches resolve or dns (issue 23).
    let mut s = W::new(linux("systemd 262 (262.1-1)"));
    std::fs::write(s.path("/etc/nsswitch.conf"), "hosts: files myhostname\n").unwrap();
    refuse(&mut s, "nss unsupported", &req(None, None));
    // Bad requests.
    let mut b = W::new(linux("systemd 252 (252.39-1)"));
    let mut r = req(None, None);
    r.link = "a-link-name-far-too-long".into();
    refuse(&mut b, "bad link name", &r);
    let mut r = req(None, None);
    r.link_address = "198.18.53.53/40".into();
    refuse(&mut b, "bad link address", &r);
    b.runner = runner(
        &[(
            "ip -o -4 addr show",
            "2: eth0    inet 198.18.53.53/32 scope global eth0\n",
        )],
        LINK_OK,
    );
    refuse(&mut b, "address in use", &req(None, None));
    let mut r = req(None, None);
    r.server = "127.0.0.53:53".parse().unwrap();
    refuse(&mut b, "stub server", &r);
    let mut u = W::new(linux("systemd 249 (249.11-0ubuntu3)"));
    refuse(&mut u, "unsupported", &req(None, None));
    let mut m = W::new(mac());
    let mut r = req(None, None);
    r.server = "127.0.0.1:5353".parse().unwrap();
    refuse(&mut m, "macos 5353", &r);
    golden("install-refusals.txt", &out);
}

// ---------------------------------------------------------------- route uninstall

#[test]
fn route_uninstall_golden_plans_and_results() {
    let mut w = with_nm(W::new(linux("systemd 252 (252.39-1)"))).with_generation(META_10);
    w.install(&req(None, Some(Variant::Runtime)));
    w.uninstall_plan("uninstall-plan-journal-link-nm");
    std::fs::remove_dir_all(w.jdir()).unwrap();
    w.uninstall_plan("uninstall-plan-markers-link-nm");
    let mut e = W::new(linux("systemd 252 (252.39-1)"));
    e.uninstall_plan("uninstall-plan-nothing");
    // macOS, from the journal, with a stale temporary file beside the resolver file.
    let mut m = W::new(mac());
    mac_installed(&m, SERVER);
    std::fs::write(
        m.path("/etc/resolver/.pigsty.test.pigsty-dns-tmp.12"),
        format!("{}\npartial", files::MARKER),
    )
    .unwrap();
    m.uninstall_plan("uninstall-plan-macos");
    // Done: the delegate goes; an edited file stays, and the result is partial.
    let mut d = W::new(linux("systemd 262 (262.1-1)")).with_generation(META_10);
    d.install(&req(None, None));
    let kept = d.path("/etc/systemd/dns-delegate.d/pigsty-dns.dns-delegate");
    let before = std::fs::read_to_string(&kept).unwrap();
    std::fs::write(&kept, format!("{before}# my edit\n")).unwrap();
    let e = d.ctx_do(|c| route::uninstall(c, false, true)).unwrap_err();
    golden("uninstall-partial.txt", &d.refusal(&e));
    std::fs::write(&kept, before).unwrap();
    d.runner = ScriptedRunner::new().on("resolvectl --no-pager status", 0, "Global\n");
    d.runner.fallback = Some(Output::ok_with(""));
    d.check("uninstall-delegate", |c| route::uninstall(c, false, true));
}
