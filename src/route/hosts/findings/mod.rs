//! What the hosts file answers in the zone's place, compared with the live generation: shadowed zone
//! names, shadowed reverse lookups and short names that disagree, each with its line, class, the
//! zone's answer and a `next:` that fits who owns the line. Pure: the caller reads the files.
//!
//! Names compare case-insensitively with one trailing dot ignored, and only by membership of a served
//! zone (`x` is in `pigsty.test` when it is the apex or ends in `.pigsty.test`): a `.pigsty` line
//! (Pigsty's `# pigsty dns` lines, a `node_etc_hosts` copy, Barn's block) is a finding once `pigsty`
//! is served, and never by its suffix alone. A single label compares with its name under the first
//! zone, where the daemon places it. pigsty-dns never edits the hosts file, so no `next:` offers to.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr};

use serde::Serialize;

use super::file::{BarnBlock, HostsError, HostsFile, HostsLine, LineClass};
use super::nss::{FilesOrder, NssHosts};
use crate::dns::name::in_zone;
use crate::input::records::{Ptr, Record};
use crate::zone::generation::Generation;
use crate::zone::reverse::ptr_owner;

/// What the live generation answers, as the findings need it.
pub trait ZoneAnswers {
    /// The first served zone (where a single label goes), lowercase, without the trailing dot.
    fn zone(&self) -> &str;
    /// Every served forward zone, the first one first; a generation of one zone serves `zone` alone.
    fn zones(&self) -> Vec<&str> {
        vec![self.zone()]
    }
    /// The served records, sorted by name (lowercase, without the trailing dot), all in one /24.
    fn records(&self) -> &[Record];
    /// The PTRs, sorted by address.
    fn ptrs(&self) -> &[Ptr];

    /// The A record of a lowercase name without the trailing dot; `None`: NXDOMAIN or no A.
    fn address_of(&self, fqdn: &str) -> Option<Ipv4Addr> {
        let records = self.records();
        let i = records
            .binary_search_by(|r| r.name.as_str().cmp(fqdn))
            .ok()?;
        Some(records[i].address)
    }

    /// The managed /24 (its first three octets, the first record's as
    /// [`crate::input::records::reverse_zone`] takes it); `None` for the empty zone.
    fn reverse_net(&self) -> Option<[u8; 3]> {
        let [a, b, c, _] = self.records().first()?.address.octets();
        Some([a, b, c])
    }

    /// The PTR target of an address, lowercase, without the trailing dot.
    fn ptr_of(&self, address: Ipv4Addr) -> Option<&str> {
        let ptrs = self.ptrs();
        let i = ptrs.binary_search_by(|p| p.address.cmp(&address)).ok()?;
        Some(ptrs[i].name.trim_end_matches('.'))
    }
}

/// A checked generation (what `route::live` reads from the state dir).
impl ZoneAnswers for Generation {
    fn zone(&self) -> &str {
        self.zone.trim_end_matches('.')
    }
    fn records(&self) -> &[Record] {
        &self.records
    }
    fn ptrs(&self) -> &[Ptr] {
        &self.ptr
    }
}

/// The zone with nothing loaded yet: every name NXDOMAIN, no reverse zone.
#[derive(Debug, Clone)]
pub struct EmptyZone(pub String);

impl ZoneAnswers for EmptyZone {
    fn zone(&self) -> &str {
        &self.0
    }
    fn records(&self) -> &[Record] {
        &[]
    }
    fn ptrs(&self) -> &[Ptr] {
        &[]
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// A name in the zone: the hosts file answers it in the zone's place.
    ShadowedName,
    /// An address in the managed /24: `getent hosts ADDR` gets the line's first name, not the PTR.
    ShadowedReverse,
    /// A single label whose zone name serves another address.
    ShortNameDisagrees,
}

/// One finding. Its JSON fields are documented on [`Summary`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub kind: FindingKind,
    pub line: usize,
    pub class: LineClass,
    pub text: String,
    pub hosts_address: IpAddr,
    pub hosts_name: String,
    pub zone_name: String,
    pub zone_answer: Option<String>,
    pub same: bool,
    pub shadows: bool,
    pub failure: bool,
    pub reason: String,
    pub next: String,
}

