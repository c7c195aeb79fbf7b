//! Every route adapter under a `--root` prefix with a scripted command runner: plan, safety rules,
//! apply, verify (and undo on failure), uninstall, status. Nothing here touches the real system.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::time::Duration;

use pigsty_dns::dns::name::{Zone, Zones};
use pigsty_dns::error::Class;
use pigsty_dns::route::adapter::{AdapterName, LinkKind, Variant};
use pigsty_dns::route::detect::{Driver, Facts};
use pigsty_dns::route::plan::{Request, choose};
use pigsty_dns::route::{self, Ctx, files, journal};
use pigsty_dns::sys::runner::{Output, ScriptedRunner};
use pigsty_dns::sys::{Os, systemd::SystemdVersion};

const SERVER: &str = "127.0.0.1:5354";

pub fn facts(version: &str) -> Facts {
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

/// The one zone most tests route.
fn zones1() -> Zones {
    Zones::parse(&["pigsty.test"]).unwrap()
}

fn ok_preflight(_: SocketAddr, _: &Zone) -> Result<u32, String> {
    Ok(7)
}
fn down_preflight(a: SocketAddr, _: &Zone) -> Result<u32, String> {
    Err(format!("no answer over UDP from {a}"))
}
fn lookup(_: SocketAddr, _: &str) -> Result<Option<Ipv4Addr>, String> {
    Ok(Some(Ipv4Addr::new(10, 10, 10, 10)))
}

const LINK_STATUS: &str = "Link 3 (pigsty-dns0)\nCurrent Scopes: DNS\n     Protocols: -DefaultRoute -LLMNR -mDNS\n   DNS Servers: 127.0.0.1:5354\n    DNS Domain: ~10.10.10.in-addr.arpa ~pigsty.test\n";
/// A link that carries the zone but not its reverse zone (a route installed before reverse zones).
const LINK_STATUS_FORWARD_ONLY: &str = "Link 3 (pigsty-dns0)\nCurrent Scopes: DNS\n     Protocols: -DefaultRoute -LLMNR -mDNS\n   DNS Servers: 127.0.0.1:5354\n    DNS Domain: ~pigsty.test\n";
const LINK_NO_SCOPE: &str = "Link 3 (pigsty-dns0)\nCurrent Scopes: none\n     Protocols: -DefaultRoute\n   DNS Servers: 127.0.0.1:5354\n    DNS Domain: ~pigsty.test\n";
const DELEGATE_STATUS: &str = "Global\nDelegate pigsty-dns\n  DNS Servers: 127.0.0.1:5354\n   DNS Domain: ~pigsty.test ~10.10.10.in-addr.arpa\n";
const SOA: &str = "pigsty.test IN SOA localhost hostmaster.pigsty.test 7 3600 900 604800 5\n";

/// A runner where every command succeeds and resolved shows a healthy route.
fn healthy() -> ScriptedRunner {
    showing(LINK_STATUS)
}

/// `healthy`, with the link's `resolvectl status` as given.
fn showing(link_status: &str) -> ScriptedRunner {
    answering(&[], link_status)
}

/// `showing`, with the commands in `first` answered as given (first match wins).
fn answering(first: &[(&str, &str)], link_status: &str) -> ScriptedRunner {
    let mut r = ScriptedRunner::new();
    for (cmd, out) in first {
        r.always(cmd, Output::ok_with(out));
    }
    r.always(
        "resolvectl --no-pager status pigsty-dns0",
        Output::ok_with(link_status),
    )
    .always(
        "resolvectl --no-pager status",
        Output::ok_with(DELEGATE_STATUS),
    )
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
    );
    r.fallback = Some(Output::ok_with(""));
    r
}

struct T {
    root: tempfile::TempDir,
    runner: ScriptedRunner,
    facts: Facts,
    preflight: fn(SocketAddr, &Zone) -> Result<u32, String>,
    lookup: fn(SocketAddr, &str) -> Result<Option<Ipv4Addr>, String>,
    terminal: Option<bool>,
    check_name: Option<String>,
    /// The daemon's state dir (outside the root), when the test gives one.
    state: tempfile::TempDir,
    state_dir: Option<std::path::PathBuf>,
}

/// Stores a generation of `yaml`'s records in `dir`, through the store (as `load` does).
pub fn store_generation(dir: &Path, yaml: &str) {
    let inv = pigsty_dns::input::inventory::parse(yaml).unwrap();
    let zone = Zone::parse("pigsty.test").unwrap();
    let set = pigsty_dns::input::records::RecordSet::build(&inv, &zone).unwrap();
    // The canonical-name rule picks the node name: what the reverse lookups must return.
    assert!(!set.ptr.is_empty(), "{:?}", set.ptr);
    let st = pigsty_dns::store::StateDir::open(dir, true).unwrap();
    st.commit(
        set,
        60,
        5,
        pigsty_dns::zone::generation::Input {
            path: "/test/host-names.yml".into(),
            sha256: pigsty_dns::digest::sha256_hex(yaml.as_bytes()),
        },
        false,
    )
    .unwrap();
}

/// The records of the README's sample: meta.pigsty.test at 10.10.10.10.
pub const META_10: &str = "all:\n  hosts:\n    10.10.10.10: { nodename: meta }\n";
/// The same host moved to another /24.
pub const META_12: &str = "all:\n  hosts:\n    10.10.12.10: { nodename: meta }\n";

/// A root that models a stock host for NSS (issue 23): Debian's `hosts:` line with nss-resolve, so
/// a route can take effect; tests of the hosts file write their own.
pub fn host_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("etc")).unwrap();
    std::fs::write(
        root.path().join("etc/nsswitch.conf"),
        "hosts:          files resolve [!UNAVAIL=return] dns myhostname\n",
    )
    .unwrap();
    root
}

