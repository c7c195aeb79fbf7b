//! The hosts file and the NSS `hosts:` order as `route status` and `route install` see them (issue 23):
//! read through the context's root (so tests use a fake one), compared with the live generation, and
//! turned into status items, plan warnings and the one refusal.
//!
//! Shadowing is reported, never blocking: a hosts line answers before the zone whether or not the
//! route exists, and removing hosts mode is the user's step after the route is proven (route install
//! → check → `barn hosts uninstall`). Only a `hosts:` line under which no route can take effect for
//! `getaddrinfo` refuses the install (exit 3): then the route could never be verified.

use std::path::Path;

use super::adapter::{self, AdapterName, Family};
use super::check::{Item, item};
use super::context::Ctx;
use super::files::under;
use super::live::{self, Live};
use super::plan::Plan;
use crate::error::{AppError, Class};
use crate::route::hosts::{
    self, EmptyZone, Finding, FindingKind, NssError, NssHosts, NssSummary, RouteEffect, Summary,
    ZoneAnswers,
};
use crate::sys::Os;

/// The live generation's answers, as the findings read them.
impl ZoneAnswers for Live {
    fn zone(&self) -> &str {
        self.zone.trim_end_matches('.')
    }
    fn zones(&self) -> Vec<&str> {
        self.zones.iter().map(|z| z.trim_end_matches('.')).collect()
    }
    fn records(&self) -> &[crate::input::records::Record] {
        &self.records
    }
    fn ptrs(&self) -> &[crate::input::records::Ptr] {
        &self.ptr
    }
}

/// Where the hosts file is on `os`, as the system names it.
pub fn hosts_path(os: Os) -> &'static str {
    match os {
        Os::Macos => "/private/etc/hosts",
        _ => "/etc/hosts",
    }
}

const NSSWITCH: &str = "/etc/nsswitch.conf";
const RESOLV_CONF: &str = "/etc/resolv.conf";
/// The `hosts:` line in effect and whether a route of this adapter can take effect under it.
#[derive(Debug, Clone)]
pub struct Nss {
    /// `Err`: glibc refuses nsswitch.conf (every lookup fails).
    pub hosts: Result<NssHosts, NssError>,
    /// Whether nsswitch.conf exists (else glibc's default applies).
    pub present: bool,
    /// `None` when no Linux adapter is in question.
    pub effect: Option<RouteEffect>,
}

/// Everything one read found.
#[derive(Debug, Clone)]
pub struct View {
    pub summary: Summary,
    /// `None` on macOS (mDNSResponder decides, no NSS).
    pub nss: Option<Nss>,
    /// Why the findings compare with no live generation (`None`: they compare with one).
    pub no_live: Option<String>,
}