/// Where the hosts file stands in lookups, and what says so (for the findings' words).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NssSummary {
    /// The nsswitch.conf line number; `None` for glibc's default or a platform without NSS.
    pub line: Option<usize>,
    /// The `hosts:` line, or what decides the order elsewhere (macOS: mDNSResponder).
    pub text: String,
    pub files_order: FilesOrder,
    /// Lookups reach systemd-resolved (nss-resolve, or `dns` to its stub) and it reads the hosts file
    /// itself (`ReadEtcHosts=`, default yes, see [`super::nss::resolved_reads_etc_hosts`]): then a
    /// hosts line answers before the route whatever `files_order` says (nss-resolve(8): resolved
    /// "supports /etc/hosts internally").
    pub resolved_reads_hosts: bool,
}

impl NssSummary {
    /// `resolved_reads_hosts`: see the field; the caller knows whether the route is resolved's.
    pub fn from_nss(nss: &NssHosts, zone: &str, resolved_reads_hosts: bool) -> NssSummary {
        NssSummary {
            line: nss.line,
            text: nss.text.clone(),
            files_order: nss.files_order(zone),
            resolved_reads_hosts,
        }
    }

    /// Whether a hosts line answers in the zone's place, given whether the zone has an answer.
    pub fn shadows(&self, zone_answers: bool) -> bool {
        self.resolved_reads_hosts || self.files_order.shadows(zone_answers)
    }

    /// macOS: mDNSResponder loads the hosts file as local-only records and answers from them first.
    pub fn macos() -> NssSummary {
        NssSummary {
            line: None,
            text: "macOS mDNSResponder (answers from the hosts file before any server)".into(),
            files_order: FilesOrder::FilesFirst,
            resolved_reads_hosts: false,
        }
    }
}

/// One trailing dot off, ASCII lowercase: how a hosts name is compared with the zone.
fn fold(name: &str) -> String {
    name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase()
}

/// What the finding's words need beyond the line.
struct Ctx<'a> {
    path: &'a str,
    nss: &'a NssSummary,
    barn: Option<BarnBlock>,
}

impl Ctx<'_> {
    fn next(&self, line: &HostsLine, what: &str) -> String {
        match (line.class, self.barn) {
            (LineClass::Barn, Some(b)) => format!(
                "run `barn hosts uninstall` (it removes Barn's block, lines {}-{}), or re-sync Barn without {what}",
                b.begin, b.end
            ),
            _ => format!(
                "delete line {} of {} by hand: {}",
                line.number, self.path, line.text
            ),
        }
    }

    /// The reason, with how the line gets in first when only resolved's own hosts reading lets it.
    fn via(&self, reason: String, shadows: bool, zone_answers: bool) -> String {
        if shadows && !self.nss.files_order.shadows(zone_answers) {
            format!(
                "{reason} (through systemd-resolved, which reads the hosts file itself before the route: ReadEtcHosts=yes)"
            )
        } else {
            reason
        }
    }

    fn not_a_shadow(&self) -> String {
        format!(
            "not a shadow: {} ({:?})",
            self.nss.files_order.describe(),
            self.nss.text
        )
    }
}

/// Every finding of `file`, in line order (a line's names in order, then its address).
pub fn findings(
    file: &HostsFile,
    path: &str,
    nss: &NssSummary,
    zone: &dyn ZoneAnswers,
) -> Vec<Finding> {
    let ctx = Ctx {
        path,
        nss,
        barn: file.barn,
    };
    let mut out = Vec::new();
    for line in &file.lines {
        let mut seen = HashSet::new();
        for name in &line.names {
            let folded = fold(name);
            if !seen.insert(folded.clone()) {
                continue;
            }
            if zone.zones().iter().any(|z| in_zone(&folded, z)) {
                out.push(shadowed_name(&ctx, line, name, folded, zone));
            } else if !folded.contains('.')
                && let Some(f) = short_name(&ctx, line, name, &folded, zone)
            {
                out.push(f);
            }
        }
        if let Some(f) = shadowed_reverse(&ctx, line, zone) {
            out.push(f);
        }
    }
    out
}