impl T {
    fn new(f: Facts) -> T {
        T {
            root: host_root(),
            runner: healthy(),
            facts: f,
            preflight: ok_preflight,
            lookup,
            terminal: None,
            check_name: Some("meta.pigsty.test".into()),
            state: tempfile::tempdir().unwrap(),
            state_dir: None,
        }
    }
    /// Gives the commands the daemon's state dir, with a generation of `yaml` in it.
    fn with_generation(mut self, yaml: &str) -> T {
        let d = self.state.path().join("state");
        store_generation(&d, yaml);
        self.state_dir = Some(d);
        self
    }
    fn status(&mut self) -> String {
        self.ctx_do(|c| route::status(c).map(|r| r.render(false)))
            .unwrap()
    }
    fn root(&self) -> &Path {
        self.root.path()
    }
    fn jdir(&self) -> std::path::PathBuf {
        self.root().join("var/lib/pigsty-dns-route")
    }
    fn ctx_do<R>(&mut self, f: impl FnOnce(&mut Ctx<'_>) -> R) -> R {
        let answer = self.terminal;
        let mut ask = move |_: &str| answer.unwrap_or(false);
        let mut ctx = Ctx {
            root: self.root.path().to_path_buf(),
            journal_dir: self.root.path().join("var/lib/pigsty-dns-route"),
            runner: &mut self.runner,
            facts: self.facts.clone(),
            preflight: &self.preflight,
            lookup_a: &self.lookup,
            confirm: if answer.is_some() {
                Some(&mut ask)
            } else {
                None
            },
            settle: Duration::ZERO,
            status_wait: Duration::ZERO,
            check_name: self.check_name.clone(),
            status_file: None,
            state_dir: self.state_dir.clone(),
            out: vec![],
        };
        f(&mut ctx)
    }
    fn install(
        &mut self,
        r: &Request,
        dry: bool,
        yes: bool,
    ) -> Result<String, pigsty_dns::error::AppError> {
        self.ctx_do(|c| route::install(c, r, dry, yes).map(|r| r.render(false)))
    }
    fn uninstall(&mut self) -> Result<String, pigsty_dns::error::AppError> {
        self.ctx_do(|c| route::uninstall(c, false, true).map(|r| r.render(false)))
    }
    fn file(&self, abs: &str) -> Option<String> {
        std::fs::read_to_string(files::under(self.root(), abs)).ok()
    }
    /// Every file under the root (relative paths), to prove "nothing written".
    /// What the commands left under the root, without the host's own nsswitch.conf.
    fn tree(&self) -> Vec<String> {
        let mut t = crate::util::tree(self.root());
        t.retain(|p| p != "etc/nsswitch.conf");
        t
    }
}

// ---------------------------------------------------------------- detection → adapter

#[test]
fn version_strings_parse() {
    let v = SystemdVersion::parse("systemd 252 (252.39-1~deb12u2)\n+PAM +AUDIT").unwrap();
    assert_eq!((v.major, v.point), (252, Some(39)));
    let v = SystemdVersion::parse("systemd 262 (262.1-1)").unwrap();
    assert_eq!((v.major, v.point), (262, Some(1)));
    let v = SystemdVersion::parse("systemd 252 (252-16.el9_2)").unwrap();
    assert_eq!((v.major, v.point), (252, None));
    assert!(SystemdVersion::parse("resolvectl: command not found").is_none());
}

#[test]
fn adapter_choice_follows_the_version_table() {
    let pick = |f: &Facts| {
        choose(f, &zones1())
            .map(|(a, _)| a)
            .map_err(|e| (e.class, e.message))
    };
    assert_eq!(
        pick(&facts("systemd 262 (262.1-1)")),
        Ok(AdapterName::ResolvedDelegate)
    );
    assert_eq!(
        pick(&facts("systemd 258 (258)")),
        Ok(AdapterName::ResolvedDelegate)
    );
    assert_eq!(
        pick(&facts("systemd 257 (257.13-1)")),
        Ok(AdapterName::ResolvedLink)
    );
    assert_eq!(
        pick(&facts("systemd 252 (252.39-1~deb12u2)")),
        Ok(AdapterName::ResolvedLink)
    );
    let (a, why) = choose(&facts("systemd 252 (252-16.el9_2)"), &zones1()).unwrap();
    assert_eq!(a, AdapterName::ResolvedLink);
    assert!(why.contains("applying and verifying"), "{why}");
    for old in ["systemd 252 (252.2-1)", "systemd 249 (249.11-0ubuntu3)"] {
        let e = choose(&facts(old), &zones1()).unwrap_err();
        assert_eq!(e.class, Class::Capability, "{old}");
        assert!(e.message.starts_with("unsupported:"), "{}", e.message);
        assert!(
            e.next.contains("by hand"),
            "manual alternatives: {}",
            e.next
        );
    }
    let mut f = facts("systemd 252 (252.39-1)");
    f.resolved_running = false;
    let e = choose(&f, &zones1()).unwrap_err();
    assert!(
        e.message.contains("unsupported") && e.message.contains("not running"),
        "{}",
        e.message
    );
    f.nm_dns_mode = Some("dnsmasq".into());
    assert_eq!(pick(&f), Ok(AdapterName::NmDnsmasq));
    let mut m = facts("");
    m.os = Os::Macos;
    assert_eq!(pick(&m), Ok(AdapterName::MacosResolver));
}

// ---------------------------------------------------------------- safety rules

#[test]
fn dry_run_shows_every_file_and_command_and_writes_nothing() {
    let mut t = T::new(facts("systemd 252 (252.39-1)"));
    let out = t.install(&req(None, None), true, false).unwrap();
    assert!(out.contains("adapter resolved-link"), "{out}");
    assert!(
        out.contains("/etc/systemd/system/pigsty-dns-route.service (sha256 "),
        "{out}"
    );
    assert!(
        out.contains("| ExecStart=/usr/bin/resolvectl dns pigsty-dns0 127.0.0.1:5354"),
        "full content: {out}"
    );
    assert!(
        out.contains("run (apply now): ip addr add 198.18.53.53/32 dev pigsty-dns0"),
        "{out}"
    );
    assert!(
        out.contains("run (enable at boot): systemctl enable pigsty-dns-route.service"),
        "{out}"
    );
    assert!(out.contains("now: Absent"), "{out}");
    assert!(t.tree().is_empty(), "dry run wrote {:?}", t.tree());
    // JSON plan: content and sha256 of every file.
    let j = t
        .ctx_do(|c| route::install(c, &req(None, None), true, false).map(|r| r.render(true)))
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&j).unwrap();
    let f = &v["plan"]["files"][0];
    assert_eq!(
        f["sha256"].as_str().unwrap(),
        pigsty_dns::digest::sha256_hex(f["content"].as_str().unwrap().as_bytes())
    );
    assert_eq!(v["plan"]["adapter"], "resolved-link");
}

#[test]
fn without_root_the_plan_is_shown_and_nothing_is_written() {
    let mut f = facts("systemd 252 (252.39-1)");
    f.is_root = false;
    let mut t = T::new(f);
    let e = t.install(&req(None, None), false, true).unwrap_err();
    assert_eq!(e.class, Class::Capability);
    assert_eq!(e.class.exit_code(), 3);
    assert_eq!(e.message, "needs root: run it again with sudo");
    assert!(t.tree().is_empty());
    assert!(
        !t.runner
            .lines()
            .iter()
            .any(|l| l.starts_with("resolvectl dns")),
        "{:?}",
        t.runner.lines()
    );
}

#[test]
fn without_a_terminal_yes_is_required_and_a_no_cancels() {
    let mut t = T::new(facts("systemd 252 (252.39-1)"));
    let e = t.install(&req(None, None), false, false).unwrap_err();
    assert_eq!(e.class, Class::Usage, "{e:?}");
    assert!(e.message.contains("--yes"));
    assert!(t.tree().is_empty());
    t.terminal = Some(false);
    let e = t.install(&req(None, None), false, false).unwrap_err();
    assert_eq!(e.class, Class::Cancelled);
    assert!(t.tree().is_empty());
    t.terminal = Some(true);
    t.install(&req(None, None), false, false).unwrap();
    assert!(
        t.file("/etc/systemd/system/pigsty-dns-route.service")
            .is_some()
    );
}

#[test]
fn preflight_failure_writes_nothing() {
    let mut t = T::new(facts("systemd 252 (252.39-1)"));
    t.preflight = down_preflight;
    let e = t.install(&req(None, None), false, true).unwrap_err();
    assert!(e.message.starts_with("preflight:"), "{}", e.message);
    assert!(
        e.next.contains("pigsty-dns serve --listen 127.0.0.1:5354"),
        "{}",
        e.next
    );
    assert!(t.tree().is_empty(), "{:?}", t.tree());
    assert!(
        !t.runner
            .lines()
            .iter()
            .any(|l| l.starts_with("ip link add"))
    );
}

#[test]
fn never_writes_over_a_file_it_does_not_own() {
    let mut t = T::new(facts("systemd 262 (262.1-1)"));
    let p = files::under(
        t.root(),
        "/etc/systemd/dns-delegate.d/pigsty-dns.dns-delegate",
    );
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, "[Delegate]\nDNS=10.0.0.1\n").unwrap();
    let e = t.install(&req(None, None), false, true).unwrap_err();
    assert_eq!(e.class, Class::Conflict, "{e:?}");
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        "[Delegate]\nDNS=10.0.0.1\n"
    );
    assert!(!t.jdir().exists());
}

#[test]
fn server_must_be_loopback_and_link_address_not_link_local() {
    let mut t = T::new(facts("systemd 252 (252.39-1)"));
    let mut r = req(None, None);
    r.server = "192.0.2.1:5354".parse().unwrap();
    assert_eq!(t.install(&r, true, false).unwrap_err().class, Class::Usage);
    let mut r = req(None, None);
    r.link_address = "169.254.53.53/32".into();
    let e = t.install(&r, true, false).unwrap_err();
    assert!(e.message.contains("link-local"), "{}", e.message);
}

#[test]
fn an_address_already_in_use_is_refused() {
    let mut t = T::new(facts("systemd 252 (252.39-1)"));
    t.runner.reset();
    t.runner.always(
        "ip -o -4 addr show",
        Output::ok_with("2: eth0    inet 198.18.53.53/32 scope global eth0\n"),
    );
    let e = t.install(&req(None, None), true, false).unwrap_err();
    assert_eq!(e.class, Class::Conflict);
    assert!(e.message.contains("eth0"), "{}", e.message);
}

// ---------------------------------------------------------------- adapters: install, journal, uninstall

fn assert_owned(content: &str, adapter: &str) {
    let o = files::owned(content).unwrap_or_else(|| panic!("no marker: {content}"));
    assert_eq!(o.adapter, adapter);
    assert!(o.intact);
    assert!(
        content.starts_with(files::MARKER),
        "marker on the first line"
    );
}

