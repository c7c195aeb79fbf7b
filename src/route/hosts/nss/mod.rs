//! The `hosts:` line of `/etc/nsswitch.conf`: its sources in order with their `[STATUS=action]` items,
//! and the questions the route needs answered from it, as pure functions.
//!
//! Read as glibc 2.33 and later reads it (`nss/nss_database.c`, `nss/nss_action_parse.c`): leading
//! blanks skipped, the database name ends at a blank or `:`, the **last** `hosts:` line wins, and with
//! no `hosts:` line (or no file) the default is `files dns`. Each source's actions default to
//! `SUCCESS=return` and `continue` for the rest (nsswitch.conf(5)); `[!STATUS=action]` sets every other
//! status; keywords are case-insensitive; a bad status or action makes glibc refuse the whole file. glibc
//! stops reading the line at a second bracket after one source, and has no comments inside a line (a
//! trailing `# …` is read as module names, which fail to load: UNAVAIL).
//!
//! What a source can answer for a name in our zone (not `.local`, not the host's own name) decides
//! whether a lookup gets past it: `files` NOTFOUND (for a name not in the hosts file), `myhostname`
//! NOTFOUND, `mymachines` NOTFOUND or UNAVAIL, nss-mdns's modules UNAVAIL (they skip names outside
//! `.local` with `NSS_STATUS_UNAVAIL`, avahi/nss-mdns `src/nss.c`, so `mdns4_minimal [NOTFOUND=return]`
//! does not stop them), and any other module anything. So a verdict that a lookup never reaches
//! `resolve`/`dns` is only given when it is certain.
//!
//! The order is not the whole answer: systemd-resolved reads `/etc/hosts` itself (`ReadEtcHosts=`,
//! default yes; nss-resolve(8) asks for `resolve` before `files` for that reason), so where lookups
//! reach resolved, hosts lines answer before the route whatever the order ([`resolved_reads_etc_hosts`];
//! the findings take both).
//!
//! musl (Alpine) has no NSS at all: it reads `/etc/hosts`, then DNS, whatever this file says (Alpine's
//! `hosts: files dns` line says so for the programs that read it).

use std::path::Path;

use serde::Serialize;

/// An NSS lookup's result, as nsswitch.conf(5) names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Status {
    #[serde(rename = "SUCCESS")]
    Success,
    #[serde(rename = "NOTFOUND")]
    NotFound,
    #[serde(rename = "UNAVAIL")]
    Unavail,
    #[serde(rename = "TRYAGAIN")]
    TryAgain,
}

impl Status {
    pub const ALL: [Status; 4] = [
        Status::Success,
        Status::NotFound,
        Status::Unavail,
        Status::TryAgain,
    ];

    fn index(self) -> usize {
        self as usize
    }

    fn parse(word: &str) -> Option<Status> {
        Status::ALL
            .into_iter()
            .find(|s| s.keyword().eq_ignore_ascii_case(word))
    }

    fn keyword(self) -> &'static str {
        match self {
            Status::Success => "SUCCESS",
            Status::NotFound => "NOTFOUND",
            Status::Unavail => "UNAVAIL",
            Status::TryAgain => "TRYAGAIN",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Return,
    Continue,
    /// Defined for `group`; for `hosts` a lookup goes on to the next source, as with continue.
    Merge,
}

impl Action {
    fn parse(word: &str) -> Option<Action> {
        [Action::Return, Action::Continue, Action::Merge]
            .into_iter()
            .find(|a| format!("{a:?}").eq_ignore_ascii_case(word))
    }
}

/// One source of the `hosts:` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Source {
    pub name: String,
    /// The action per status, in [`Status::ALL`] order.
    #[serde(skip)]
    pub actions: [Action; 4],
    /// As written, with its bracket: `mdns4_minimal [NOTFOUND=return]`.
    pub written: String,
}

impl Source {
    fn new(name: &str) -> Source {
        let mut actions = [Action::Continue; 4];
        actions[Status::Success.index()] = Action::Return;
        Source {
            name: name.to_string(),
            actions,
            written: name.to_string(),
        }
    }

    pub fn action(&self, s: Status) -> Action {
        self.actions[s.index()]
    }

    fn is_target(&self) -> bool {
        self.name == "resolve" || self.name == "dns"
    }

