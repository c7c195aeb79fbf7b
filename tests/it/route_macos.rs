//! macos-resolver without a Mac: the scripted runner stands in for the three programs the route talks
//! to, each behaving the way Apple's source says — `scutil --dns` prints what configd read from
//! `<root>/etc/resolver` (every entry, dotfiles included; a `domain` line overrides the file name) in
//! the format of configd's `dnsinfo_logging.h`, plus a VPN's resolvers when one is up;
//! `dscacheutil -q host` resolves like mDNSResponder (the longest matching domain, never a unicast
//! query to a resolver on port 5353, a change applied only after a while, negative answers cached per
//! name) and, when that reaches the daemon, bumps the daemon's counters in its real status file.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use pigsty_dns::dns::name::{Zone, Zones};
use pigsty_dns::error::{AppError, Class};
use pigsty_dns::route::adapter::AdapterName;
use pigsty_dns::route::detect::{Driver, Facts};
use pigsty_dns::route::plan::Request;
use pigsty_dns::route::{self, Ctx, files, journal};
use pigsty_dns::store::status_file::{self, CountersSnapshot, ServerState, Status};
use pigsty_dns::sys::Os;
use pigsty_dns::sys::runner::{GETADDRINFO, Output, ScriptedRunner};

const DAEMON: &str = "127.0.0.1:5354";
const ZONE: &str = "pigsty.test";

/// One resolver as configd holds it.
#[derive(Clone, Debug)]
struct Res {
    /// Empty: none (a `domain` line whose value is empty sets none, and the file name is not used).
    domain: String,
    nameserver: Option<String>,
    port: u16,
    options: Option<String>,
    if_index: Option<&'static str>,
    flags: String,
}

/// The Mac's network, which gives `/etc/resolver` entries without a `flags` line their flags: configd
/// sets `Request A/AAAA records` from the routable network services (IPMonitor's
/// `dns-configuration.c`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Net {
    /// Wi-Fi with an IPv4 router only.
    V4,
    Dual,
    Ipv6Only,
    Offline,
}

impl Net {
    fn flags(self) -> &'static str {
        match self {
            Net::V4 => "Request A records",
            Net::Dual => "Request A records, Request AAAA records",
            Net::Ipv6Only => "Request AAAA records",
            Net::Offline => "",
        }
    }
}

/// The fake Mac: configd's view, mDNSResponder's cache, the daemon's counters.
struct World {
    root: PathBuf,
    status_dir: PathBuf,
    daemon: SocketAddr,
    /// The daemon serves `pigsty` beside `pigsty.test` (issue 37).
    pigsty_served: bool,
    net: Net,
    /// What mDNSResponder uses now (configd's view as of its last change it applied).
    applied: Vec<Res>,
    /// Lookups mDNSResponder answers with its old configuration after a change (it applies a change
    /// after a while: ~25 ms on a real Mac).
    apply_lag: usize,
    /// mDNSResponder never applies what configd lists (something on the Mac bypasses /etc/resolver).
    never_applies: bool,
    /// configd's view lags behind the directory this many scutil calls (0: it reads it at once).
    configd_lag: usize,
    configd_view: Vec<Res>,
    vpn: bool,
    /// Names mDNSResponder answered from its cache.
    cache: BTreeSet<String>,
    counters: CountersSnapshot,
    /// The daemon's last NXDOMAIN names (its ring of 16), as its status file lists them.
    nx_names: Vec<String>,
    /// A daemon from before that list: its status file has none.
    old_server: bool,
    /// Another client on the Mac: each lookup that does not reach the daemon is met by one of its
    /// queries that does (NXDOMAIN for a name of its own).
    other_client: bool,
    /// Reverse lookups mDNSResponder still sends elsewhere (and caches as negative).
    reverse_lag: usize,
    stamp: u64,
    /// Names sent to the default (upstream) resolver.
    upstream: Vec<String>,
    /// Names getaddrinfo got "unusable" for, answered locally.
    unusable: Vec<String>,
    served: BTreeMap<String, Ipv4Addr>,
    /// The daemon's PTRs (its reverse zone is the /24 of these).
    ptrs: BTreeMap<Ipv4Addr, String>,
}

/// C's `strtol(s, NULL, 0)`: leading blanks, a sign, `0x` hex or `0` octal, digits up to the first
/// that is not one; 0 when there are none.
fn strtol0(s: &str) -> i64 {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (radix, digits) = if let Some(h) = t.strip_prefix("0x").or(t.strip_prefix("0X")) {
        (16, h)
    } else if t.starts_with('0') {
        (8, t)
    } else {
        (10, t)
    };
    let mut n: i64 = 0;
    for c in digits.chars() {
        match c.to_digit(radix) {
            Some(d) => {
                n = n
                    .saturating_mul(i64::from(radix))
                    .saturating_add(i64::from(d))
            }
            None => break,
        }
    }
    if neg { -n } else { n }
}