fn shadowed_name(
    ctx: &Ctx,
    line: &HostsLine,
    name: &str,
    fqdn: String,
    zone: &dyn ZoneAnswers,
) -> Finding {
    let served = zone.address_of(&fqdn);
    let addr = line.address;
    let same = served.is_some() && served == line.ipv4();
    let shadows = ctx.nss.shadows(served.is_some());
    let reason = match (shadows, served) {
        (false, _) => ctx.not_a_shadow(),
        (true, _) if same => format!(
            "the hosts file answers {name} with the zone's own address {addr}: it agrees, but keeps answering after the route or the daemon is gone"
        ),
        (true, Some(z)) => format!(
            "the hosts file answers {name} with {addr} before the zone, which serves {z}: this name never comes from pigsty-dns"
        ),
        (true, None) => format!(
            "the hosts file answers {name} with {addr}, a name the zone serves no address for (NXDOMAIN or no A): this answer never comes from pigsty-dns"
        ),
    };
    let reason = ctx.via(reason, shadows, served.is_some());
    Finding {
        kind: FindingKind::ShadowedName,
        line: line.number,
        class: line.class,
        text: line.text.clone(),
        hosts_address: addr,
        hosts_name: name.to_string(),
        next: ctx.next(line, name),
        zone_name: fqdn,
        zone_answer: served.map(|a| a.to_string()),
        same,
        shadows,
        failure: shadows && !same,
        reason,
    }
}

fn short_name(
    ctx: &Ctx,
    line: &HostsLine,
    name: &str,
    label: &str,
    zone: &dyn ZoneAnswers,
) -> Option<Finding> {
    let fqdn = format!("{label}.{}", zone.zone());
    let served = zone.address_of(&fqdn)?;
    if line.ipv4() == Some(served) {
        return None;
    }
    let addr = line.address;
    // The zone never answers a single label itself, so files is asked whenever it is reached.
    let shadows = ctx.nss.shadows(false);
    let reason = if shadows {
        format!(
            "{name} answers {addr} from the hosts file, but {fqdn} is {served} in the zone: the same host answers at two addresses depending on spelling"
        )
    } else {
        ctx.not_a_shadow()
    };
    let reason = ctx.via(reason, shadows, false);
    Some(Finding {
        kind: FindingKind::ShortNameDisagrees,
        line: line.number,
        class: line.class,
        text: line.text.clone(),
        hosts_address: addr,
        hosts_name: name.to_string(),
        next: ctx.next(line, name),
        zone_name: fqdn,
        zone_answer: Some(served.to_string()),
        same: false,
        shadows,
        failure: shadows,
        reason,
    })
}

fn shadowed_reverse(ctx: &Ctx, line: &HostsLine, zone: &dyn ZoneAnswers) -> Option<Finding> {
    let v4 = line.ipv4()?;
    let [a, b, c, _] = v4.octets();
    if zone.reverse_net()? != [a, b, c] {
        return None;
    }
    // gethostbyaddr's answer from a hosts line is its first name.
    let first = line.names.first()?;
    let ptr = zone.ptr_of(v4);
    let same = ptr.is_some_and(|p| p == fold(first));
    let shadows = ctx.nss.shadows(ptr.is_some());
    let reason = match (shadows, ptr) {
        (false, _) => ctx.not_a_shadow(),
        (true, _) if same => format!(
            "getent hosts {v4} answers {first} from the hosts file, the zone's own PTR: it agrees, but keeps answering after the route or the daemon is gone"
        ),
        (true, Some(p)) => {
            format!("getent hosts {v4} answers {first} from the hosts file, not the zone's PTR {p}")
        }
        (true, None) => format!(
            "getent hosts {v4} answers {first} from the hosts file; the zone has no PTR for {v4}"
        ),
    };
    let reason = ctx.via(reason, shadows, ptr.is_some());
    Some(Finding {
        kind: FindingKind::ShadowedReverse,
        line: line.number,
        class: line.class,
        text: line.text.clone(),
        hosts_address: line.address,
        hosts_name: first.clone(),
        next: ctx.next(line, &format!("the {v4} entry")),
        zone_name: ptr_owner(v4),
        zone_answer: ptr.map(str::to_string),
        same,
        shadows,
        failure: shadows && !same,
        reason,
    })
}