    /// What this source can answer for a name in `zone` that is not in the hosts file; for
    /// `resolve`/`dns`, `target`.
    fn plausible<'a>(&self, zone: &str, target: &'a [Status]) -> &'a [Status] {
        const NOT_FOUND: &[Status] = &[Status::NotFound];
        const NOT_FOUND_OR_UNAVAIL: &[Status] = &[Status::NotFound, Status::Unavail];
        const UNAVAIL: &[Status] = &[Status::Unavail];
        let local = zone == "local" || zone.ends_with(".local");
        match self.name.as_str() {
            "resolve" | "dns" => target,
            "files" | "myhostname" => NOT_FOUND,
            "mymachines" => NOT_FOUND_OR_UNAVAIL,
            "mdns" | "mdns4" | "mdns6" | "mdns_minimal" | "mdns4_minimal" | "mdns6_minimal"
                if !local =>
            {
                UNAVAIL
            }
            n if n.starts_with('#') => UNAVAIL,
            _ => &Status::ALL,
        }
    }

    /// Whether a lookup can go on past this source, given what it can answer.
    fn passes(&self, statuses: &[Status]) -> bool {
        statuses.iter().any(|&s| self.action(s) != Action::Return)
    }
}

/// The `hosts:` line in effect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NssHosts {
    pub sources: Vec<Source>,
    /// 1-based line in nsswitch.conf; `None` when glibc's default `files dns` applies.
    pub line: Option<usize>,
    /// The line as written (trimmed), or `hosts: files dns` for the default.
    pub text: String,
    /// Earlier `hosts:` lines the last one overrides.
    pub overridden: Vec<usize>,
    /// What glibc stops reading at (text after a second bracket).
    pub ignored: Option<String>,
}

/// A `hosts:` line glibc refuses (and with it the whole file: lookups then fail).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NssError {
    pub line: usize,
    pub reason: String,
}

impl std::fmt::Display for NssError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

impl std::error::Error for NssError {}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

impl NssHosts {
    /// glibc's `hosts` default when nsswitch.conf has no `hosts:` line or does not exist.
    pub fn glibc_default() -> NssHosts {
        let (sources, ignored) = parse_sources("files dns").unwrap_or_default();
        NssHosts {
            sources,
            line: None,
            text: "hosts: files dns".into(),
            overridden: Vec::new(),
            ignored,
        }
    }

    /// Parses nsswitch.conf's text and keeps its last `hosts:` line.
    pub fn parse(text: &str) -> Result<NssHosts, NssError> {
        let mut found: Option<NssHosts> = None;
        let mut earlier = Vec::new();
        for (i, raw) in text.split('\n').enumerate() {
            let line = raw.trim_start_matches(|c: char| c.is_ascii() && is_space(c as u8));
            let end = line
                .find(|c: char| c == ':' || (c.is_ascii() && is_space(c as u8)))
                .unwrap_or(line.len());
            if end == 0 || end == line.len() || &line[..end] != "hosts" {
                continue;
            }
            let rest = line[end..]
                .trim_start_matches(|c: char| c == ':' || (c.is_ascii() && is_space(c as u8)));
            let (sources, ignored) = parse_sources(rest).map_err(|reason| NssError {
                line: i + 1,
                reason,
            })?;
            if let Some(prev) = found.take().and_then(|f| f.line) {
                earlier.push(prev);
            }
            found = Some(NssHosts {
                sources,
                line: Some(i + 1),
                text: line.trim_end().to_string(),
                overridden: Vec::new(),
                ignored,
            });
        }
        Ok(match found {
            Some(mut h) => {
                h.overridden = earlier;
                h
            }
            None => NssHosts::glibc_default(),
        })
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.sources.iter().position(|s| s.name == name)
    }

    /// Per source: can a lookup of a name in `zone` (not in the hosts file) get to it, when
    /// `resolve`/`dns` answer one of `target`?
    fn reachable(&self, zone: &str, target: &[Status]) -> Vec<bool> {
        let mut on = true;
        self.sources
            .iter()
            .map(|s| {
                let here = on;
                on = on && s.passes(s.plausible(zone, target));
                here
            })
            .collect()
    }