fn install_then_uninstall(t: &mut T, r: &Request, path: &str, adapter: &str) -> String {
    let out = t.install(r, false, true).unwrap();
    assert!(out.starts_with("installed:"), "{out}");
    let content = t
        .file(path)
        .unwrap_or_else(|| panic!("{path} not written; tree {:?}", t.tree()));
    assert_owned(&content, adapter);
    let j = journal::read(&t.jdir()).unwrap().expect("journal");
    assert_eq!(j.format, journal::FORMAT);
    assert_eq!(j.state, "installed");
    assert_eq!(j.adapter, adapter);
    assert_eq!(j.server, SERVER);
    let jf = j
        .files
        .iter()
        .find(|f| f.path.ends_with(path))
        .expect("file in journal");
    assert!(!jf.existed_before);
    assert_eq!(
        jf.sha256,
        pigsty_dns::digest::sha256_hex(content.as_bytes())
    );
    // Idempotent: a second install changes nothing on disk.
    let before = t.tree();
    t.install(r, false, true).unwrap();
    assert_eq!(t.tree(), before);
    assert_eq!(t.file(path).unwrap(), content);
    // Uninstall: the route must then look gone.
    t.runner.reset();
    t.runner.always(
        "resolvectl --no-pager status",
        Output::fail(1, "Failed to resolve interface \"pigsty-dns0\""),
    );
    t.runner.fallback = Some(Output::ok_with(""));
    let out = t.uninstall().unwrap();
    assert!(out.starts_with("uninstalled"), "{out}");
    assert!(t.tree().is_empty(), "left behind: {:?}", t.tree());
    // Twice is harmless.
    let again = t.uninstall().unwrap();
    assert!(again.contains("nothing to uninstall"), "{again}");
    content
}

#[test]
fn resolved_link_networkd_variant() {
    let mut f = facts("systemd 252 (252.39-1~deb12u2)");
    f.networkd_running = true;
    let mut t = T::new(f);
    let netdev = "/etc/systemd/network/50-pigsty-dns0.netdev";
    let content = install_then_uninstall(
        &mut t,
        &req(None, None),
        "/etc/systemd/network/50-pigsty-dns0.network",
        "resolved-link",
    );
    for want in [
        "Address=198.18.53.53/32",
        "DNS=127.0.0.1:5354",
        "Domains=~pigsty.test",
        "DNSDefaultRoute=no",
        "LLMNR=no",
        "MulticastDNS=no",
        "LinkLocalAddressing=no",
    ] {
        assert!(content.contains(want), "{want} in {content}");
    }
    let calls = t.runner.lines();
    assert!(
        calls.contains(&"networkctl reload".to_string()),
        "{calls:?}"
    );
    assert!(
        calls.contains(&"ip link del pigsty-dns0".to_string()),
        "uninstall deletes the link: {calls:?}"
    );
    assert!(
        !calls.iter().any(|c| c.starts_with("systemctl enable")),
        "networkd needs no unit: {calls:?}"
    );
    assert!(t.file(netdev).is_none());
}

#[test]
fn resolved_link_networkd_files_carry_kind_and_link() {
    let mut f = facts("systemd 252 (252.39-1~deb12u2)");
    f.networkd_running = true;
    f.dummy = Driver::Missing;
    let mut t = T::new(f);
    t.install(&req(None, None), false, true).unwrap();
    let netdev = t
        .file("/etc/systemd/network/50-pigsty-dns0.netdev")
        .unwrap();
    assert!(
        netdev.contains("Name=pigsty-dns0\nKind=ifb\n"),
        "ifb fallback when dummy is missing: {netdev}"
    );
    let j = journal::read(&t.jdir()).unwrap().unwrap();
    assert_eq!(j.link_kind.map(LinkKind::as_str), Some("ifb"));
    assert_eq!(j.link_address.as_deref(), Some("198.18.53.53/32"));
    assert_eq!(j.variant.map(Variant::as_str), Some("networkd"));
}

#[test]
fn resolved_link_runtime_variant_and_its_boot_unit() {
    let mut t = T::new(facts("systemd 252 (252.39-1~deb12u2)"));
    let unit = install_then_uninstall(
        &mut t,
        &req(None, Some(Variant::Runtime)),
        "/etc/systemd/system/pigsty-dns-route.service",
        "resolved-link",
    );
    // The unit runs only fixed, root-owned system programs.
    for line in unit.lines().filter(|l| l.starts_with("Exec")) {
        let cmd = line.split_once('=').unwrap().1.trim_start_matches('-');
        let prog = cmd.split_whitespace().next().unwrap();
        assert!(
            ["/usr/sbin/ip", "/usr/bin/resolvectl"].contains(&prog),
            "{line}"
        );
    }
    assert!(
        !unit.contains("pigsty-dns route") || !unit.contains("ExecStart=/usr/local"),
        "{unit}"
    );
    assert!(
        unit.contains("PartOf=systemd-resolved.service")
            && unit.contains("WantedBy=systemd-resolved.service")
            && unit.contains("\nBefore=nss-lookup.target\nWants=nss-lookup.target\n"),
        "{unit}"
    );
    let calls = t.runner.lines();
    let pos = |c: &str| {
        calls
            .iter()
            .position(|l| l == c)
            .unwrap_or_else(|| panic!("{c} not run: {calls:?}"))
    };
    // Apply now is its own step, before enabling at boot.
    assert!(
        pos("ip addr add 198.18.53.53/32 dev pigsty-dns0")
            < pos("resolvectl dns pigsty-dns0 127.0.0.1:5354")
    );
    assert!(
        pos("resolvectl default-route pigsty-dns0 no")
            < pos("systemctl enable pigsty-dns-route.service")
    );
    assert!(pos("systemctl enable pigsty-dns-route.service") < pos("resolvectl flush-caches"));
    assert!(calls.contains(&"systemctl disable pigsty-dns-route.service".to_string()));
}

#[test]
fn runtime_variant_without_systemd_as_pid1_applies_but_does_not_enable() {
    let mut f = facts("systemd 252 (252.39-1~deb12u2)");
    f.systemd_booted = false;
    let mut t = T::new(f);
    t.install(&req(None, Some(Variant::Runtime)), false, true)
        .unwrap();
    let calls = t.runner.lines();
    assert!(calls.contains(&"resolvectl dns pigsty-dns0 127.0.0.1:5354".to_string()));
    assert!(
        !calls.iter().any(|c| c.starts_with("systemctl")),
        "{calls:?}"
    );
    assert!(
        t.file("/etc/systemd/system/pigsty-dns-route.service")
            .is_some(),
        "the unit is still written"
    );
}

#[test]
fn resolved_delegate() {
    let mut t = T::new(facts("systemd 262 (262.1-1)"));
    let c = install_then_uninstall(
        &mut t,
        &req(None, None),
        "/etc/systemd/dns-delegate.d/pigsty-dns.dns-delegate",
        "resolved-delegate",
    );
    assert!(
        c.ends_with("[Delegate]\nDNS=127.0.0.1:5354\nDomains=~pigsty.test\nDefaultRoute=no\n"),
        "{c}"
    );
    assert!(
        t.runner
            .lines()
            .contains(&"systemctl reload systemd-resolved.service".to_string())
    );
}

/// Seen live (tests/lab/delegate-lab.sh, a kernel without the dummy driver): the delegate plan said
/// "using an ifb link instead" although the delegate adapter creates no link at all.
#[test]
fn a_missing_dummy_driver_is_only_mentioned_for_the_link_adapter() {
    let mut f = facts("systemd 262 (262.1-1)");
    f.dummy = Driver::Missing;
    let mut t = T::new(f.clone());
    let out = t.install(&req(None, None), true, false).unwrap();
    assert!(out.contains("adapter resolved-delegate"), "{out}");
    assert!(
        !out.contains("ifb"),
        "the delegate plan mentions a link: {out}"
    );
    let mut t = T::new(f);
    let out = t
        .install(&req(Some(AdapterName::ResolvedLink), None), true, false)
        .unwrap();
    assert!(out.contains("using an ifb link instead"), "{out}");
}

#[test]
fn nm_dnsmasq() {
    let mut f = facts("");
    f.resolved_running = false;
    f.nm_dns_mode = Some("dnsmasq".into());
    let mut t = T::new(f);
    let c = install_then_uninstall(
        &mut t,
        &req(None, None),
        "/etc/NetworkManager/dnsmasq.d/pigsty-dns.conf",
        "nm-dnsmasq",
    );
    assert!(c.ends_with("\nserver=/pigsty.test/127.0.0.1#5354\n"), "{c}");
    assert!(
        t.runner
            .lines()
            .contains(&"nmcli general reload dns-full".to_string())
    );
}