/// `_dnsinfo_flatfile_create_resolver`: lines end at `\n` only; words are what `strsep(" \t")` gives,
/// so each single blank separates (a leading blank makes an empty first word: no keyword; two blanks
/// make an empty value); a keyword needs a value word to count, and counts toward its maximum even when
/// the value is then unusable; no keyword with a value: no resolver.
fn configd_reads(name: &str, bytes: &[u8], net: Net) -> Option<Res> {
    let text = String::from_utf8_lossy(bytes);
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut created = false;
    let mut r = Res {
        domain: String::new(),
        nameserver: None,
        port: 0,
        options: None,
        if_index: None,
        flags: String::new(),
    };
    let mut config_flags: Vec<&str> = Vec::new();
    for line in text.split('\n') {
        if line.is_empty() {
            continue;
        }
        let mut words = line.split([' ', '\t']);
        let key = words.next().unwrap_or("");
        if key.starts_with(';') || key.starts_with('#') {
            continue;
        }
        let key = key.to_ascii_lowercase();
        let max = match key.as_str() {
            "nameserver" => 3,
            "domain" | "flags" | "interface" | "options" | "port" | "search" | "search_order"
            | "sortlist" | "timeout" => 1,
            _ => continue,
        };
        let Some(word) = words.next() else { continue };
        let n = counts.entry(key.clone()).or_insert(0);
        *n += 1;
        if *n > max {
            continue;
        }
        created = true;
        match key.as_str() {
            "domain" => r.domain = word.trim_end_matches('.').to_string(),
            "nameserver" if r.nameserver.is_none() && word.parse::<std::net::IpAddr>().is_ok() => {
                r.nameserver = Some(word.to_string())
            }
            "port" => {
                let p = strtol0(word);
                if (0..=65535).contains(&p) {
                    r.port = p as u16;
                }
            }
            "options" => {
                let o: Vec<&str> = std::iter::once(word)
                    .chain(words)
                    .filter(|w| !w.is_empty())
                    .collect();
                if !o.is_empty() {
                    r.options = Some(o.join(" "));
                }
            }
            "flags" => {
                for w in std::iter::once(word).chain(words) {
                    match w.to_ascii_lowercase().as_str() {
                        "a" => config_flags.push("Request A records"),
                        "aaaa" => config_flags.push("Request AAAA records"),
                        "scoped" => config_flags.insert(0, "Scoped"),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    if !created {
        return None;
    }
    if !counts.contains_key("domain") {
        r.domain = name.to_string();
    }
    config_flags.dedup();
    r.flags = if config_flags.is_empty() {
        net.flags().to_string()
    } else {
        config_flags.join(", ")
    };
    Some(r)
}

fn resolver_dir_as_configd_reads_it(root: &Path, net: Net) -> Vec<Res> {
    let Ok(rd) = std::fs::read_dir(root.join("etc/resolver")) else {
        return vec![];
    };
    let mut entries: Vec<_> = rd.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    entries
        .iter()
        .filter_map(|e| {
            let bytes = std::fs::read(e.path()).ok()?;
            configd_reads(&e.file_name().to_string_lossy(), &bytes, net)
        })
        .collect()
}

fn vpn_resolver() -> Res {
    Res {
        domain: ZONE.into(),
        nameserver: Some("10.8.0.1".into()),
        port: 0,
        options: None,
        if_index: Some("17 (utun4)"),
        flags: "Supplemental, Request A records".into(),
    }
}

/// A block the way `_dns_resolver_log` prints it (not in debug mode).
fn block(n: usize, r: &Res, scoped: bool) -> String {
    let mut s = format!("\nresolver #{n}\n");
    if !r.domain.is_empty() {
        s.push_str(&format!("  domain   : {}\n", r.domain));
    }
    if let Some(ns) = &r.nameserver {
        s.push_str(&format!("  nameserver[0] : {ns}\n"));
    }
    if let Some(o) = &r.options {
        s.push_str(&format!("  options  : {o}\n"));
    }
    if r.port != 0 {
        s.push_str(&format!("  port     : {}\n", r.port));
    }
    if let Some(i) = r.if_index {
        s.push_str(&format!("  if_index : {i}\n"));
    }
    let flags = if scoped {
        "Scoped, Request A records"
    } else {
        &r.flags
    };
    s.push_str(&format!("  flags    : {flags}\n"));
    s.push_str(if r.nameserver.as_deref() == Some("127.0.0.1") {
        "  reach    : 0x00030002 (Reachable,Local Address,Directly Reachable Address)\n"
    } else {
        "  reach    : 0x00000002 (Reachable)\n"
    });
    s
}

impl World {
    fn scutil(&mut self) -> Output {
        if self.configd_lag > 0 {
            self.configd_lag -= 1;
        } else {
            self.configd_view = resolver_dir_as_configd_reads_it(&self.root, self.net);
        }
        // The network's own resolver (none offline), then mDNS's `local`, then the files.
        let own = match self.net {
            Net::Offline => None,
            Net::Ipv6Only => Some("2001:db8::1"),
            Net::V4 | Net::Dual => Some("192.168.1.1"),
        };
        let mut s = String::from("DNS configuration\n");
        let mut n = 0;
        let mut next = || {
            n += 1;
            n
        };
        if let Some(ns) = own {
            s.push_str(&format!(
                "\nresolver #{}\n  search domain[0] : lan\n  nameserver[0] : {ns}\n  if_index : 6 (en0)\n  flags    : {}\n  reach    : 0x00020002 (Reachable,Directly Reachable Address)\n",
                next(),
                self.net.flags()
            ));
        }
        s.push_str(&format!(
            "\nresolver #{}\n  domain   : local\n  options  : mdns\n  timeout  : 5\n  flags    : {}\n  reach    : 0x00000000 (Not Reachable)\n  order    : 300000\n",
            next(),
            self.net.flags()
        ));
        let mut all = self.configd_view.clone();
        if self.vpn {
            all.push(vpn_resolver());
        }
        for r in &all {
            s.push_str(&block(next(), r, false));
        }
        s.push_str("\nDNS configuration (for scoped queries)\n");
        if let Some(ns) = own {
            s.push_str(&format!("\nresolver #1\n  search domain[0] : lan\n  nameserver[0] : {ns}\n  if_index : 6 (en0)\n  flags    : Scoped, {}\n  reach    : 0x00020002 (Reachable,Directly Reachable Address)\n", self.net.flags()));
        }
        if self.vpn {
            s.push_str(&block(2, &vpn_resolver(), true));
        }
        Output::ok_with(&s)
    }

    fn bump(&mut self, f: impl FnOnce(&mut CountersSnapshot)) {
        f(&mut self.counters);
        self.stamp += 1;
        let names = (!self.old_server).then(|| self.nx_names.clone());
        write_status(
            &self.status_dir,
            self.daemon,
            self.counters,
            self.stamp,
            names,
        );
    }

    /// The daemon answers NXDOMAIN for `qname` (and keeps the name in its ring).
    fn nxdomain(&mut self, qname: &str) {
        self.nx_names.push(qname.to_string());
        if self.nx_names.len() > 16 {
            self.nx_names.remove(0);
        }
        self.bump(|c| c.nxdomain += 1);
    }

    /// What the other client's query does to the daemon when it is on.
    fn other_client_asks(&mut self) {
        if self.other_client {
            let n = self.stamp;
            self.nxdomain(&format!("printer-{n}.pigsty.test"));
        }
    }

    /// `dscacheutil -q host -a ip_address ADDR`: mDNSResponder asks for the PTR of
    /// `D.C.B.A.in-addr.arpa` with the same choice of resolver as for a name.
    fn dscacheutil_ip(&mut self, addr: &str) -> Output {
        let Ok(a) = addr.parse::<Ipv4Addr>() else {
            return Output::ok_with("");
        };
        let [o1, o2, o3, o4] = a.octets();
        let qname = format!("{o4}.{o3}.{o2}.{o1}.in-addr.arpa");
        if self.cache.contains(&qname) {
            return Output::ok_with("");
        }
        let (to_daemon, domain) = self.route_of(&qname);
        if !to_daemon || self.reverse_lag > 0 {
            self.reverse_lag = self.reverse_lag.saturating_sub(1);
            self.upstream.push(qname.clone());
            self.cache.insert(qname);
            self.other_client_asks();
            return Output::ok_with("");
        }
        let reverse_zone = self.ptrs.keys().next().map(|k| {
            let [a, b, c, _] = k.octets();
            format!("{c}.{b}.{a}.in-addr.arpa")
        });
        if reverse_zone.as_deref() != domain.as_deref() {
            self.bump(|c| c.refused += 1);
            return Output::ok_with("");
        }
        match self.ptrs.get(&a).cloned() {
            Some(n) => {
                self.bump(|c| c.noerror += 1);
                Output::ok_with(&format!("name: {n}\nip_address: {a}\n\n"))
            }
            None => {
                self.nxdomain(&qname);
                self.cache.insert(qname);
                Output::ok_with("")
            }
        }
    }

    /// Whether mDNSResponder sends `qname` to the daemon, and the domain of the resolver it picks.
    fn route_of(&mut self, qname: &str) -> (bool, Option<String>) {
        if !self.never_applies {
            self.applied = resolver_dir_as_configd_reads_it(&self.root, self.net);
        }
        let pick = self
            .applied
            .iter()
            .filter(|r| qname == r.domain || qname.ends_with(&format!(".{}", r.domain)))
            .filter(|r| r.nameserver.is_some() && r.port != 5353)
            .max_by_key(|r| r.domain.len())
            .cloned();
        let to_daemon = pick.as_ref().is_some_and(|r| {
            r.nameserver.as_deref() == Some(&self.daemon.ip().to_string())
                && r.port == self.daemon.port()
        });
        (to_daemon, pick.map(|r| r.domain))
    }

    /// `dscacheutil -q host -a name NAME`: host-by-name with flags 0, so no `SuppressUnusable`.
    fn dscacheutil(&mut self, name: &str) -> Output {
        match self.resolve(name, false) {
            Got::Addr(a) => Output::ok_with(&format!("name: {name}\nip_address: {a}\n\n")),
            Got::Nothing | Got::Unusable => Output::ok_with(""),
        }
    }

    /// The in-process getaddrinfo with default hints (`AI_ADDRCONFIG`, so `SuppressUnusable`).
    fn getaddrinfo(&mut self, name: &str) -> Output {
        match self.resolve(name, true) {
            Got::Addr(a) => Output::ok_with(&format!("{a}\n")),
            Got::Nothing | Got::Unusable => Output::fail(
                8,
                &format!("getaddrinfo {name}: nodename nor servname provided, or not known"),
            ),
        }
    }

    /// mDNSResponder's choice for `name`: the longest matching domain among unicast resolvers; an A
    /// question marked `SuppressUnusable` is answered locally as unusable when that resolver lacks the
    /// A flag (`mDNSCore/mDNS.c`).
    fn resolve(&mut self, name: &str, suppress_unusable: bool) -> Got {
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        if self.apply_lag > 0 {
            self.apply_lag -= 1;
        } else if !self.never_applies {
            self.applied = resolver_dir_as_configd_reads_it(&self.root, self.net);
            if self.vpn {
                self.applied.insert(0, vpn_resolver());
            }
        }
        if self.cache.contains(&name) {
            return Got::Nothing;
        }
        let pick = self
            .applied
            .iter()
            .filter(|r| name == r.domain || name.ends_with(&format!(".{}", r.domain)))
            // ConfigNonUnicastResolver: a resolver on 5353 (or without a nameserver) is mDNS only.
            .filter(|r| r.nameserver.is_some() && r.port != 5353)
            .max_by_key(|r| r.domain.len())
            .cloned();
        // No resolver of its own: the default one, with the network's flags.
        let flags = pick.as_ref().map_or(self.net.flags(), |r| r.flags.as_str());
        if suppress_unusable && !flags.contains("Request A records") {
            self.unusable.push(name);
            self.other_client_asks();
            return Got::Unusable;
        }
        let to_daemon = pick.as_ref().is_some_and(|r| {
            r.nameserver.as_deref() == Some(&self.daemon.ip().to_string())
                && r.port == self.daemon.port()
        });
        if !to_daemon {
            self.upstream.push(name.clone());
            self.cache.insert(name);
            self.other_client_asks();
            return Got::Nothing;
        }
        let in_pigsty = name == "pigsty" || name.ends_with(".pigsty");
        if !(name.ends_with(ZONE) || self.pigsty_served && in_pigsty) {
            self.bump(|c| c.refused += 1);
            return Got::Nothing;
        }
        match self.served.get(&name).copied() {
            Some(a) => {
                self.bump(|c| c.noerror += 1);
                Got::Addr(a)
            }
            None => {
                self.nxdomain(&name);
                self.cache.insert(name);
                Got::Nothing
            }
        }
    }
}

/// What mDNSResponder made of a host lookup.
enum Got {
    Addr(Ipv4Addr),
    Nothing,
    /// Answered locally: the resolver lacks the A flag.
    Unusable,
}

fn write_status(
    dir: &Path,
    listen: SocketAddr,
    counters: CountersSnapshot,
    stamp: u64,
    nxdomain_names: Option<Vec<String>>,
) {
    std::fs::create_dir_all(dir).unwrap();
    status_file::write(
        dir,
        &Status {
            format: status_file::FORMAT,
            state: ServerState::Running,
            pid: std::process::id(),
            started: "2026-01-01T00:00:00Z".into(),
            started_unix: 1,
            updated: format!("stamp {stamp}"),
            listen: vec![listen],
            zone: ZONE.into(),
            zones: Vec::new(),
            reverse_zone: None,
            serial: 7,
            secondaries: Vec::new(),
            transfers: None,
            record_digest: None,
            records: 1,
            generation: None,
            loaded_at: None,
            loaded_from: None,
            follow: None,
            last_error: None,
            counters,
            nxdomain_names,
        },
    )
    .unwrap();
}

struct Mac {
    root: tempfile::TempDir,
    state: tempfile::TempDir,
    world: Rc<RefCell<World>>,
    runner: ScriptedRunner,
    status_file: Option<PathBuf>,
    /// The daemon's state dir for the reverse zone (`with_generation`); `None`: not given.
    state_dir: Option<PathBuf>,
    settle: Duration,
}

fn facts() -> Facts {
    Facts {
        os: Os::Macos,
        is_root: true,
        systemd: None,
        resolved_running: false,
        networkd_running: false,
        systemd_booted: false,
        nm_dns_mode: None,
        resolv_conf: None,
        dummy: Driver::Unknown,
        ifb: Driver::Unknown,
        ip_path: "/usr/sbin/ip".into(),
        resolvectl_path: "/usr/bin/resolvectl".into(),
        notes: vec![],
    }
}

fn ok_preflight(_: SocketAddr, _: &Zone) -> Result<u32, String> {
    Ok(7)
}

fn lookup(_: SocketAddr, name: &str) -> Result<Option<Ipv4Addr>, String> {
    Ok((name == "meta.pigsty.test").then_some(Ipv4Addr::new(10, 10, 10, 10)))
}

fn moved_lookup(_: SocketAddr, name: &str) -> Result<Option<Ipv4Addr>, String> {
    Ok((name == "meta.pigsty.test").then_some(Ipv4Addr::new(10, 10, 12, 10)))
}

fn req(server: &str) -> Request {
    Request {
        zones: Zones::parse(&[ZONE]).unwrap(),
        server: server.parse().unwrap(),
        adapter: None,
        variant: None,
        link: "pigsty-dns0".into(),
        link_address: "198.18.53.53/32".into(),
        link_kind: None,
    }
}

impl Mac {
    fn new() -> Mac {
        let root = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let daemon: SocketAddr = DAEMON.parse().unwrap();
        write_status(
            state.path(),
            daemon,
            CountersSnapshot::default(),
            0,
            Some(vec![]),
        );
        let world = Rc::new(RefCell::new(World {
            root: root.path().to_path_buf(),
            status_dir: state.path().to_path_buf(),
            daemon,
            pigsty_served: false,
            applied: vec![],
            apply_lag: 0,
            never_applies: false,
            configd_lag: 0,
            configd_view: vec![],
            vpn: false,
            cache: BTreeSet::new(),
            counters: CountersSnapshot::default(),
            nx_names: vec![],
            old_server: false,
            other_client: false,
            reverse_lag: 0,
            stamp: 0,
            upstream: vec![],
            unusable: vec![],
            net: Net::V4,
            served: BTreeMap::from([(
                "meta.pigsty.test".to_string(),
                Ipv4Addr::new(10, 10, 10, 10),
            )]),
            ptrs: BTreeMap::from([(
                Ipv4Addr::new(10, 10, 10, 10),
                "meta.pigsty.test".to_string(),
            )]),
        }));
        let mut runner = ScriptedRunner::new();
        let w = world.clone();
        runner.with("/usr/sbin/scutil --dns", move |_| w.borrow_mut().scutil());
        let w = world.clone();
        runner.with("/usr/bin/dscacheutil -q host -a name", move |argv| {
            w.borrow_mut().dscacheutil(&argv[5])
        });
        let w = world.clone();
        runner.with("/usr/bin/dscacheutil -q host -a ip_address", move |argv| {
            w.borrow_mut().dscacheutil_ip(&argv[5])
        });
        let w = world.clone();
        runner.with(GETADDRINFO, move |argv| {
            w.borrow_mut().getaddrinfo(&argv[1])
        });
        runner.always("/usr/bin/dscacheutil -flushcache", Output::ok_with(""));
        runner.always("/usr/bin/killall -HUP mDNSResponder", Output::ok_with(""));
        let status_file = Some(state.path().join(status_file::FILE));
        Mac {
            root,
            state,
            world,
            runner,
            status_file,
            state_dir: None,
            settle: Duration::ZERO,
        }
    }

    fn root(&self) -> &Path {
        self.root.path()
    }
    fn jdir(&self) -> PathBuf {
        self.root()
            .join("Library/Application Support/pigsty-dns-route")
    }
    /// A generation of `yaml` in the daemon's state dir, which the commands are then given.
    fn with_generation(mut self, yaml: &str) -> Mac {
        crate::route_adapters::store_generation(self.state.path(), yaml);
        self.state_dir = Some(self.state.path().to_path_buf());
        self
    }

    fn ctx_do<R>(&mut self, f: impl FnOnce(&mut Ctx<'_>) -> R) -> R {
        let mut ctx = Ctx {
            root: self.root.path().to_path_buf(),
            journal_dir: self.jdir(),
            runner: &mut self.runner,
            facts: facts(),
            preflight: &ok_preflight,
            lookup_a: &lookup,
            confirm: None,
            settle: self.settle,
            status_wait: Duration::from_millis(30),
            check_name: Some("meta.pigsty.test".into()),
            status_file: self.status_file.clone(),
            state_dir: self.state_dir.clone(),
            out: vec![],
        };
        f(&mut ctx)
    }
    fn install(&mut self, server: &str) -> Result<String, AppError> {
        self.ctx_do(|c| route::install(c, &req(server), false, true).map(|r| r.render(false)))
    }
    fn dry_run_json(&mut self) -> serde_json::Value {
        let j = self
            .ctx_do(|c| route::install(c, &req(DAEMON), true, false).map(|r| r.render(true)))
            .unwrap();
        serde_json::from_str(&j).unwrap()
    }
    fn uninstall(&mut self) -> Result<String, AppError> {
        self.ctx_do(|c| route::uninstall(c, false, true).map(|r| r.render(false)))
    }
    fn status(&mut self) -> String {
        self.ctx_do(|c| route::status(c).map(|r| r.render(false)))
            .unwrap()
    }
    fn file(&self, abs: &str) -> Option<String> {
        std::fs::read_to_string(files::under(self.root(), abs)).ok()
    }
    fn put(&self, abs: &str, text: &str) -> PathBuf {
        let p = files::under(self.root(), abs);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }
    fn tree(&self) -> Vec<String> {
        crate::util::tree(self.root())
    }
    fn resolver_entries(&self) -> Vec<String> {
        std::fs::read_dir(self.root().join("etc/resolver"))
            .map(|rd| {
                let mut v: Vec<String> = rd
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect();
                v.sort();
                v
            })
            .unwrap_or_default()
    }
    fn dscacheutil_names(&self) -> Vec<String> {
        self.runner
            .calls
            .iter()
            .filter(|c| c.len() == 6 && c[0] == "/usr/bin/dscacheutil" && c[1] == "-q")
            .map(|c| c[5].clone())
            .collect()
    }
    fn getaddrinfo_names(&self) -> Vec<String> {
        self.runner
            .calls
            .iter()
            .filter(|c| c[0] == GETADDRINFO)
            .map(|c| c[1].clone())
            .collect()
    }
    fn reverse_probes(&self) -> Vec<String> {
        self.runner
            .calls
            .iter()
            .filter(|c| c.len() == 6 && c[4] == "ip_address" && c[5] != "10.10.10.10")
            .map(|c| c[5].clone())
            .collect()
    }
    fn counters(&self) -> CountersSnapshot {
        status_file::read(self.state.path()).unwrap().counters
    }
}

// ---------------------------------------------------------------- the whole cycle

#[test]
fn macos_resolver() {
    let mut m = Mac::new();
    let out = m.install(DAEMON).unwrap();
    assert!(out.starts_with("installed:"), "{out}");
    let c = m.file("/etc/resolver/pigsty.test").unwrap();
    assert!(
        c.ends_with("\ndomain pigsty.test\nnameserver 127.0.0.1\nport 5354\nflags a\n"),
        "{c}"
    );
    assert!(c.starts_with(files::MARKER));
    assert!(!c.contains("search"), "no search line: {c}");
    let j = journal::read(&m.jdir()).unwrap().expect("journal");
    assert_eq!(
        (j.adapter, j.server.as_str()),
        (AdapterName::MacosResolver, DAEMON)
    );
    for want in [
        "ok  scope: scutil --dns lists resolver #3: nameserver 127.0.0.1, port 5354",
        "ok  lookup reaches the daemon: getaddrinfo(pigsty-dns-route-check-",
        ".pigsty.test itself (status.json nxdomain_names)",
        "ok  dscacheutil: dscacheutil -q host -a name meta.pigsty.test: 10.10.10.10",
        "ok  getaddrinfo: getaddrinfo(meta.pigsty.test), default hints: 10.10.10.10",
        "ok  unrelated name stays away",
    ] {
        assert!(out.contains(want), "{want} in {out}");
    }
    let n = m.counters();
    assert!(n.nxdomain >= 1 && n.noerror >= 1 && n.refused == 0, "{n:?}");
    // Root-run helpers by absolute path only (under sudo PATH is the user's).
    let lines = m.runner.lines();
    assert!(
        m.runner
            .calls
            .iter()
            .all(|c| c[0].starts_with('/') || c[0] == GETADDRINFO),
        "{lines:?}"
    );
    for want in [
        "/usr/sbin/scutil --dns",
        "/usr/bin/dscacheutil -flushcache",
        "/usr/bin/killall -HUP mDNSResponder",
    ] {
        assert!(lines.iter().any(|l| l == want), "{want}: {lines:?}");
    }
    // The unrelated-name check goes through mDNSResponder too (there is no getent on macOS).
    assert!(
        m.dscacheutil_names()
            .iter()
            .any(|n| n.starts_with("pigsty-dns-route-check-") && n.ends_with(".example")),
        "{:?}",
        m.dscacheutil_names()
    );
    // Idempotent.
    let before = m.tree();
    m.install(DAEMON).unwrap();
    assert_eq!(m.tree(), before);
    let out = m.uninstall().unwrap();
    assert!(out.starts_with("uninstalled"), "{out}");
    assert!(out.contains("ok  route gone"), "{out}");
    assert!(m.tree().is_empty(), "left behind: {:?}", m.tree());
    assert!(m.uninstall().unwrap().contains("nothing to uninstall"));
}

// ---------------------------------------------------------------- the A flag

/// Offline or on an IPv6-only network configd gives a file without `flags` no A flag; the route's
/// `flags a` keeps it, so getaddrinfo (curl, Safari) resolves the zone on every network.
#[test]
fn the_route_resolves_offline_and_on_ipv6_only_networks() {
    for net in [Net::Offline, Net::Ipv6Only, Net::Dual] {
        let mut m = Mac::new();
        m.world.borrow_mut().net = net;
        let out = m.install(DAEMON).unwrap();
        assert!(
            out.contains("ok  scope: scutil --dns lists resolver #")
                && out.contains("port 5354, flags Request A records for domain pigsty.test"),
            "{net:?}: {out}"
        );
        assert!(
            out.contains(
                "ok  getaddrinfo: getaddrinfo(meta.pigsty.test), default hints: 10.10.10.10"
            ),
            "{net:?}: {out}"
        );
        assert!(m.world.borrow().unusable.is_empty(), "{net:?}");
        assert!(!m.status().contains("FAIL"), "{net:?}: {}", m.status());
    }
}

/// A route file without the `flags` line (as releases before it wrote): offline, configd lists it with
/// no flags; dscacheutil still answers, getaddrinfo does not, and both the scope and the getaddrinfo
/// check say so.
#[test]
fn a_route_file_without_the_a_flag_fails_offline_though_dscacheutil_answers() {
    let mut m = Mac::new();
    m.install(DAEMON).unwrap();
    m.world.borrow_mut().net = Net::Offline;
    let p = m.root().join("etc/resolver/pigsty.test");
    let old = files::wrap(
        "macos-resolver",
        None,
        "domain pigsty.test\nnameserver 127.0.0.1\nport 5354\n",
    );
    std::fs::write(&p, &old).unwrap();
    let mut j = journal::read(&m.jdir()).unwrap().unwrap();
    j.files[0].sha256 = pigsty_dns::digest::sha256_hex(old.as_bytes());
    journal::write(&m.jdir(), &j).unwrap();
    let text = m.status();
    assert!(
        text.contains("FAIL scope: scutil --dns lists resolver #")
            && text.contains("without `Request A records`")
            && text.contains("`flags a` line"),
        "{text}"
    );
    // The two lookups themselves: mDNSResponder answers dscacheutil (flags 0), not getaddrinfo.
    let out = m.world.borrow_mut().getaddrinfo("meta.pigsty.test");
    assert!(!out.ok(), "{out:?}");
    let out = m.world.borrow_mut().dscacheutil("meta.pigsty.test");
    assert!(out.stdout.contains("ip_address: 10.10.10.10"), "{out:?}");
    // Installing again writes the line and the route works offline.
    let out = m.install(DAEMON).unwrap();
    assert!(out.contains("ok  getaddrinfo"), "{out}");
    assert!(
        m.file("/etc/resolver/pigsty.test")
            .unwrap()
            .ends_with("flags a\n")
    );
}

// ---------------------------------------------------------------- refusals before anything is written

#[test]
fn port_5353_is_refused_on_macos() {
    let mut m = Mac::new();
    for dry in [true, false] {
        let e = m
            .ctx_do(|c| route::install(c, &req("127.0.0.1:5353"), dry, true).map(|_| ()))
            .unwrap_err();
        assert_eq!(e.class, Class::Usage);
        assert_eq!(e.class.exit_code(), 2);
        assert!(
            e.message.contains("--server 127.0.0.1:5353") && e.message.contains("mDNSResponder"),
            "{}",
            e.message
        );
        assert!(e.next.contains("--server 127.0.0.1:5354"), "{}", e.next);
    }
    assert!(m.tree().is_empty(), "{:?}", m.tree());
    assert!(m.runner.calls.is_empty(), "{:?}", m.runner.lines());
}

#[test]
fn another_resolver_file_claims_the_zone() {
    // Named otherwise, but its `domain` line wins; and a dotfile counts too (configd reads every entry).
    for (name, text, shown) in [
        (
            "/etc/resolver/corp",
            "domain pigsty.test\nnameserver 10.1.2.3\n",
            "/etc/resolver/corp",
        ),
        (
            "/etc/resolver/.pigsty.test.bak",
            "# an old copy\ndomain pigsty.test.\nnameserver 127.0.0.1\nport 5353\n",
            "/etc/resolver/.pigsty.test.bak",
        ),
    ] {
        let mut m = Mac::new();
        m.put(name, text);
        let before = m.tree();
        let plan = m.dry_run_json();
        assert!(
            plan["plan"]["claimants"][0]["what"]
                .as_str()
                .is_some_and(|w| w.contains(shown)),
            "{plan}"
        );
        let e = m.install(DAEMON).unwrap_err();
        assert_eq!(e.class, Class::Conflict, "{e:?}");
        assert_eq!(e.class.exit_code(), 4);
        assert!(
            e.message.starts_with("another resolver claims pigsty.test")
                && e.message.contains(shown),
            "{}",
            e.message
        );
        assert!(e.next.contains("then install again"), "{}", e.next);
        assert_eq!(m.tree(), before, "nothing written");
        assert!(!m.jdir().exists());
    }
    // A file for another domain is no claimant.
    let mut m = Mac::new();
    m.put("/etc/resolver/example.org", "nameserver 10.1.2.3\n");
    m.install(DAEMON).unwrap();
}

#[test]
fn a_vpn_resolver_for_the_zone_makes_install_refuse() {
    let mut m = Mac::new();
    m.world.borrow_mut().vpn = true;
    let e = m.install(DAEMON).unwrap_err();
    assert_eq!(e.class, Class::Conflict);
    assert!(
        e.message.contains("utun4")
            && e.message.contains("Supplemental")
            && e.message.contains("(for scoped queries)")
            && e.message.contains("a VPN or network service resolves"),
        "{}",
        e.message
    );
    assert!(e.next.contains("VPN"), "{}", e.next);
    assert!(m.tree().is_empty(), "{:?}", m.tree());
}

#[test]
fn without_the_daemons_status_file_install_refuses_before_writing() {
    let mut m = Mac::new();
    m.status_file = None;
    let e = m.install(DAEMON).unwrap_err();
    assert_eq!(e.class, Class::Usage);
    assert!(e.next.contains("--state-dir"), "{}", e.next);
    assert!(m.tree().is_empty());
    // The status file of a server on another address proves nothing about this one.
    let mut m = Mac::new();
    write_status(
        m.state.path(),
        "127.0.0.1:5399".parse().unwrap(),
        CountersSnapshot::default(),
        0,
        Some(vec![]),
    );
    let e = m.install(DAEMON).unwrap_err();
    assert_eq!(e.class, Class::Usage);
    assert!(
        e.message.contains("127.0.0.1:5399") && e.message.contains("not on 127.0.0.1:5354"),
        "{}",
        e.message
    );
    assert!(m.tree().is_empty());
}

// ---------------------------------------------------------------- verification through mDNSResponder

#[test]
fn verification_polls_getaddrinfo_with_fresh_names_until_the_daemon_names_one() {
    let mut m = Mac::new();
    // mDNSResponder answers the first two lookups with its old configuration (and caches them).
    m.world.borrow_mut().apply_lag = 2;
    m.settle = Duration::from_secs(5);
    let out = m.install(DAEMON).unwrap();
    assert!(out.contains("ok  lookup reaches the daemon"), "{out}");
    let zone_names: Vec<String> = m
        .getaddrinfo_names()
        .into_iter()
        .filter(|n| n.starts_with("pigsty-dns-route-check-") && n.ends_with(".pigsty.test"))
        .collect();
    assert!(zone_names.len() >= 3, "polled: {zone_names:?}");
    let distinct: BTreeSet<&String> = zone_names.iter().collect();
    assert_eq!(
        distinct.len(),
        zone_names.len(),
        "a fresh name each time: {zone_names:?}"
    );
    let upstream: Vec<String> = m
        .world
        .borrow()
        .upstream
        .iter()
        .filter(|n| n.ends_with(".pigsty.test"))
        .cloned()
        .collect();
    assert_eq!(
        upstream.len(),
        2,
        "answered with the old configuration: {upstream:?}"
    );
}

/// Another client's queries move the counters while our lookups go elsewhere: that is no proof, only
/// the daemon naming our probe is. (A server from before `nxdomain_names` is judged by its counters,
/// and the detail says how weak that is.)
#[test]
fn another_clients_queries_do_not_pass_for_ours() {
    let mut m = Mac::new();
    {
        let mut w = m.world.borrow_mut();
        w.never_applies = true;
        w.other_client = true;
    }
    m.settle = Duration::from_millis(500);
    let e = m.install(DAEMON).unwrap_err();
    assert!(
        e.message.contains("lookup reaches the daemon")
            && e.message
                .contains("it answered no NXDOMAIN for pigsty-dns-route-check-"),
        "{}",
        e.message
    );
    assert!(m.counters().nxdomain >= 1, "the counters did move");
    assert!(m.tree().is_empty(), "undone: {:?}", m.tree());
    // An old server: the counters are all there is.
    let mut m = Mac::new();
    m.world.borrow_mut().old_server = true;
    let out = m.install(DAEMON).unwrap();
    assert!(
        out.contains("ok  lookup reaches the daemon")
            && out.contains("a server from before nxdomain_names"),
        "{out}"
    );
}

/// The reverse zone's probe: the PTR of an unused address of the /24, a fresh one each poll (the
/// negative answers mDNSResponder cached are per name), named by the daemon.
#[test]
fn the_reverse_probe_asks_a_fresh_unused_address_each_poll() {
    let mut m = Mac::new().with_generation(META_10);
    m.world.borrow_mut().reverse_lag = 2;
    m.settle = Duration::from_secs(5);
    let out = m.install(DAEMON).unwrap();
    assert!(
        out.contains(
            "ok  reverse lookup reaches the daemon: dscacheutil -q host -a ip_address 10.10.10."
        ) && out.contains(".10.10.10.in-addr.arpa itself (status.json nxdomain_names)"),
        "{out}"
    );
    let asked = m.reverse_probes();
    assert!(asked.len() >= 3, "{asked:?}");
    let distinct: BTreeSet<&String> = asked.iter().collect();
    assert_eq!(distinct.len(), asked.len(), "fresh each poll: {asked:?}");
    assert!(
        asked.iter().all(|a| a.starts_with("10.10.10.")),
        "{asked:?}"
    );
    // Never answered by the daemon: the check fails and names the reverse zone.
    let mut m = Mac::new().with_generation(META_10);
    m.world.borrow_mut().reverse_lag = 1000;
    m.settle = Duration::from_millis(500);
    let e = m.install(DAEMON).unwrap_err();
    assert!(
        e.message.contains("reverse lookup reaches the daemon")
            && e.message
                .contains("mDNSResponder sends 10.10.10.in-addr.arpa somewhere else"),
        "{}",
        e.message
    );
}

#[test]
fn counters_that_never_move_fail_verification_and_undo_the_install() {
    let mut m = Mac::new();
    // configd lists the file, but lookups never reach the daemon (as with a resolver on 5353, or
    // something that bypasses /etc/resolver).
    m.world.borrow_mut().never_applies = true;
    m.settle = Duration::from_millis(500);
    let e = m.install(DAEMON).unwrap_err();
    assert_eq!(e.class, Class::Runtime);
    assert!(
        e.message.contains("lookup reaches the daemon")
            && e.message.contains("did not reach the daemon"),
        "{}",
        e.message
    );
    assert!(m.tree().is_empty(), "undone: {:?}", m.tree());
    assert!(journal::read(&m.jdir()).unwrap().is_none());
}

#[test]
fn an_unrelated_name_that_reaches_the_daemon_fails_verification() {
    let mut m = Mac::new();
    // Someone routes `example` to the daemon too: an unrelated name then moves REFUSED.
    m.put("/etc/resolver/example", "nameserver 127.0.0.1\nport 5354\n");
    let e = m.install(DAEMON).unwrap_err();
    assert!(
        e.message.contains("unrelated name stays away")
            && e.message.contains("REFUSED went 0 -> 1"),
        "{}",
        e.message
    );
}

// ---------------------------------------------------------------- the temporary file

#[test]
fn the_temporary_file_is_written_outside_etc_resolver() {
    let mut m = Mac::new();
    std::fs::create_dir_all(m.root().join("private/etc")).unwrap();
    let plan = m.dry_run_json();
    let tmp = m.root().join("private/etc");
    assert_eq!(
        plan["plan"]["files"][0]["temp_dir"].as_str(),
        Some(tmp.to_str().unwrap()),
        "{plan}"
    );
    // Something squats the temporary name in /private/etc: the write fails there, naming it, and
    // /etc/resolver never held anything.
    let squat = tmp.join(format!(
        ".pigsty.test.pigsty-dns-tmp.{}",
        std::process::id()
    ));
    std::fs::create_dir(&squat).unwrap();
    std::fs::write(squat.join("x"), "").unwrap();
    let e = m.install(DAEMON).unwrap_err();
    assert!(e.message.contains(squat.to_str().unwrap()), "{}", e.message);
    assert!(
        m.resolver_entries().is_empty(),
        "{:?}",
        m.resolver_entries()
    );
    std::fs::remove_dir_all(&squat).unwrap();
    m.install(DAEMON).unwrap();
    assert_eq!(m.resolver_entries(), ["pigsty.test"]);
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "no temp file left"
    );
    // A root without /private/etc (a test root, Linux): the resolver directory's parent.
    let mut m = Mac::new();
    let plan = m.dry_run_json();
    assert_eq!(
        plan["plan"]["files"][0]["temp_dir"].as_str(),
        Some(m.root().join("etc").to_str().unwrap())
    );
}

#[test]
fn stale_temporary_files_block_install_and_uninstall_removes_them() {
    let mut m = Mac::new();
    let body = "domain pigsty.test\nnameserver 127.0.0.1\nport 5354\n";
    let marked = files::wrap("macos-resolver", None, body);
    // Left in /etc/resolver by an older release's interrupted write: a live resolver.
    let live = m.put("/etc/resolver/.pigsty.test.pigsty-dns-tmp.4242", &marked);
    let e = m.install(DAEMON).unwrap_err();
    assert_eq!(e.class, Class::Conflict);
    assert!(
        e.message.contains("interrupted pigsty-dns write"),
        "{}",
        e.message
    );
    assert!(e.next.contains("route uninstall"), "{}", e.next);
    // Uninstall (no journal) removes it, one cut short in /private/etc, and nothing foreign.
    let cut = m.put(
        "/private/etc/.pigsty.test.pigsty-dns-tmp.77",
        &marked[..marked.len() - 20],
    );
    let foreign = m.put(
        "/etc/resolver/.pigsty.test.pigsty-dns-tmp.9",
        "nameserver 10.0.0.1\n",
    );
    let out = m.uninstall().unwrap();
    assert!(!live.exists() && !cut.exists(), "{out}");
    assert!(foreign.exists());
    std::fs::remove_file(&foreign).unwrap();
    // With a journal, too.
    m.install(DAEMON).unwrap();
    let cut = m.put(
        "/private/etc/.pigsty.test.pigsty-dns-tmp.78",
        &marked[..files::MARKER.len() + 10],
    );
    let out = m.uninstall().unwrap();
    assert!(!cut.exists(), "{out}");
    assert!(m.tree().is_empty(), "{:?}", m.tree());
}

// ---------------------------------------------------------------- uninstall and status

#[test]
fn without_a_journal_uninstall_checks_the_port_the_file_names() {
    let mut m = Mac::new();
    // Installed by a release on another port; the journal is gone.
    m.put(
        "/etc/resolver/pigsty.test",
        &files::wrap(
            "macos-resolver",
            None,
            "domain pigsty.test\nnameserver 127.0.0.1\nport 5399\n",
        ),
    );
    m.world.borrow_mut().configd_lag = 0;
    assert!(
        m.status()
            .contains("no journal, but pigsty-dns files exist")
    );
    // configd still lists the removed file for a while: the "gone" check must see port 5399 there.
    m.world.borrow_mut().configd_lag = 100;
    let e = m.uninstall().unwrap_err();
    assert_eq!(e.class, Class::Partial, "{e:?}");
    assert!(
        e.message.contains("still present") && e.message.contains("port 5399"),
        "{}",
        e.message
    );
    assert!(
        m.file("/etc/resolver/pigsty.test").is_none(),
        "the file itself went"
    );
    m.world.borrow_mut().configd_lag = 0;
    assert!(m.uninstall().unwrap().contains("nothing to uninstall"));
}

#[test]
fn route_status_on_macos_gives_macos_hints_and_reports_other_resolvers() {
    let mut m = Mac::new();
    m.install(DAEMON).unwrap();
    let ok = m.status();
    assert!(!ok.contains("FAIL"), "{ok}");
    assert!(
        ok.contains("ok   other resolvers: no other resolver claims pigsty.test"),
        "{ok}"
    );
    assert!(
        ok.contains("ok   lookup: lookup reaches the daemon"),
        "{ok}"
    );
    // Lookups stop reaching the daemon, and a VPN claims the zone.
    {
        let mut w = m.world.borrow_mut();
        w.never_applies = true;
        w.applied.clear();
        w.vpn = true;
    }
    let bad = m.status();
    assert!(
        bad.contains("FAIL other resolvers: scutil --dns resolver #"),
        "{bad}"
    );
    assert!(bad.contains("utun4"), "{bad}");
    assert!(
        bad.contains("FAIL lookup: lookup reaches the daemon"),
        "{bad}"
    );
    assert!(
        bad.contains(
            "next: sudo /usr/bin/dscacheutil -flushcache; sudo /usr/bin/killall -HUP mDNSResponder"
        ),
        "{bad}"
    );
    assert!(!bad.contains("resolvectl"), "Linux hints on macOS: {bad}");
    // The scope gone: the macOS way to put it back.
    m.world.borrow_mut().vpn = false;
    std::fs::remove_file(m.root().join("etc/resolver/pigsty.test")).unwrap();
    let gone = m.status();
    assert!(
        gone.contains("FAIL scope: scutil --dns lists no resolver for domain pigsty.test"),
        "{gone}"
    );
    assert!(
        gone.contains("sudo pigsty-dns route install --yes (rewrites /etc/resolver/pigsty.test)"),
        "{gone}"
    );
    // No route: status still reports who else claims the zone.
    let mut m = Mac::new();
    m.put(
        "/etc/resolver/corp",
        "domain pigsty.test\nnameserver 10.1.2.3\n",
    );
    let none = m.status();
    assert!(
        none.contains("FAIL other resolvers: /etc/resolver/corp"),
        "{none}"
    );
}

#[test]
fn a_route_still_on_5353_says_which_commands_move_it() {
    let mut m = Mac::new();
    m.install(DAEMON).unwrap();
    // As a release whose default was 5353 left it: the file and the journal on 5353.
    let p = m.root().join("etc/resolver/pigsty.test");
    let old = files::wrap(
        "macos-resolver",
        None,
        "domain pigsty.test\nnameserver 127.0.0.1\nport 5353\n",
    );
    std::fs::write(&p, &old).unwrap();
    let mut j = journal::read(&m.jdir()).unwrap().unwrap();
    j.server = "127.0.0.1:5353".into();
    j.files[0].sha256 = pigsty_dns::digest::sha256_hex(old.as_bytes());
    journal::write(&m.jdir(), &j).unwrap();
    let text = m.status();
    assert!(
        text.contains("FAIL port: the route points at 127.0.0.1:5353"),
        "{text}"
    );
    assert!(text.contains("mDNSResponder"), "{text}");
    assert!(
        text.contains("next: pigsty-dns service install --listen 127.0.0.1:5354")
            && text.contains("sudo pigsty-dns route install --server 127.0.0.1:5354 --yes"),
        "{text}"
    );
}

// ---------------------------------------------------------------- the reverse zone

use crate::route_adapters::{META_10, META_12, store_generation};

const REV: &str = "/etc/resolver/10.10.10.in-addr.arpa";

#[test]
fn macos_routes_the_reverse_zone_in_a_second_resolver_file() {
    let mut m = Mac::new().with_generation(META_10);
    let out = m.install(DAEMON).unwrap();
    assert!(
        out.starts_with("installed: macos-resolver routes pigsty.test and 10.10.10.in-addr.arpa"),
        "{out}"
    );
    let fwd = m.file("/etc/resolver/pigsty.test").unwrap();
    let rev = m.file(REV).unwrap();
    // Same format and marker as the zone's file.
    assert!(rev.starts_with(files::MARKER), "{rev}");
    assert!(
        rev.ends_with("\ndomain 10.10.10.in-addr.arpa\nnameserver 127.0.0.1\nport 5354\nflags a\n"),
        "{rev}"
    );
    assert_eq!(
        files::owned(&rev).map(|o| (o.adapter, o.intact)),
        Some(("macos-resolver".to_string(), true))
    );
    assert_eq!(fwd.lines().nth(2), Some("domain pigsty.test"));
    assert_eq!(
        m.resolver_entries(),
        vec!["10.10.10.in-addr.arpa", "pigsty.test"]
    );
    // Both in the journal, with their digests.
    let j = journal::read(&m.jdir()).unwrap().unwrap();
    assert_eq!(j.reverse_zone.as_deref(), Some("10.10.10.in-addr.arpa"));
    let sums: Vec<(bool, String)> = j
        .files
        .iter()
        .map(|f| (f.path.ends_with(REV), f.sha256.clone()))
        .collect();
    assert_eq!(sums.len(), 2, "{sums:?}");
    assert!(sums.contains(&(true, pigsty_dns::digest::sha256_hex(rev.as_bytes()))));
    // The scope lists both resolvers; the reverse lookup through mDNSResponder gave the canonical name.
    for want in [
        "for domain pigsty.test; scutil --dns lists resolver #3: nameserver 127.0.0.1, port 5354",
        "ok  dscacheutil (reverse): /usr/bin/dscacheutil -q host -a ip_address 10.10.10.10: meta.pigsty.test",
    ] {
        assert!(out.contains(want), "{want} in {out}");
    }
    assert!(!m.status().contains("FAIL"), "{}", m.status());
    // Idempotent; uninstall removes both files.
    let before = m.tree();
    m.install(DAEMON).unwrap();
    assert_eq!(m.tree(), before);
    let out = m.uninstall().unwrap();
    assert!(out.contains("removed") && out.contains(REV), "{out}");
    assert!(m.tree().is_empty(), "left behind: {:?}", m.tree());
}

#[test]
fn a_reverse_lookup_that_misses_the_canonical_name_fails_and_undoes_both_files() {
    let mut m = Mac::new().with_generation(META_10);
    // The daemon has no PTR for the address (it does not serve the reverse zone's names).
    m.world.borrow_mut().ptrs.clear();
    m.world
        .borrow_mut()
        .ptrs
        .insert(Ipv4Addr::new(10, 10, 10, 11), "other.pigsty.test".into());
    let e = m.install(DAEMON).unwrap_err();
    assert!(
        e.message.contains(
            "dscacheutil (reverse): /usr/bin/dscacheutil -q host -a ip_address 10.10.10.10"
        ) && e.message.contains("want meta.pigsty.test"),
        "{}",
        e.message
    );
    assert!(m.tree().is_empty(), "undone: {:?}", m.tree());
}

#[test]
fn macos_a_moved_24_is_drift_and_install_moves_the_reverse_file() {
    let mut m = Mac::new().with_generation(META_10);
    m.install(DAEMON).unwrap();
    store_generation(m.state.path(), META_12);
    let text = m.status();
    assert!(
        text.contains(
            "FAIL reverse zone: drift: the route carries 10.10.10.in-addr.arpa, but the live generation's addresses moved to 12.10.10.in-addr.arpa"
        ),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "next: sudo pigsty-dns route install --adapter macos-resolver --server {DAEMON} --zone pigsty.test --root {} --state-dir {} --yes",
            m.root().display(),
            m.state.path().display()
        )),
        "{text}"
    );
    // A re-route that fails verification (the check name's address, 10.10.10.10 as the scripted
    // daemon answers it, has no PTR in the moved generation) puts the old reverse file and journal back.
    let journal_before = std::fs::read(m.jdir().join("journal.json")).unwrap();
    let tree_before = m.tree();
    m.world.borrow_mut().ptrs.clear();
    let e = m.install(DAEMON).unwrap_err();
    assert!(
        e.message.contains("this run's changes were undone"),
        "{}",
        e.message
    );
    assert_eq!(m.tree(), tree_before);
    assert_eq!(
        std::fs::read(m.jdir().join("journal.json")).unwrap(),
        journal_before
    );
    {
        let mut w = m.world.borrow_mut();
        w.served = BTreeMap::from([("meta.pigsty.test".into(), Ipv4Addr::new(10, 10, 12, 10))]);
        w.ptrs = BTreeMap::from([(Ipv4Addr::new(10, 10, 12, 10), "meta.pigsty.test".into())]);
    }
    let plan = m
        .ctx_do(|c| route::install(c, &req(DAEMON), true, false).map(|r| r.render(false)))
        .unwrap();
    assert!(
        plan.contains(&format!(
            "remove {} (the previous install's; no longer routed)",
            files::under(m.root(), REV).display()
        )),
        "{plan}"
    );
    // The daemon answers meta at its moved address now.
    let out = m
        .ctx_do(|c| {
            c.lookup_a = &moved_lookup;
            route::install(c, &req(DAEMON), false, true).map(|r| r.render(false))
        })
        .unwrap();
    assert!(out.contains("and 12.10.10.in-addr.arpa"), "{out}");
    assert_eq!(
        m.resolver_entries(),
        vec!["12.10.10.in-addr.arpa", "pigsty.test"]
    );
    let j = journal::read(&m.jdir()).unwrap().unwrap();
    assert_eq!(j.reverse_zone.as_deref(), Some("12.10.10.in-addr.arpa"));
    assert_eq!(j.files.len(), 2, "{:?}", j.files);
    assert!(!m.status().contains("FAIL reverse zone"), "{}", m.status());
    m.uninstall().unwrap();
    assert!(m.tree().is_empty(), "left behind: {:?}", m.tree());
}

/// A macOS install journaled before reverse zones: one resolver file, no `reverse_zone`.
fn old_mac_install(m: &Mac) -> String {
    let content = files::wrap(
        "macos-resolver",
        None,
        &format!("domain {ZONE}\nnameserver 127.0.0.1\nport 5354\n"),
    );
    let p = m.put("/etc/resolver/pigsty.test", &content);
    let journal = serde_json::json!({
        "format": 1,
        "state": "installed",
        "adapter": "macos-resolver",
        "zone": ZONE,
        "server": DAEMON,
        "variant": null,
        "link": null,
        "link_address": null,
        "link_kind": null,
        "root": m.root().display().to_string(),
        "files": [{
            "path": p.display().to_string(),
            "existed_before": false,
            "sha256": pigsty_dns::digest::sha256_hex(content.as_bytes()),
        }],
        "created_dirs": [p.parent().unwrap().display().to_string()],
        "pre_undo": [],
        "undo": [
            {"argv": ["/usr/bin/dscacheutil", "-flushcache"], "why": "flush", "may_fail": false},
            {"argv": ["/usr/bin/killall", "-HUP", "mDNSResponder"], "why": "flush", "may_fail": true}
        ],
        "written_at": "2026-01-01T00:00:00Z",
    });
    std::fs::create_dir_all(m.jdir()).unwrap();
    std::fs::write(m.jdir().join("journal.json"), journal.to_string()).unwrap();
    content
}

#[test]
fn macos_an_old_journal_uninstalls_exactly_and_install_upgrades_it() {
    let mut m = Mac::new().with_generation(META_10);
    old_mac_install(&m);
    let text = m.status();
    assert!(
        text.contains("FAIL reverse zone: drift: the route carries only pigsty.test, but the live generation's addresses are in 10.10.10.in-addr.arpa"),
        "{text}"
    );
    let out = m.uninstall().unwrap();
    assert!(out.starts_with("uninstalled"), "{out}");
    assert!(m.tree().is_empty(), "left behind: {:?}", m.tree());
    // Again, and this time install over it: the upgrade writes the second file.
    old_mac_install(&m);
    let out = m.install(DAEMON).unwrap();
    assert!(out.contains("and 10.10.10.in-addr.arpa"), "{out}");
    assert_eq!(
        m.resolver_entries(),
        vec!["10.10.10.in-addr.arpa", "pigsty.test"]
    );
    let j = journal::read(&m.jdir()).unwrap().unwrap();
    assert_eq!(j.files.len(), 2);
    assert!(j.files.iter().all(|f| !f.existed_before), "{:?}", j.files);
    assert!(!m.status().contains("FAIL"), "{}", m.status());
    m.uninstall().unwrap();
    assert!(m.tree().is_empty(), "left behind: {:?}", m.tree());
}

#[test]
fn macos_without_a_journal_uninstall_finds_both_files_by_marker() {
    let mut m = Mac::new().with_generation(META_10);
    m.install(DAEMON).unwrap();
    std::fs::remove_file(m.jdir().join("journal.json")).unwrap();
    std::fs::remove_dir(m.jdir()).unwrap();
    let out = m.uninstall().unwrap();
    assert!(out.contains(REV), "{out}");
    assert!(
        m.resolver_entries().is_empty(),
        "{:?}",
        m.resolver_entries()
    );
}

#[test]
fn another_resolver_for_the_reverse_zone_makes_install_refuse() {
    let mut m = Mac::new().with_generation(META_10);
    m.put(
        "/etc/resolver/corp-reverse",
        "domain 10.10.10.in-addr.arpa\nnameserver 10.1.2.3\n",
    );
    let before = m.tree();
    let e = m.install(DAEMON).unwrap_err();
    assert_eq!(e.class, Class::Conflict, "{e:?}");
    assert!(
        e.message
            .starts_with("another resolver claims pigsty.test (or 10.10.10.in-addr.arpa)")
            && e.message.contains("/etc/resolver/corp-reverse"),
        "{}",
        e.message
    );
    assert_eq!(m.tree(), before, "nothing written");
}

// ---------------------------------------------------------------- the daemon's own evidence

/// The real daemon lists the names it answered NXDOMAIN (the probe's evidence) in its status file at
/// the next counter flush; names it has are not listed.
#[test]
fn the_real_daemon_lists_the_names_it_answered_nxdomain() {
    use crate::util::{BIN, stop};
    use std::process::{Command, Stdio};
    let state = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--state-dir"])
        .arg(state.path())
        .env_remove("PIGSTY_DNS_LISTEN")
        .env_remove("PIGSTY_DNS_STATE_DIR")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let wait_for = |f: &dyn Fn(&Status) -> bool| {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(s) = status_file::read(state.path()).filter(|s| f(s)) {
                return Some(s);
            }
            if std::time::Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let pid = child.id();
    let started = wait_for(&|s| s.pid == pid);
    let Some(s) = started else {
        stop(&mut child, Duration::ZERO, false);
        panic!("serve did not start");
    };
    assert_eq!(s.nxdomain_names, Some(vec![]));
    let port = s.listen[0].port().to_string();
    let probe = "Pigsty-DNS-Route-Check-77.pigsty.test";
    for name in [probe, "pigsty.test"] {
        let out = Command::new("dig")
            .args(["@127.0.0.1", "-p", &port, "+tries=1", "+time=2", name, "A"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    let listed = wait_for(&|s| s.nxdomain_names.as_ref().is_some_and(|n| !n.is_empty()));
    stop(&mut child, Duration::ZERO, false);
    assert_eq!(
        listed.and_then(|s| s.nxdomain_names),
        Some(vec!["pigsty-dns-route-check-77.pigsty.test".to_string()])
    );
}

// ---------------------------------------------------------------- other claimants, read as configd reads them

/// A resolver for a name under the zone takes that subtree (the longest domain wins): a claimant too,
/// at install and in status — for the reverse zone as well as the zone.
#[test]
fn resolvers_for_subdomains_of_either_zone_are_claimants() {
    let mut m = Mac::new();
    m.put("/etc/resolver/db.pigsty.test", "nameserver 10.1.2.3\n");
    let e = m.install(DAEMON).unwrap_err();
    assert_eq!(e.class, Class::Conflict, "{e:?}");
    assert!(
        e.message.contains("/etc/resolver/db.pigsty.test")
            && e.message.contains("inside pigsty.test"),
        "{}",
        e.message
    );
    assert!(
        m.status()
            .contains("FAIL other resolvers: /etc/resolver/db.pigsty.test")
    );
    // Installed with the reverse zone; then resolvers appear for it and for one name under it.
    let mut m = Mac::new().with_generation(META_10);
    m.install(DAEMON).unwrap();
    assert!(!m.status().contains("FAIL"), "{}", m.status());
    m.put(
        "/etc/resolver/corp-reverse",
        "domain 10.10.10.in-addr.arpa\nnameserver 10.1.2.3\n",
    );
    m.put(
        "/etc/resolver/one-ptr",
        "domain 10.10.10.10.in-addr.arpa\nnameserver 10.1.2.4\n",
    );
    let text = m.status();
    let line = text
        .lines()
        .find(|l| l.contains("other resolvers"))
        .unwrap_or_default();
    assert!(
        line.starts_with("FAIL")
            && line.contains("/etc/resolver/corp-reverse")
            && line.contains("/etc/resolver/one-ptr")
            && line.contains("inside 10.10.10.in-addr.arpa"),
        "{text}"
    );
}

/// configd splits on every single blank and strips only `\n`: a line with leading whitespace, a
/// `domain` with two blanks before its value and a CRLF file claim nothing — the zone installs beside
/// them — while a tab-separated, upper-case, dotted `domain` line does claim it.
#[test]
fn claimants_are_found_exactly_as_configd_reads_the_files() {
    let mut m = Mac::new();
    m.put(
        "/etc/resolver/indented",
        " domain pigsty.test\nnameserver 10.1.2.3\n",
    );
    m.put(
        "/etc/resolver/two-blanks",
        "domain  pigsty.test\nnameserver 10.1.2.3\n",
    );
    m.put(
        "/etc/resolver/crlf",
        "domain pigsty.test\r\nnameserver 10.1.2.3\r\n",
    );
    let out = m.install(DAEMON).unwrap();
    assert!(out.starts_with("installed:"), "{out}");
    assert!(
        m.status()
            .contains("ok   other resolvers: no other resolver claims pigsty.test"),
        "{}",
        m.status()
    );
    m.uninstall().unwrap();
    let mut m = Mac::new();
    m.put(
        "/etc/resolver/tabbed",
        "DOMAIN\tpigsty.test.\nnameserver 10.1.2.3\nport 0x14eb\n",
    );
    let e = m.install(DAEMON).unwrap_err();
    assert!(
        e.message.contains("/etc/resolver/tabbed")
            && e.message.contains("its `domain pigsty.test` line")
            && e.message.contains("port 5355"),
        "{}",
        e.message
    );
}

/// An interrupted write's temporary file is found for any zone, not only the default one.
#[test]
fn stale_temporary_files_of_another_zone_are_found_and_removed() {
    let mut m = Mac::new();
    let marked = files::wrap(
        "macos-resolver",
        None,
        "domain corp.test\nnameserver 127.0.0.1\nport 5354\nflags a\n",
    );
    let live = m.put("/etc/resolver/.corp.test.pigsty-dns-tmp.4242", &marked);
    let cut = m.put("/private/etc/.corp.test.pigsty-dns-tmp.77", &marked);
    let mut r = req(DAEMON);
    r.zones = Zones::parse(&["corp.test"]).unwrap();
    let e = m
        .ctx_do(|c| route::install(c, &r, false, true).map(|_| ()))
        .unwrap_err();
    assert_eq!(e.class, Class::Conflict);
    assert!(
        e.message.contains(".corp.test.pigsty-dns-tmp.4242")
            && e.message.contains("interrupted pigsty-dns write"),
        "{}",
        e.message
    );
    m.uninstall().unwrap();
    assert!(!live.exists() && !cut.exists(), "{:?}", m.tree());
}

#[test]
fn macos_routes_every_zone_with_a_resolver_file_each_and_uninstall_removes_them_all() {
    let mut m = Mac::new().with_generation(META_10);
    m.world.borrow_mut().pigsty_served = true;
    let r = Request {
        zones: Zones::parse(&["pigsty.test", "pigsty"]).unwrap(),
        ..req(DAEMON)
    };
    let out = m
        .ctx_do(|c| route::install(c, &r, false, true).map(|r| r.render(false)))
        .unwrap();
    assert!(
        out.starts_with(&format!(
            "installed: macos-resolver routes pigsty.test, pigsty and 10.10.10.in-addr.arpa to {DAEMON}"
        )),
        "{out}"
    );
    let port = DAEMON.rsplit(':').next().unwrap();
    for z in ["pigsty.test", "pigsty", "10.10.10.in-addr.arpa"] {
        let f = m
            .file(&format!("/etc/resolver/{z}"))
            .unwrap_or_else(|| panic!("{z}: {:?}", m.tree()));
        assert!(
            f.ends_with(&format!(
                "domain {z}\nnameserver 127.0.0.1\nport {port}\nflags a\n"
            )),
            "{z}: {f}"
        );
    }
    // Each forward zone proven on its own: a fresh name of each reached the daemon.
    let probes = out
        .lines()
        .filter(|l| l.contains("lookup reaches the daemon: getaddrinfo("))
        .count();
    assert_eq!(probes, 2, "{out}");
    let text = m.status();
    assert!(!text.contains("FAIL"), "{text}");
    // The second zone's file gone: the scope item names that zone, and its way back rewrites every
    // file the route holds, not only the first zone's.
    std::fs::remove_file(m.root().join("etc/resolver/pigsty")).unwrap();
    let gone = m.status();
    assert!(
        gone.contains(
            "FAIL scope: scutil --dns lists no resolver for domain pigsty: configd has not read /etc/resolver/pigsty\n"
        ),
        "{gone}"
    );
    assert!(
        gone.contains(
            "sudo pigsty-dns route install --yes (rewrites /etc/resolver/pigsty.test, \
             /etc/resolver/pigsty and /etc/resolver/10.10.10.in-addr.arpa)"
        ),
        "{gone}"
    );
    // The reinstall the drift item gives keeps both zones, though the live generation (sealed for
    // pigsty.test alone) names one: the default set, so no --zone.
    assert!(
        gone.contains(&format!(
            "else sudo pigsty-dns route install --adapter macos-resolver --server {DAEMON} --root "
        )),
        "{gone}"
    );
    m.uninstall().unwrap();
    assert!(
        m.file("/etc/resolver/pigsty").is_none() && m.file("/etc/resolver/pigsty.test").is_none(),
        "{:?}",
        m.tree()
    );
}