    /// Where `files` (the hosts file) stands for a name in `zone`: before the zone's sources, so hosts
    /// lines shadow the zone, or after them, and then when it is still consulted.
    pub fn files_order(&self, zone: &str) -> FilesOrder {
        let Some(files) = self.position("files") else {
            return FilesOrder::NotConsulted;
        };
        let first_target = |reach: &[bool]| {
            self.sources
                .iter()
                .zip(reach)
                .position(|(s, &r)| r && s.is_target())
        };
        let any = self.reachable(zone, &Status::ALL);
        if !any[files] {
            return FilesOrder::NotConsulted;
        }
        if first_target(&any).is_none_or(|t| t > files) {
            return FilesOrder::FilesFirst;
        }
        if self.reachable(zone, &[Status::NotFound])[files] {
            return FilesOrder::AfterNotFound;
        }
        if self.reachable(zone, &[Status::Unavail, Status::TryAgain])[files] {
            return FilesOrder::AfterUnavailable;
        }
        FilesOrder::NotConsulted
    }

    /// Whether a lookup of a name in `zone` that the hosts file does not hold can reach `resolve`
    /// and `dns` at all, and if neither, the source that returns before them.
    pub fn reach(&self, zone: &str) -> Reach {
        let reach = self.reachable(zone, &Status::ALL);
        let at = |name: &str| self.position(name).is_some_and(|i| reach[i]);
        let (resolve, dns) = (at("resolve"), at("dns"));
        let last_target = self.sources.iter().rposition(Source::is_target);
        let blocker = match (resolve || dns, last_target) {
            (false, Some(t)) => reach[..t]
                .iter()
                .rposition(|&r| r)
                .map(|i| self.sources[i].written.clone()),
            _ => None,
        };
        Reach {
            resolve,
            dns,
            blocker,
        }
    }

    /// Whether a route can take effect for `getaddrinfo` at all. `dns_reaches_route`: the `dns`
    /// source's servers lead to the route (for the resolved adapters: [`resolv_conf_points_at_stub`]
    /// or [`resolv_target_is_stub`]).
    pub fn route_effect(&self, zone: &str, dns_reaches_route: bool) -> RouteEffect {
        let line = &self.text;
        if self.position("resolve").is_none() && self.position("dns").is_none() {
            return RouteEffect::Unsupported(format!(
                "the NSS hosts line ({line:?}) lists neither resolve nor dns: getaddrinfo never asks a DNS server, so no route can take effect"
            ));
        }
        let r = self.reach(zone);
        if r.resolve {
            return RouteEffect::Resolve;
        }
        if r.dns && dns_reaches_route {
            return RouteEffect::Dns;
        }
        if let Some(b) = r.blocker {
            return RouteEffect::Unsupported(format!(
                "in the NSS hosts line ({line:?}) {b:?} returns for every answer it gives a name in {zone}, so a lookup never reaches resolve or dns"
            ));
        }
        RouteEffect::Unsupported(format!(
            "the NSS hosts line ({line:?}) reaches only dns, and /etc/resolv.conf does not point at systemd-resolved's stub (nameserver 127.0.0.53, or a symlink to stub-resolv.conf): getaddrinfo's queries never reach the route"
        ))
    }
}

/// Where the hosts file is consulted for a name in the zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FilesOrder {
    /// `files` before `resolve`/`dns` (every stock glibc line but Arch's): hosts lines answer first.
    FilesFirst,
    /// After them, but reached when they answer NOTFOUND (e.g. `dns files`): hosts lines still answer
    /// for names and addresses the zone does not serve.
    AfterNotFound,
    /// After them, reached only when they are unavailable (`resolve [!UNAVAIL=return] files`, Arch;
    /// resolved itself still reads the hosts file unless `ReadEtcHosts=no`).
    AfterUnavailable,
    /// Not listed, or never reached.
    NotConsulted,
}

impl FilesOrder {
    /// Whether a hosts line answers in the zone's place, given whether the zone has an answer.
    pub fn shadows(self, zone_answers: bool) -> bool {
        match self {
            FilesOrder::FilesFirst => true,
            FilesOrder::AfterNotFound => !zone_answers,
            FilesOrder::AfterUnavailable | FilesOrder::NotConsulted => false,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            FilesOrder::FilesFirst => {
                "files comes before resolve/dns: the hosts file answers first"
            }
            FilesOrder::AfterNotFound => {
                "files comes after resolve/dns and is asked when they find nothing"
            }
            FilesOrder::AfterUnavailable => {
                "files comes after resolve/dns and is asked only when they are unavailable"
            }
            FilesOrder::NotConsulted => "files is not consulted",
        }
    }
}

/// Which of the zone's sources a lookup can get to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reach {
    pub resolve: bool,
    pub dns: bool,
    /// When neither: the source (as written) after which every lookup has returned.
    pub blocker: Option<String>,
}