// macos-resolver: tests/route_macos.rs (a scripted configd, mDNSResponder and daemon).

#[test]
fn resolved_global_only_when_asked_and_with_a_warning() {
    let mut t = T::new(facts("systemd 252 (252.39-1)"));
    t.runner.always(
        "resolvectl --no-pager status",
        Output::ok_with("Global\n DNS Servers: 127.0.0.1:5354\n"),
    );
    let out = t
        .install(&req(Some(AdapterName::ResolvedGlobal), None), true, false)
        .unwrap();
    assert!(out.contains("WARNING: resolved-global"), "{out}");
    assert!(
        out.contains("/etc/systemd/resolved.conf.d/pigsty-dns.conf"),
        "{out}"
    );
    // Never chosen by detection.
    for v in [
        "systemd 262 (262.1)",
        "systemd 252 (252.39-1)",
        "systemd 255 (255.4)",
    ] {
        assert_ne!(
            choose(&facts(v), &zones1()).unwrap().0,
            AdapterName::ResolvedGlobal
        );
    }
}

#[test]
fn unsupported_exits_3_and_writes_nothing() {
    let mut t = T::new(facts("systemd 249 (249.11-0ubuntu3.12)"));
    let e = t.install(&req(None, None), false, true).unwrap_err();
    assert_eq!(e.class.exit_code(), 3);
    assert!(
        e.message.contains("unsupported") && e.message.contains("249"),
        "{}",
        e.message
    );
    assert!(t.tree().is_empty());
}

// ---------------------------------------------------------------- verification failure, drift

#[test]
fn a_link_without_dns_scope_fails_verification_and_is_undone() {
    let mut t = T::new(facts("systemd 252 (252.39-1)"));
    t.runner.reset();
    t.runner.always(
        "resolvectl --no-pager status pigsty-dns0",
        Output::ok_with(LINK_NO_SCOPE),
    );
    t.runner.always("ip -o -4 addr show", Output::ok_with(""));
    t.runner.fallback = Some(Output::ok_with(""));
    let e = t.install(&req(None, None), false, true).unwrap_err();
    assert_eq!(e.class, Class::Runtime);
    assert!(
        e.message.contains("no DNS scope") && e.message.contains("leak"),
        "{}",
        e.message
    );
    assert!(t.tree().is_empty(), "undone: {:?}", t.tree());
    assert!(
        t.runner
            .lines()
            .contains(&"ip link del pigsty-dns0".to_string())
    );
}

#[test]
fn wrong_answer_through_getent_fails_verification() {
    let mut t = T::new(facts("systemd 262 (262.1)"));
    t.runner.once(
        "getent ahostsv4",
        Output::ok_with("203.0.113.99  STREAM meta.pigsty.test\n"),
    );
    let e = t.install(&req(None, None), false, true).unwrap_err();
    assert!(e.message.contains("getent"), "{}", e.message);
    assert!(t.tree().is_empty(), "{:?}", t.tree());
}

#[test]
fn a_changed_file_is_left_alone_and_uninstall_is_partial() {
    let mut t = T::new(facts("systemd 262 (262.1)"));
    t.install(&req(None, None), false, true).unwrap();
    let p = files::under(
        t.root(),
        "/etc/systemd/dns-delegate.d/pigsty-dns.dns-delegate",
    );
    let mut c = std::fs::read_to_string(&p).unwrap();
    c.push_str("# my edit\n");
    std::fs::write(&p, &c).unwrap();
    let e = t.uninstall().unwrap_err();
    assert_eq!(e.class, Class::Partial);
    assert_eq!(e.class.exit_code(), 5);
    assert!(
        e.message.starts_with("partial:") && e.message.contains("changed"),
        "{}",
        e.message
    );
    assert_eq!(std::fs::read_to_string(&p).unwrap(), c);
    assert!(journal::read(&t.jdir()).unwrap().is_some(), "journal kept");
}

#[test]
fn without_a_journal_uninstall_finds_its_files_by_marker() {
    let mut f = facts("systemd 252 (252.39-1)");
    f.networkd_running = true;
    let mut t = T::new(f);
    t.install(&req(None, None), false, true).unwrap();
    std::fs::remove_dir_all(t.jdir()).unwrap();
    // One of the two files was edited: that one stays.
    let edited = files::under(t.root(), "/etc/systemd/network/50-pigsty-dns0.network");
    let mut c = std::fs::read_to_string(&edited).unwrap();
    c = c.replace("DNS=127.0.0.1:5354", "DNS=127.0.0.1:9999");
    std::fs::write(&edited, &c).unwrap();
    // A foreign file in the same directory is never touched.
    let foreign = files::under(t.root(), "/etc/systemd/network/10-eth0.network");
    std::fs::write(&foreign, "[Match]\nName=eth0\n").unwrap();
    t.runner.reset();
    t.runner.always(
        "resolvectl --no-pager status",
        Output::fail(1, "no such link"),
    );
    t.runner.fallback = Some(Output::ok_with(""));
    let _ = t.uninstall();
    assert!(
        t.file("/etc/systemd/network/50-pigsty-dns0.netdev")
            .is_none(),
        "intact file removed"
    );
    assert_eq!(
        std::fs::read_to_string(&edited).unwrap(),
        c,
        "edited file kept"
    );
    assert!(foreign.exists());
    assert!(
        t.runner
            .lines()
            .contains(&"ip link del pigsty-dns0".to_string())
    );
}

#[test]
fn status_reports_the_leaking_no_scope_state() {
    let mut t = T::new(facts("systemd 252 (252.39-1)"));
    let none = t
        .ctx_do(|c| route::status(c).map(|r| r.render(true)))
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&none).unwrap();
    assert_eq!(v["installed"], false, "{none}");
    t.install(&req(None, None), false, true).unwrap();
    let ok = t
        .ctx_do(|c| route::status(c).map(|r| r.render(true)))
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&ok).unwrap();
    assert_eq!(v["ok"], true, "{ok}");
    // `service uninstall` reads these two to order the teardown.
    assert_eq!(v["installed"], true, "{ok}");
    assert_eq!(v["adapter"], "resolved-link", "{ok}");
    t.runner.reset();
    t.runner.always(
        "resolvectl --no-pager status pigsty-dns0",
        Output::ok_with(LINK_NO_SCOPE),
    );
    t.runner.fallback = Some(Output::ok_with(""));
    let text = t
        .ctx_do(|c| route::status(c).map(|r| r.render(false)))
        .unwrap();
    assert!(
        text.contains("FAIL scope: link pigsty-dns0 has no DNS scope"),
        "{text}"
    );
    assert!(text.contains("leak"), "{text}");
    assert!(text.contains("next:"), "{text}");
    // Drift.
    let p = files::under(t.root(), "/etc/systemd/system/pigsty-dns-route.service");
    std::fs::write(&p, "changed").unwrap();
    let text = t
        .ctx_do(|c| route::status(c).map(|r| r.render(false)))
        .unwrap();
    assert!(text.contains("FAIL drift"), "{text}");
    // Daemon down.
    t.preflight = down_preflight;
    let text = t
        .ctx_do(|c| route::status(c).map(|r| r.render(false)))
        .unwrap();
    assert!(text.contains("FAIL daemon"), "{text}");
}

#[test]
fn journal_dir_default_is_its_own_root_owned_place() {
    assert_eq!(journal::default_dir(Os::Linux), "/var/lib/pigsty-dns-route");
    assert_eq!(
        journal::default_dir(Os::Macos),
        "/Library/Application Support/pigsty-dns-route"
    );
    let _ = LinkKind::Dummy;
}

// ---------------------------------------------------------------- the reverse zone