/// The hosts file's part of `route status --json`: one object, stable field names.
///
/// - `file`: the path read. `state`: `"read"`, `"missing"` (no hosts file: nothing answers before
///   the zone) or `"error"`; then `error` is `{kind, line, reason}` (`kind`: `not_regular`,
///   `too_large`, `nul`, `unreadable`, `malformed_marker`, `nested_begin`, `duplicate_block`,
///   `end_without_begin`, `unterminated`; `line`: 1-based or null) and `findings` is empty.
/// - `barn_block`: `{begin, end}`, the marker lines of Barn's block, or null. `lines`: lines that
///   answer lookups; `skipped`: lines glibc ignores (a bad address, or no name).
/// - `nss`: `{line, text, files_order, resolved_reads_hosts}`: the `hosts:` line in effect (`line`
///   null for glibc's default or macOS), where the hosts file stands in it (`files_first`,
///   `after_not_found`, `after_unavailable`, `not_consulted`), and whether systemd-resolved, on the
///   route's path, answers from the hosts file itself (then lines shadow whatever the order).
/// - `findings`: each `{kind, line, class, text, hosts_address, hosts_name, zone_name, zone_answer,
///   same, shadows, failure, reason, next}`. `kind`: `shadowed_name`, `shadowed_reverse`,
///   `short_name_disagrees`; `class`: `barn`, `pigsty`, `other`; `text`: the line as written;
///   `hosts_name`: the name as written (for a reverse finding, the line's first name, which
///   `getent hosts ADDR` returns); `zone_name`: the FQDN compared, or the PTR owner
///   (`11.10.10.10.in-addr.arpa`); `zone_answer`: the zone's address or PTR target, null for none;
///   `same`: the hosts file and the zone agree; `shadows`: the NSS order lets the line answer in the
///   zone's place; `failure`: `shadows` and not `same`; `next`: `barn hosts uninstall` for Barn's
///   block, else the line to delete by hand.
/// - `failures`: how many findings are failures. `next`: what to do, each step once: Barn's block
///   first, then every other line with a finding, in line order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub file: String,
    pub state: &'static str,
    pub error: Option<HostsError>,
    pub barn_block: Option<BarnBlock>,
    pub lines: usize,
    pub skipped: usize,
    pub nss: NssSummary,
    pub findings: Vec<Finding>,
    pub failures: usize,
    pub next: Vec<String>,
}

/// The summary of one read of the hosts file (`hosts` as [`super::read`] returned it).
pub fn summary(
    path: &str,
    hosts: &Result<Option<HostsFile>, HostsError>,
    nss: &NssSummary,
    zone: &dyn ZoneAnswers,
) -> Summary {
    let empty = HostsFile::default();
    let (state, error, file) = match hosts {
        Ok(Some(f)) => ("read", None, f),
        Ok(None) => ("missing", None, &empty),
        Err(e) => ("error", Some(e.clone()), &empty),
    };
    let found = findings(file, path, nss, zone);
    let mut next: Vec<String> = Vec::new();
    let mut barn = found.iter().filter(|f| f.class == LineClass::Barn);
    if let (Some(_), Some(b)) = (barn.next(), file.barn) {
        next.push(format!(
            "run `barn hosts uninstall` (it removes Barn's block, lines {}-{}), or re-sync Barn without the names the findings list",
            b.begin, b.end
        ));
    }
    let mut lines_seen = HashSet::new();
    for f in found.iter().filter(|f| f.class != LineClass::Barn) {
        if lines_seen.insert(f.line) {
            next.push(f.next.clone());
        }
    }
    Summary {
        file: path.to_string(),
        state,
        error,
        barn_block: file.barn,
        lines: file.lines.len(),
        skipped: file.skipped.len(),
        nss: nss.clone(),
        failures: found.iter().filter(|f| f.failure).count(),
        findings: found,
        next,
    }
}

#[cfg(test)]
mod tests;