/// Whether a route can take effect for `getaddrinfo`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "via", content = "reason", rename_all = "snake_case")]
pub enum RouteEffect {
    /// Through nss-resolve (systemd-resolved's own routing).
    Resolve,
    /// Through glibc's DNS client and /etc/resolv.conf.
    Dns,
    /// Never: why, naming the line (`route install` refuses with exit 3).
    Unsupported(String),
}

/// Parses the sources after `hosts:`; the text glibc stops at, if any.
fn parse_sources(s: &str) -> Result<(Vec<Source>, Option<String>), String> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    let skip = |i: &mut usize| {
        while *i < b.len() && is_space(b[*i]) {
            *i += 1;
        }
    };
    loop {
        skip(&mut i);
        if i == b.len() {
            return Ok((out, None));
        }
        let start = i;
        while i < b.len() && !is_space(b[i]) && b[i] != b'[' {
            i += 1;
        }
        if i == start {
            return Ok((out, Some(s[start..].trim_end().to_string())));
        }
        let mut src = Source::new(&s[start..i]);
        skip(&mut i);
        if i < b.len() && b[i] == b'[' {
            i += 1;
            criteria(s, &mut i, &mut src)?;
        }
        src.written = s[start..i].trim_end().to_string();
        out.push(src);
    }
}

/// Reads `( "!"? STATUS "=" ACTION )+ "]"` after a `[`.
fn criteria(s: &str, i: &mut usize, src: &mut Source) -> Result<(), String> {
    let b = s.as_bytes();
    let skip = |i: &mut usize| {
        while *i < b.len() && is_space(b[*i]) {
            *i += 1;
        }
    };
    let word = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && !is_space(b[*i]) && b[*i] != b'=' && b[*i] != b']' {
            *i += 1;
        }
        &s[start..*i]
    };
    skip(i);
    loop {
        let not = b.get(*i) == Some(&b'!');
        if not {
            *i += 1;
        }
        let w = word(i);
        let status = Status::parse(w).ok_or_else(|| {
            if w.is_empty() {
                format!("{:?} has an unterminated or empty [ ]", src.name)
            } else {
                format!("{w:?} is not an NSS status (SUCCESS, NOTFOUND, UNAVAIL, TRYAGAIN)")
            }
        })?;
        skip(i);
        if b.get(*i) != Some(&b'=') {
            return Err(format!(
                "{status:?} after {:?} has no \"=action\"",
                src.name
            ));
        }
        *i += 1;
        skip(i);
        let w = word(i);
        let action = Action::parse(w)
            .ok_or_else(|| format!("{w:?} is not an NSS action (return, continue, merge)"))?;
        if not {
            let keep = src.action(status);
            src.actions = [action; 4];
            src.actions[status.index()] = keep;
        } else {
            src.actions[status.index()] = action;
        }
        skip(i);
        if b.get(*i) == Some(&b']') {
            *i += 1;
            return Ok(());
        }
    }
}

/// Whether resolv.conf's text sends glibc's queries to systemd-resolved's stub: its first
/// `nameserver` is 127.0.0.53 (glibc asks the servers in order).
pub fn resolv_conf_points_at_stub(text: &str) -> bool {
    text.lines()
        .map(str::trim_start)
        .filter(|l| !l.starts_with('#') && !l.starts_with(';'))
        .filter_map(|l| {
            let mut w = l.split_ascii_whitespace();
            (w.next() == Some("nameserver")).then(|| w.next()).flatten()
        })
        .next()
        == Some("127.0.0.53")
}

/// Whether resolv.conf's symlink target is resolved's stub file (`/run/systemd/resolve/stub-resolv.conf`
/// and its relative spellings); `resolv.conf` beside it lists the upstream servers instead.
pub fn resolv_target_is_stub(target: &Path) -> bool {
    target.file_name().is_some_and(|n| n == "stub-resolv.conf")
}

/// Whether systemd-resolved reads /etc/hosts itself (resolved.conf(5) `ReadEtcHosts=`, default yes),
/// from the texts of `/etc/systemd/resolved.conf` and its drop-ins in the order systemd reads them
/// (the main file first, then `resolved.conf.d/*.conf` by file name): the last assignment in a
/// `[Resolve]` section wins; an empty one resets to the default; a value systemd cannot read as a
/// boolean is ignored, as systemd ignores it.
pub fn resolved_reads_etc_hosts(texts: &[&str]) -> bool {
    crate::sys::resolved_conf::boolean_setting(texts, "ReadEtcHosts", true)
}

#[cfg(test)]
mod tests;