/// Installs `adapter` against a state dir whose live generation is META_10 and returns the file.
fn install_with_reverse(adapter: AdapterName, variant: Option<Variant>, path: &str) -> (T, String) {
    let mut t = T::new(facts("systemd 262 (262.1-1)")).with_generation(META_10);
    if adapter == AdapterName::NmDnsmasq {
        t.facts.nm_dns_mode = Some("dnsmasq".into());
    }
    let out = t
        .install(&req(Some(adapter), variant), false, true)
        .unwrap();
    assert!(
        out.starts_with(&format!(
            "installed: {adapter} routes pigsty.test and 10.10.10.in-addr.arpa to {SERVER}"
        )),
        "{out}"
    );
    let j = journal::read(&t.jdir()).unwrap().unwrap();
    assert_eq!(j.reverse_zone.as_deref(), Some("10.10.10.in-addr.arpa"));
    let content = t
        .file(path)
        .unwrap_or_else(|| panic!("{path}: {:?}", t.tree()));
    (t, content)
}

#[test]
fn every_linux_adapter_routes_the_reverse_zone_beside_the_zone() {
    let both = "Domains=~pigsty.test ~10.10.10.in-addr.arpa\n";
    let (_, c) = install_with_reverse(
        AdapterName::ResolvedDelegate,
        None,
        "/etc/systemd/dns-delegate.d/pigsty-dns.dns-delegate",
    );
    assert!(c.contains(both), "{c}");
    let (_, c) = install_with_reverse(
        AdapterName::ResolvedGlobal,
        None,
        "/etc/systemd/resolved.conf.d/pigsty-dns.conf",
    );
    assert!(c.contains(both), "{c}");
    let (_, c) = install_with_reverse(
        AdapterName::ResolvedLink,
        Some(Variant::Networkd),
        "/etc/systemd/network/50-pigsty-dns0.network",
    );
    assert!(c.contains(both), "{c}");
    let (t, c) = install_with_reverse(
        AdapterName::ResolvedLink,
        Some(Variant::Runtime),
        "/etc/systemd/system/pigsty-dns-route.service",
    );
    let domain = "resolvectl domain pigsty-dns0 ~pigsty.test ~10.10.10.in-addr.arpa";
    assert!(c.contains(&format!("ExecStart=/usr/bin/{domain}\n")), "{c}");
    assert!(
        t.runner.lines().iter().any(|l| l == domain),
        "{:?}",
        t.runner.lines()
    );
    let (_, c) = install_with_reverse(
        AdapterName::NmDnsmasq,
        None,
        "/etc/NetworkManager/dnsmasq.d/pigsty-dns.conf",
    );
    assert!(
        c.ends_with(
            "server=/pigsty.test/127.0.0.1#5354\nserver=/10.10.10.in-addr.arpa/127.0.0.1#5354\n"
        ),
        "{c}"
    );
}

#[test]
fn install_verifies_the_reverse_lookups_through_resolved_and_nss() {
    let (t, _) = install_with_reverse(
        AdapterName::ResolvedDelegate,
        None,
        "/etc/systemd/dns-delegate.d/pigsty-dns.dns-delegate",
    );
    let lines = t.runner.lines();
    for want in [
        "resolvectl --cache=no query 10.10.10.10",
        "getent hosts 10.10.10.10",
    ] {
        assert!(lines.iter().any(|l| l == want), "{want}: {lines:?}");
    }
    // A reverse answer other than the canonical name fails the install, which is undone.
    let mut t = T::new(facts("systemd 262 (262.1-1)")).with_generation(META_10);
    t.runner = answering(
        &[(
            "getent hosts 10.10.10.10",
            "10.10.10.10     pg-meta.pigsty.test\n",
        )],
        LINK_STATUS,
    );
    let e = t
        .install(&req(Some(AdapterName::ResolvedDelegate), None), false, true)
        .unwrap_err();
    assert!(
        e.message
            .contains("getent hosts (reverse): getent hosts 10.10.10.10")
            && e.message.contains("want meta.pigsty.test"),
        "{}",
        e.message
    );
    assert!(t.tree().is_empty(), "undone: {:?}", t.tree());
}

#[test]
fn without_a_generation_only_the_zone_is_routed_and_the_plan_says_so() {
    // A state dir with nothing loaded yet (the empty zone).
    let mut t = T::new(facts("systemd 262 (262.1-1)"));
    let d = t.state.path().join("state");
    std::fs::create_dir(&d).unwrap();
    t.state_dir = Some(d);
    let plan = t.install(&req(None, None), true, false).unwrap();
    assert!(plan.contains("  zone pigsty.test -> server"), "{plan}");
    assert!(
        plan.contains("note: routing only pigsty.test: no generation with addresses")
            && plan.contains("run route install again after the first load"),
        "{plan}"
    );
    let out = t.install(&req(None, None), false, true).unwrap();
    assert!(out.contains("note: routing only pigsty.test"), "{out}");
    let c = t
        .file("/etc/systemd/dns-delegate.d/pigsty-dns.dns-delegate")
        .unwrap();
    assert!(c.contains("Domains=~pigsty.test\n"), "{c}");
    assert_eq!(
        journal::read(&t.jdir()).unwrap().unwrap().reverse_zone,
        None
    );
    // No state dir at all: the same, and the note names --state-dir.
    let mut t = T::new(facts("systemd 262 (262.1-1)"));
    let plan = t.install(&req(None, None), true, false).unwrap();
    assert!(plan.contains("give --state-dir DIR"), "{plan}");
}

#[test]
fn a_moved_24_is_drift_and_install_re_routes_it() {
    let mut t = T::new(facts("systemd 252 (252.39-1)")).with_generation(META_10);
    let r = req(None, Some(Variant::Runtime));
    t.install(&r, false, true).unwrap();
    let text = t.status();
    assert!(
        text.contains(
            "ok   reverse zone: routes 10.10.10.in-addr.arpa, the /24 of the live generation"
        ),
        "{text}"
    );
    assert!(!text.contains("FAIL"), "{text}");
    // A later generation moves to 10.10.12.0/24.
    store_generation(t.state_dir.as_ref().unwrap(), META_12);
    let text = t.status();
    let sd = t.state_dir.clone().unwrap();
    let fix = format!(
        "sudo pigsty-dns route install --adapter resolved-link --server {SERVER} --zone pigsty.test --link-variant runtime \
         --link pigsty-dns0 --link-address 198.18.53.53/32 --link-kind dummy --root {} --state-dir {} --yes",
        t.root().display(),
        sd.display()
    );
    assert!(
        text.contains(
            "FAIL reverse zone: drift: the route carries 10.10.10.in-addr.arpa, but the live generation's addresses moved to 12.10.10.in-addr.arpa"
        ),
        "{text}"
    );
    assert!(text.contains(&format!("next: {fix}")), "{text}");
    // The daemon serves the moved records: the reverse lookup of the check name's address is not
    // made through a route that does not carry its /24, and fails as the drift it is.
    t.lookup = |_, _| Ok(Some(Ipv4Addr::new(10, 10, 12, 10)));
    let text = t.status();
    assert!(
        text.contains("FAIL lookup: canonical name: not checked: 10.10.12.10 is outside the routed reverse zone 10.10.10.in-addr.arpa"),
        "{text}"
    );
    // That command (install again) re-routes: the unit and the live domains carry the new /24.
    let moved = "Link 3 (pigsty-dns0)\nCurrent Scopes: DNS\n     Protocols: -DefaultRoute\n   DNS Servers: 127.0.0.1:5354\n    DNS Domain: ~pigsty.test ~12.10.10.in-addr.arpa\n";
    // Without --check-name the first served name (meta, now at 10.10.12.10) is checked by default
    // (issue 23): the native path answers the moved set.
    t.runner = answering(
        &[
            (
                "resolvectl --cache=no query -4",
                "meta.pigsty.test: 10.10.12.10    -- link: pigsty-dns0\n",
            ),
            (
                "getent ahostsv4",
                "10.10.12.10     STREAM meta.pigsty.test\n",
            ),
            (
                "resolvectl --cache=no query 10.10.12.10",
                "10.10.12.10: meta.pigsty.test    -- link: pigsty-dns0\n",
            ),
            (
                "getent hosts 10.10.12.10",
                "10.10.12.10     meta.pigsty.test\n",
            ),
        ],
        moved,
    );
    t.check_name = None;
    let out = t.install(&r, false, true).unwrap();
    assert!(out.contains("and 12.10.10.in-addr.arpa"), "{out}");
    let unit = t
        .file("/etc/systemd/system/pigsty-dns-route.service")
        .unwrap();
    assert!(
        unit.contains("domain pigsty-dns0 ~pigsty.test ~12.10.10.in-addr.arpa\n")
            && !unit.contains("10.10.10.in-addr.arpa"),
        "{unit}"
    );
    assert!(
        t.runner
            .lines()
            .iter()
            .any(|l| l == "resolvectl domain pigsty-dns0 ~pigsty.test ~12.10.10.in-addr.arpa"),
        "{:?}",
        t.runner.lines()
    );
    let j = journal::read(&t.jdir()).unwrap().unwrap();
    assert_eq!(j.reverse_zone.as_deref(), Some("12.10.10.in-addr.arpa"));
    let text = t.status();
    assert!(!text.contains("FAIL"), "{text}");
    // Idempotent: once more changes nothing on disk.
    let before = t.tree();
    t.install(&r, false, true).unwrap();
    assert_eq!(t.tree(), before);
}