fn read_text(root: &Path, abs: &str) -> Option<String> {
    std::fs::read(under(root, abs))
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Whether glibc's `dns` source reaches the route: resolved's stub for its adapters; for NM's
/// dnsmasq, NM writes resolv.conf itself (its dnsmasq at 127.0.0.1), which the adapter's detection
/// already requires.
fn dns_reaches_route(root: &Path, adapter: AdapterName) -> bool {
    if adapter::family(adapter) == Family::NmDnsmasq {
        return true;
    }
    let path = under(root, RESOLV_CONF);
    let target_is_stub = std::fs::read_link(&path)
        .map(|t| hosts::resolv_target_is_stub(&t))
        .unwrap_or(false);
    target_is_stub
        || read_text(root, RESOLV_CONF).is_some_and(|t| hosts::resolv_conf_points_at_stub(&t))
}

fn is_resolved(a: AdapterName) -> bool {
    matches!(adapter::family(a), Family::Resolved(_))
}

/// Reads nsswitch.conf under the root, and what it means for a route of `adapter` (if any).
fn read_nss(root: &Path, zone: &str, adapter: Option<AdapterName>) -> Nss {
    let text = read_text(root, NSSWITCH);
    let hosts = match &text {
        Some(t) => NssHosts::parse(t),
        None => Ok(NssHosts::glibc_default()),
    };
    let effect = match (&hosts, adapter) {
        (Ok(h), Some(a)) if adapter::family(a) != Family::Mdns => {
            Some(h.route_effect(zone, dns_reaches_route(root, a)))
        }
        _ => None,
    };
    Nss {
        hosts,
        present: text.is_some(),
        effect,
    }
}

/// The live generation of the context's state dir for `zone`, or why there is none.
pub fn live_answers(ctx: &Ctx<'_>, zone: &str) -> Result<Live, String> {
    let Some(dir) = ctx.state_dir.as_deref() else {
        return Err("no state dir of a running daemon found (give --state-dir DIR)".into());
    };
    match live::read(dir) {
        Ok(Some(l)) if l.zone.trim_end_matches('.') == zone => Ok(l),
        Ok(Some(l)) => Err(format!(
            "the newest generation in {} is for {}",
            dir.display(),
            l.zone
        )),
        Ok(None) => Err(format!("no generation in {} yet", dir.display())),
        Err(e) => Err(e),
    }
}

impl View {
    /// Reads the hosts file and nsswitch.conf under the context's root for a route of `adapter`
    /// (`None`: no adapter fits this host) to `zone`, and compares them with `live`.
    pub fn read(
        ctx: &Ctx<'_>,
        zone: &str,
        adapter: Option<AdapterName>,
        live: Result<&Live, String>,
    ) -> View {
        let zone = zone.trim_end_matches('.').to_ascii_lowercase();
        let os = ctx.facts.os;
        let path = hosts_path(os);
        let file = hosts::read(&under(&ctx.root, path));
        let (nss_summary, nss) = if os == Os::Macos {
            (NssSummary::macos(), None)
        } else {
            let nss = read_nss(&ctx.root, &zone, adapter);
            let reads = adapter.is_some_and(is_resolved)
                && hosts::resolved_reads_etc_hosts(
                    &crate::sys::resolved_conf::texts(&ctx.root)
                        .iter()
                        .map(String::as_str)
                        .collect::<Vec<_>>(),
                );
            let fallback = NssHosts::glibc_default();
            let h = nss.hosts.as_ref().unwrap_or(&fallback);
            (NssSummary::from_nss(h, &zone, reads), Some(nss))
        };
        let empty = EmptyZone(zone.clone());
        let (answers, no_live): (&dyn ZoneAnswers, _) = match live {
            Ok(l) => (l, None),
            Err(why) => (&empty, Some(why)),
        };
        View {
            summary: hosts::summary(path, &file, &nss_summary, answers),
            nss,
            no_live,
        }
    }

    /// The status items: the file itself, one per finding, and (not macOS) the NSS order.
    pub fn items(&self) -> Vec<Item> {
        let mut v = vec![self.file_item()];
        v.extend(self.summary.findings.iter().map(finding_item));
        v.extend(self.nss_item());
        v
    }

    fn file_item(&self) -> Item {
        let s = &self.summary;
        if let Some(e) = &s.error {
            return item(
                "hosts file",
                false,
                format!(
                    "{} cannot be read safely: {e}; nothing in it was compared with the zone",
                    s.file
                ),
                e.next(),
            );
        }
        if s.state == "missing" {
            return item(
                "hosts file",
                true,
                format!(
                    "no hosts file at {}: nothing answers before the zone",
                    s.file
                ),
                "none",
            );
        }
        let barn = s
            .barn_block
            .map(|b| format!(", Barn's block at lines {}-{}", b.begin, b.end))
            .unwrap_or_default();
        let compared = match &self.no_live {
            None => "compared with the live generation".to_string(),
            Some(why) => format!("compared with an empty zone: {why}"),
        };
        item(
            "hosts file",
            true,
            format!(
                "{}: {} lines{barn}; {} findings, {} failing ({compared})",
                s.file,
                s.lines,
                s.findings.len(),
                s.failures
            ),
            "none",
        )
    }

    fn nss_item(&self) -> Option<Item> {
        let nss = self.nss.as_ref()?;
        let h = match &nss.hosts {
            Ok(h) => h,
            Err(e) => {
                return Some(item(
                    "nss hosts order",
                    false,
                    format!("{NSSWITCH} {e}: glibc refuses the file, so lookups fail"),
                    format!("fix the hosts: line of {NSSWITCH}"),
                ));
            }
        };
        let at = match h.line {
            Some(n) => format!("line {n} of {NSSWITCH}"),
            None if nss.present => format!("no hosts: line in {NSSWITCH}: glibc's default"),
            None => format!("no {NSSWITCH}: glibc's default"),
        };
        let order = self.summary.nss.files_order.describe();
        let (ok, effect, next) = match &nss.effect {
            None => (true, String::new(), "none".to_string()),
            Some(RouteEffect::Resolve) => (
                true,
                "; the route takes effect through nss-resolve".into(),
                "none".into(),
            ),
            Some(RouteEffect::Dns) => (
                true,
                "; the route takes effect through dns (/etc/resolv.conf)".into(),
                "none".into(),
            ),
            Some(RouteEffect::Unsupported(why)) => (
                false,
                format!("; unsupported: {why}"),
                format!(
                    "list resolve (or dns with /etc/resolv.conf at 127.0.0.53) in the hosts: line of {NSSWITCH}, or route the zone by hand"
                ),
            ),
        };
        Some(item(
            "nss hosts order",
            ok,
            format!("{:?} ({at}): {order}{effect}", h.text),
            next,
        ))
    }

    /// The plan's lines: failing findings as warnings, the others as notes.
    pub fn plan_lines(&self) -> (Vec<String>, Vec<String>) {
        let mut warnings = Vec::new();
        let mut notes = Vec::new();
        let s = &self.summary;
        if let Some(e) = &s.error {
            warnings.push(format!(
                "{} cannot be read safely: {e} ({})",
                s.file,
                e.next()
            ));
        }
        for f in &s.findings {
            let line = format!("{}: {} (next: {})", finding_title(f), f.reason, f.next);
            if f.failure {
                warnings.push(line);
            } else {
                notes.push(line);
            }
        }
        if s.failures > 0 {
            warnings.push(format!(
                "{} hosts-file answers shadow the zone; the route is installed anyway (the hosts file is yours: remove those lines after the route checks out)",
                s.failures
            ));
        }
        (warnings, notes)
    }

    /// The refusal of a route that cannot take effect for `getaddrinfo`.
    pub fn refuse_unsupported(&self) -> Result<(), AppError> {
        match self.nss.as_ref().and_then(|n| n.effect.as_ref()) {
            Some(RouteEffect::Unsupported(why)) => Err(AppError::new(
                Class::Capability,
                format!("unsupported: {why}"),
                format!(
                    "list resolve (or dns with /etc/resolv.conf at 127.0.0.53) in the hosts: line of {NSSWITCH}, or route the zone by hand"
                ),
            )),
            _ => Ok(()),
        }
    }
}

/// The plan's view of the hosts file: refuses a route NSS never reaches (exit 3), else adds the
/// findings to the plan's warnings and notes.
pub fn for_plan(ctx: &Ctx<'_>, plan: &mut Plan) -> Result<View, AppError> {
    let live = live_answers(ctx, &plan.zone);
    let view = View::read(
        ctx,
        &plan.zone,
        Some(plan.adapter),
        live.as_ref().map_err(Clone::clone),
    );
    view.refuse_unsupported()?;
    let (warnings, notes) = view.plan_lines();
    plan.warnings.extend(warnings);
    plan.notes.extend(notes);
    Ok(view)
}

/// RFC 4034 §6.1 canonical order: labels compared from the root down, lowercase.
fn canonical_key(name: &str) -> Vec<String> {
    name.trim_end_matches('.')
        .rsplit('.')
        .map(str::to_ascii_lowercase)
        .collect()
}

/// The name of `zone` that `route install` and `route status` check through the native path without
/// `--check-name`: the live generation's first served name of it in canonical order that the hosts file
/// does not answer in the zone's place (else the first one: its check then shows the shadow). Err:
/// why nothing is checked, as the check's detail.
pub fn default_check_name(
    ctx: &Ctx<'_>,
    adapter: AdapterName,
    live: Option<&Live>,
    zone: &str,
) -> Result<String, String> {
    let Some(l) = live else {
        return Err(match ctx.state_dir.as_deref().map(live::read) {
            None => "not checked: no --check-name, and no state dir of the daemon to take a served name from (give --state-dir DIR or --check-name NAME)".into(),
            Some(Ok(None)) => "not checked: the zone is empty".into(),
            Some(Ok(Some(g))) if g.records.is_empty() => "not checked: the zone is empty".into(),
            Some(Ok(Some(g))) => format!("not checked: the live generation serves {}, not this route's zone", g.zones.join(", ")),
            Some(Err(e)) => format!("not checked: {e}"),
        });
    };
    if l.records.is_empty() {
        return Err("not checked: the zone is empty".into());
    }
    let mut names: Vec<&str> = l
        .records
        .iter()
        .map(|r| r.name.as_str())
        .filter(|n| crate::dns::name::in_zone(n, zone))
        .collect();
    names.sort_by_cached_key(|n| canonical_key(n));
    let Some(first) = names.first() else {
        return Err(format!(
            "not checked: the live generation has no name in {zone}"
        ));
    };
    let view = View::read(ctx, &l.zone, Some(adapter), Ok(l));
    let shadowed: std::collections::HashSet<&str> = view
        .summary
        .findings
        .iter()
        .filter(|f| f.kind == FindingKind::ShadowedName && f.shadows)
        .map(|f| f.zone_name.as_str())
        .collect();
    Ok(names
        .iter()
        .find(|n| !shadowed.contains(*n))
        .unwrap_or(first)
        .to_string())
}

fn finding_title(f: &Finding) -> String {
    let what = match f.kind {
        FindingKind::ShadowedName => format!("shadowed name {}", f.zone_name),
        FindingKind::ShadowedReverse => format!("shadowed reverse {}", f.hosts_address),
        FindingKind::ShortNameDisagrees => format!("short name {}", f.hosts_name),
    };
    format!("hosts: {what}")
}

/// One finding as an item: named for what it is about (stable while the line stays), its verdict
/// the line number, the line's class and why.
fn finding_item(f: &Finding) -> Item {
    item(
        &finding_title(f),
        !f.failure,
        format!(
            "line {} ({}): {:?}: {}",
            f.line,
            f.class.describe(),
            f.text,
            f.reason
        ),
        if f.failure || f.shadows {
            f.next.clone()
        } else {
            "none".into()
        },
    )
}

#[cfg(test)]
mod tests;