/// What `route install` of resolved-delegate wrote before reverse zones were routed: the file and
/// its journal (no `reverse_zone`), byte for byte.
const OLD_DELEGATE: &str =
    "[Delegate]\nDNS=127.0.0.1:5354\nDomains=~pigsty.test\nDefaultRoute=no\n";

fn old_journal(t: &T, path: &str, content: &str) -> String {
    let p = files::under(t.root(), path);
    format!(
        r#"{{
  "format": 1,
  "state": "installed",
  "adapter": "resolved-delegate",
  "zone": "pigsty.test",
  "server": "127.0.0.1:5354",
  "variant": null,
  "link": null,
  "link_address": null,
  "link_kind": null,
  "root": "{}",
  "files": [
    {{
      "path": "{}",
      "existed_before": false,
      "sha256": "{}"
    }}
  ],
  "created_dirs": [
    "{}"
  ],
  "pre_undo": [],
  "undo": [
    {{
      "argv": ["systemctl", "reload", "systemd-resolved.service"],
      "why": "resolved re-reads dns-delegate.d on reload (SIGHUP)",
      "may_fail": false
    }}
  ],
  "written_at": "2026-01-01T00:00:00Z"
}}
"#,
        t.root().display(),
        p.display(),
        pigsty_dns::digest::sha256_hex(content.as_bytes()),
        p.parent().unwrap().display()
    )
}

/// Puts an old install (file + journal) in place.
fn old_install(t: &T) -> String {
    let path = "/etc/systemd/dns-delegate.d/pigsty-dns.dns-delegate";
    let content = files::wrap("resolved-delegate", None, OLD_DELEGATE);
    let p = files::under(t.root(), path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, &content).unwrap();
    std::fs::create_dir_all(t.jdir()).unwrap();
    std::fs::write(
        t.jdir().join("journal.json"),
        old_journal(t, path, &content),
    )
    .unwrap();
    content
}

#[test]
fn an_install_journaled_before_reverse_zones_uninstalls_exactly() {
    let mut t = T::new(facts("systemd 262 (262.1-1)")).with_generation(META_10);
    old_install(&t);
    // Status reads it, and calls the missing reverse zone drift with the one command that fixes it.
    let text = t.status();
    assert!(
        text.contains(
            "FAIL reverse zone: drift: the route carries only pigsty.test, but the live generation's addresses are in 10.10.10.in-addr.arpa"
        ),
        "{text}"
    );
    assert!(
        text.contains("next: sudo pigsty-dns route install --adapter resolved-delegate --server 127.0.0.1:5354"),
        "{text}"
    );
    t.runner.reset();
    t.runner
        .always("resolvectl --no-pager status", Output::ok_with("Global\n"));
    t.runner.fallback = Some(Output::ok_with(""));
    let out = t.uninstall().unwrap();
    assert!(out.starts_with("uninstalled"), "{out}");
    assert!(t.tree().is_empty(), "left behind: {:?}", t.tree());
    assert!(
        t.runner
            .lines()
            .contains(&"systemctl reload systemd-resolved.service".to_string()),
        "{:?}",
        t.runner.lines()
    );
}

#[test]
fn re_running_install_upgrades_an_old_install_to_both_zones() {
    let mut t = T::new(facts("systemd 262 (262.1-1)")).with_generation(META_10);
    let old = old_install(&t);
    let path = "/etc/systemd/dns-delegate.d/pigsty-dns.dns-delegate";
    let plan = t.install(&req(None, None), true, false).unwrap();
    assert!(plan.contains("now: OursDifferent"), "{plan}");
    let out = t.install(&req(None, None), false, true).unwrap();
    assert!(out.contains("and 10.10.10.in-addr.arpa"), "{out}");
    let c = t.file(path).unwrap();
    assert_ne!(c, old);
    assert!(
        c.contains("Domains=~pigsty.test ~10.10.10.in-addr.arpa\n"),
        "{c}"
    );
    let j = journal::read(&t.jdir()).unwrap().unwrap();
    assert_eq!(j.reverse_zone.as_deref(), Some("10.10.10.in-addr.arpa"));
    // The first install's facts carry over: the file did not exist before it, its directory is its.
    assert!(!j.files[0].existed_before);
    assert_eq!(j.created_dirs.len(), 1, "{:?}", j.created_dirs);
    assert!(!t.status().contains("FAIL"), "{}", t.status());
    t.runner.reset();
    t.runner
        .always("resolvectl --no-pager status", Output::ok_with("Global\n"));
    t.runner.fallback = Some(Output::ok_with(""));
    t.uninstall().unwrap();
    assert!(t.tree().is_empty(), "left behind: {:?}", t.tree());
}

#[test]
fn the_scope_check_wants_the_reverse_domain_too() {
    let mut t = T::new(facts("systemd 252 (252.39-1)")).with_generation(META_10);
    t.runner = showing(LINK_STATUS_FORWARD_ONLY);
    let e = t
        .install(&req(None, Some(Variant::Runtime)), false, true)
        .unwrap_err();
    assert!(
        e.message.contains(
            "does not carry DNS 127.0.0.1:5354 and domain(s) ~pigsty.test ~10.10.10.in-addr.arpa"
        ),
        "{}",
        e.message
    );
    assert!(t.tree().is_empty(), "undone: {:?}", t.tree());
}

#[test]
fn a_generation_without_ptrs_routes_the_reverse_zone_and_says_its_lookups_were_not_checked() {
    let mut t = T::new(facts("systemd 262 (262.1-1)"));
    let d = t.state.path().join("state");
    // As a generation sealed before reverse zones reads: records, no PTRs.
    let inv = pigsty_dns::input::inventory::parse(META_10).unwrap();
    let zone = Zone::parse("pigsty.test").unwrap();
    let mut set = pigsty_dns::input::records::RecordSet::build(&inv, &zone).unwrap();
    set.ptr.clear();
    pigsty_dns::store::StateDir::open(&d, true)
        .unwrap()
        .commit(
            set,
            60,
            5,
            pigsty_dns::zone::generation::Input {
                path: "/test/old.yml".into(),
                sha256: "00".into(),
            },
            false,
        )
        .unwrap();
    t.state_dir = Some(d);
    let out = t.install(&req(None, None), false, true).unwrap();
    assert!(out.contains("and 10.10.10.in-addr.arpa"), "{out}");
    assert!(
        out.contains("ok  canonical name: not checked: the live generation (serial 1) has no PTRs"),
        "{out}"
    );
    assert!(
        !t.runner.lines().iter().any(|l| l.contains("getent hosts")),
        "{:?}",
        t.runner.lines()
    );
}

// ---------------------------------------------------------------- NetworkManager beside resolved-link

const NM_CONF: &str = "/etc/NetworkManager/conf.d/pigsty-dns.conf";
const NM_DEVICES: &str = "nmcli -t -f DEVICE,STATE device";

fn with_nm() -> T {
    let mut f = facts("systemd 252 (252.39-1~deb12u2)");
    f.nm_dns_mode = Some("systemd-resolved".into());
    let mut t = T::new(f);
    t.runner = answering(
        &[(NM_DEVICES, "labv0:connected\npigsty-dns0:unmanaged\n")],
        LINK_STATUS,
    );
    t
}

#[test]
fn with_networkmanager_the_link_route_owns_an_unmanaged_devices_drop_in() {
    let mut t = with_nm();
    let conf = install_then_uninstall(
        &mut t,
        &req(None, Some(Variant::Runtime)),
        NM_CONF,
        "resolved-link",
    );
    // `+=`: appended to the list other conf.d files set, never replacing it.
    assert!(
        conf.ends_with("\n[keyfile]\nunmanaged-devices+=interface-name:pigsty-dns0\n"),
        "{conf}"
    );
    // uninstall reloaded NM's configuration after the drop-in and the link were gone
    let calls = t.runner.lines();
    let reload = "nmcli general reload conf".to_string();
    let del = calls.iter().position(|c| c == "ip link del pigsty-dns0");
    let after = calls.iter().rposition(|c| *c == reload);
    assert!(del.is_some() && after > del, "{calls:?}");
}

#[test]
fn the_drop_in_is_written_and_reloaded_before_the_link_gets_its_address() {
    let mut t = with_nm();
    t.install(&req(None, Some(Variant::Runtime)), false, true)
        .unwrap();
    let j = journal::read(&t.jdir()).unwrap().expect("journal");
    assert!(
        j.files.iter().any(|f| f.path.ends_with(NM_CONF)),
        "{:?}",
        j.files
    );
    let calls = t.runner.lines();
    let pos = |c: &str| {
        calls
            .iter()
            .position(|l| l == c)
            .unwrap_or_else(|| panic!("{c} not run: {calls:?}"))
    };
    assert!(pos("ip link add pigsty-dns0 type dummy") < pos("nmcli general reload conf"));
    assert!(pos("nmcli general reload conf") < pos("nmcli device set pigsty-dns0 managed no"));
    assert!(
        pos("nmcli device set pigsty-dns0 managed no")
            < pos("ip addr add 198.18.53.53/32 dev pigsty-dns0")
    );
    // The boot unit stays free of nmcli: the drop-in is what keeps NM off the re-created link.
    let unit = t
        .file("/etc/systemd/system/pigsty-dns-route.service")
        .unwrap();
    assert!(!unit.contains("nmcli"), "{unit}");
}

#[test]
fn status_checks_that_networkmanager_reports_the_link_unmanaged() {
    let mut t = with_nm();
    t.install(&req(None, Some(Variant::Runtime)), false, true)
        .unwrap();
    let s = t.status();
    assert!(
        s.contains("ok   NetworkManager: link pigsty-dns0 is unmanaged"),
        "{s}"
    );
    // NM took the link (another conf.d file replaced the list, say): status fails and says what to do.
    t.runner = answering(
        &[(NM_DEVICES, "pigsty-dns0:connected (externally)\n")],
        LINK_STATUS,
    );
    let s = t.status();
    assert!(
        s.contains(
            "FAIL NetworkManager: link pigsty-dns0 is connected (externally) to NetworkManager, not unmanaged"
        ) && s.contains("next: sudo nmcli general reload conf"),
        "{s}"
    );
}

#[test]
fn without_a_journal_uninstall_removes_the_nm_drop_in_by_its_marker() {
    let mut t = with_nm();
    t.install(&req(None, Some(Variant::Runtime)), false, true)
        .unwrap();
    std::fs::remove_dir_all(t.jdir()).unwrap();
    t.runner.reset();
    t.runner.always(
        "resolvectl --no-pager status",
        Output::fail(1, "no such link"),
    );
    t.runner.fallback = Some(Output::ok_with(""));
    t.uninstall().unwrap();
    assert!(t.tree().is_empty(), "left behind: {:?}", t.tree());
}

#[test]
fn without_networkmanager_there_is_no_drop_in_and_no_nmcli() {
    let mut t = T::new(facts("systemd 252 (252.39-1~deb12u2)"));
    t.install(&req(None, Some(Variant::Runtime)), false, true)
        .unwrap();
    assert!(t.file(NM_CONF).is_none(), "{:?}", t.tree());
    let calls = t.runner.lines();
    assert!(!calls.iter().any(|c| c.starts_with("nmcli")), "{calls:?}");
    assert!(!t.status().contains("NetworkManager"));
}

// ---------------------------------------------------------------- several zones (issue 37)

/// The default zone set: Pigsty's own `.pigsty` beside `pigsty.test`.
const BOTH: &[&str] = &["pigsty.test", "pigsty"];
const LINK_STATUS_BOTH: &str = "Link 3 (pigsty-dns0)\nCurrent Scopes: DNS\n     Protocols: -DefaultRoute -LLMNR -mDNS\n   DNS Servers: 127.0.0.1:5354\n    DNS Domain: ~10.10.10.in-addr.arpa ~pigsty ~pigsty.test\n";
const DELEGATE_STATUS_BOTH: &str = "Global\nDelegate pigsty-dns\n  DNS Servers: 127.0.0.1:5354\n   DNS Domain: ~pigsty.test ~pigsty ~10.10.10.in-addr.arpa\n";

fn req_both(adapter: Option<AdapterName>, variant: Option<Variant>) -> Request {
    Request {
        zones: Zones::parse(BOTH).unwrap(),
        ..req(adapter, variant)
    }
}

/// A resolved that shows both zones and the reverse zone on the route's link and delegate.
fn healthy_both() -> ScriptedRunner {
    answering(
        &[
            ("resolvectl --no-pager status pigsty-dns0", LINK_STATUS_BOTH),
            ("resolvectl --no-pager status", DELEGATE_STATUS_BOTH),
        ],
        LINK_STATUS_BOTH,
    )
}

/// Installs `adapter` for both zones against META_10's generation; returns the file at `path`.
fn install_both(adapter: AdapterName, variant: Option<Variant>, path: &str) -> (T, String) {
    let mut t = T::new(facts("systemd 262 (262.1-1)")).with_generation(META_10);
    t.runner = healthy_both();
    if adapter == AdapterName::NmDnsmasq {
        t.facts.nm_dns_mode = Some("dnsmasq".into());
    }
    let out = t
        .install(&req_both(Some(adapter), variant), false, true)
        .unwrap();
    assert!(
        out.starts_with(&format!(
            "installed: {adapter} routes pigsty.test, pigsty and 10.10.10.in-addr.arpa to {SERVER}"
        )),
        "{out}"
    );
    let j = journal::read(&t.jdir()).unwrap().unwrap();
    assert_eq!(
        (j.zone.as_str(), j.zones()),
        (
            "pigsty.test",
            vec!["pigsty.test".to_string(), "pigsty".into()]
        )
    );
    let content = t
        .file(path)
        .unwrap_or_else(|| panic!("{path}: {:?}", t.tree()));
    (t, content)
}

/// Uninstall (resolved shows nothing any more) leaves nothing behind.
fn uninstall_all(t: &mut T) {
    t.runner.reset();
    t.runner
        .always("resolvectl --no-pager status", Output::ok_with("Global\n"));
    t.runner.fallback = Some(Output::ok_with(""));
    let out = t.uninstall().unwrap();
    assert!(out.starts_with("uninstalled"), "{out}");
    assert!(t.tree().is_empty(), "left behind: {:?}", t.tree());
}

#[test]
fn every_linux_adapter_routes_every_zone_and_uninstall_removes_them_all() {
    let all = "Domains=~pigsty.test ~pigsty ~10.10.10.in-addr.arpa\n";
    for (adapter, variant, path) in [
        (
            AdapterName::ResolvedDelegate,
            None,
            "/etc/systemd/dns-delegate.d/pigsty-dns.dns-delegate",
        ),
        (
            AdapterName::ResolvedGlobal,
            None,
            "/etc/systemd/resolved.conf.d/pigsty-dns.conf",
        ),
        (
            AdapterName::ResolvedLink,
            Some(Variant::Networkd),
            "/etc/systemd/network/50-pigsty-dns0.network",
        ),
    ] {
        let (mut t, c) = install_both(adapter, variant, path);
        assert!(c.contains(all), "{adapter}: {c}");
        // The daemon's answers through resolved: each zone's SOA, at the one serial.
        let lines = t.runner.lines();
        for z in BOTH {
            let soa = format!("resolvectl --cache=no query -t SOA {z}");
            assert!(lines.contains(&soa), "{soa}: {lines:?}");
        }
        uninstall_all(&mut t);
    }
    let (mut t, c) = install_both(
        AdapterName::ResolvedLink,
        Some(Variant::Runtime),
        "/etc/systemd/system/pigsty-dns-route.service",
    );
    let domain = "resolvectl domain pigsty-dns0 ~pigsty.test ~pigsty ~10.10.10.in-addr.arpa";
    assert!(c.contains(&format!("ExecStart=/usr/bin/{domain}\n")), "{c}");
    assert!(
        c.contains("Description=pigsty-dns route: pigsty.test, pigsty to 127.0.0.1:5354"),
        "{c}"
    );
    assert!(t.runner.lines().iter().any(|l| l == domain));
    uninstall_all(&mut t);
    let (mut t, c) = install_both(
        AdapterName::NmDnsmasq,
        None,
        "/etc/NetworkManager/dnsmasq.d/pigsty-dns.conf",
    );
    assert!(
        c.ends_with(
            "server=/pigsty.test/127.0.0.1#5354\nserver=/pigsty/127.0.0.1#5354\nserver=/10.10.10.in-addr.arpa/127.0.0.1#5354\n"
        ),
        "{c}"
    );
    uninstall_all(&mut t);
}

#[test]
fn status_proves_each_zone_with_one_of_its_served_names() {
    let (mut t, _) = install_both(
        AdapterName::ResolvedDelegate,
        None,
        "/etc/systemd/dns-delegate.d/pigsty-dns.dns-delegate",
    );
    t.check_name = None;
    let text = t.status();
    assert!(
        text.contains("ok   daemon: answers pigsty.test, pigsty SOA over UDP and TCP at 127.0.0.1:5354 (serial 7)"),
        "{text}"
    );
    assert!(
        text.contains(
            "ok   lookup: getent ahostsv4: getent ahostsv4 meta.pigsty.test: 10.10.10.10"
        ),
        "{text}"
    );
    // A zone of the route that has no name in the live generation is said so, not failed.
    assert!(
        text.contains(
            "ok   lookup: served name: not checked: the live generation has no name in pigsty"
        ),
        "{text}"
    );
    // A daemon that answers the first zone but not another: the item names it and what to do.
    t.preflight = |a, z| match z.as_str() {
        "pigsty" => Err(format!("REFUSED from {a}")),
        _ => Ok(7),
    };
    let text = t.status();
    assert!(
        text.contains("FAIL daemon: answers pigsty.test SOA at 127.0.0.1:5354 (serial 7), but not pigsty: REFUSED from 127.0.0.1:5354"),
        "{text}"
    );
    assert!(
        text.contains("next: serve every routed zone (pigsty-dns serve --zone pigsty.test --zone pigsty), or route only what it serves (pigsty-dns route install --zone ZONE)"),
        "{text}"
    );
}

#[test]
fn the_preflight_asks_every_zone_and_a_zone_the_daemon_does_not_serve_writes_nothing() {
    let mut t = T::new(facts("systemd 262 (262.1-1)"));
    t.runner = healthy_both();
    t.preflight = |a, z| match z.as_str() {
        "pigsty" => Err(format!("REFUSED from {a}")),
        _ => Ok(7),
    };
    let e = t
        .install(
            &req_both(Some(AdapterName::ResolvedDelegate), None),
            false,
            true,
        )
        .unwrap_err();
    assert_eq!(
        e.message,
        "preflight: the daemon does not answer pigsty SOA over UDP and TCP at 127.0.0.1:5354: REFUSED from 127.0.0.1:5354"
    );
    // The default set: the daemon's own default, so no --zone to repeat.
    assert_eq!(
        e.next,
        "start it first, serving pigsty.test, pigsty (pigsty-dns serve --listen 127.0.0.1:5354), or give its address with --server, or route only the zones it serves (pigsty-dns route install --zone ZONE)"
    );
    assert!(t.tree().is_empty(), "{:?}", t.tree());
}

#[test]
fn the_unsupported_next_names_the_zones_asked_for() {
    let mut t = T::new(facts("systemd 249 (249.11-0ubuntu3.12)"));
    let r = Request {
        zones: Zones::parse(&["pigsty"]).unwrap(),
        ..req(None, None)
    };
    let e = t.install(&r, false, true).unwrap_err();
    assert!(e.next.contains("forward zone `pigsty` ->"), "{}", e.next);
    assert!(!e.next.contains("pigsty.test"), "{}", e.next);
    let e = t.install(&req_both(None, None), false, true).unwrap_err();
    assert!(
        e.next
            .contains("forward zone `pigsty.test` and `pigsty` ->"),
        "{}",
        e.next
    );
}

/// A generation of `yaml` served under `zone` (a daemon of another zone set than the route's).
fn store_generation_in(dir: &Path, yaml: &str, zone: &str) {
    let inv = pigsty_dns::input::inventory::parse(yaml).unwrap();
    let set =
        pigsty_dns::input::records::RecordSet::build(&inv, &Zone::parse(zone).unwrap()).unwrap();
    let st = pigsty_dns::store::StateDir::open(dir, true).unwrap();
    st.commit(
        set,
        60,
        5,
        pigsty_dns::zone::generation::Input {
            path: "/test/host-names.yml".into(),
            sha256: pigsty_dns::digest::sha256_hex(yaml.as_bytes()),
        },
        false,
    )
    .unwrap();
}

/// The journal as the release that routed one zone wrote it: no `zones`.
fn as_one_zone_release(t: &T) -> String {
    let p = t.jdir().join("journal.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("zones");
    let text = serde_json::to_string_pretty(&v).unwrap();
    std::fs::write(&p, &text).unwrap();
    text
}

#[test]
fn a_journal_of_the_one_zone_release_is_read_reported_and_uninstalled_exactly() {
    let mut t = T::new(facts("systemd 262 (262.1-1)")).with_generation(META_10);
    t.install(&req(Some(AdapterName::ResolvedDelegate), None), false, true)
        .unwrap();
    let before = t.tree();
    let old = as_one_zone_release(&t);
    assert!(!old.contains("\"zones\""), "{old}");
    let j = journal::read(&t.jdir()).unwrap().unwrap();
    assert_eq!(j.zones(), vec!["pigsty.test".to_string()]);
    // Written back, it is the same words (a release that routed one zone reads it too).
    let back: serde_json::Value = serde_json::from_str(&pigsty_dns::output::to_json(&j)).unwrap();
    assert_eq!(
        back,
        serde_json::from_str::<serde_json::Value>(&old).unwrap()
    );
    let text = t.status();
    assert!(
        text.contains("ok   adapter: resolved-delegate routes pigsty.test and 10.10.10.in-addr.arpa to 127.0.0.1:5354"),
        "{text}"
    );
    assert!(
        text.contains("ok   zones: routes every zone the daemon serves (pigsty.test)"),
        "{text}"
    );
    assert!(!text.contains("FAIL"), "{text}");
    assert_eq!(t.tree(), before);
    uninstall_all(&mut t);
}

#[test]
fn a_zone_served_and_not_routed_is_an_item_and_install_routes_it() {
    // The upgrade: the route of the one-zone release carries pigsty.test; the daemon now serves a
    // zone it does not carry.
    let mut t = T::new(facts("systemd 262 (262.1-1)")).with_generation(META_10);
    t.install(&req(Some(AdapterName::ResolvedDelegate), None), false, true)
        .unwrap();
    as_one_zone_release(&t);
    store_generation_in(t.state_dir.as_ref().unwrap(), META_10, "pigsty");
    let text = t.status();
    assert!(
        text.contains("FAIL zones: served, not routed: pigsty (the daemon serves pigsty; the route carries pigsty.test): names under it leave this host for the upstream\n     next: pigsty-dns route install\n"),
        "{text}"
    );
    // Installing again routes the served set: the same route, upgraded in place (the PTRs of this
    // generation name meta.pigsty).
    t.runner = answering(
        &[
            ("resolvectl --no-pager status pigsty-dns0", LINK_STATUS_BOTH),
            ("resolvectl --no-pager status", DELEGATE_STATUS_BOTH),
            (
                "resolvectl --cache=no query 10.10.10.10",
                "10.10.10.10: meta.pigsty            -- link: pigsty-dns0\n",
            ),
            ("getent hosts 10.10.10.10", "10.10.10.10     meta.pigsty\n"),
        ],
        LINK_STATUS_BOTH,
    );
    let out = t
        .install(
            &req_both(Some(AdapterName::ResolvedDelegate), None),
            false,
            true,
        )
        .unwrap();
    assert!(
        out.starts_with("installed: resolved-delegate routes pigsty.test, pigsty"),
        "{out}"
    );
    let c = t
        .file("/etc/systemd/dns-delegate.d/pigsty-dns.dns-delegate")
        .unwrap();
    assert!(c.contains("Domains=~pigsty.test ~pigsty"), "{c}");
    let text = t.status();
    assert!(
        text.contains("ok   zones: routes every zone the daemon serves (pigsty)"),
        "{text}"
    );
    uninstall_all(&mut t);
}
