//! When a change `load` made is visible to programs on this host (issue 23 §3): the one honest line
//! after "live", from the route journal's adapter and the generation's TTLs, and `load
//! --wait-visible`'s polling of the native path. No route: nothing (no cache of this host holds the
//! zone). pigsty-dns never flushes a cache on a sync; on macOS it prints the purge command for whoever
//! wants it now, and never runs it. What the resolver caches and how it is asked is its family's.

use std::net::Ipv4Addr;
use std::path::Path;
use std::time::{Duration, Instant};

use super::adapter::AdapterName;
use super::family::{self, Caching, Resolver};
use super::{hosts_view, journal};
use crate::error::{AppError, Class};
use crate::input::records::{Change, Diff};
use crate::output::Report;
use crate::route::hosts::HostsLine;
use crate::sys::runner::SystemRunner;
use crate::sys::{Os, Runner};
use crate::zone::generation::Generation;

/// The line for a route of `adapter` serving `g`: how long an answer a program already got may
/// stay in this host's caches.
pub fn cache_line(adapter: AdapterName, g: &Generation, caching: Caching) -> String {
    family::of_adapter(adapter).cache_line(g, caching)
}

/// After a load's "live" (only then: a stored serial no server serves changes no cache), the cache
/// line for this host's route.
pub fn after_live(report: &mut Report, g: &Generation, live: bool) {
    if let (true, Some(line)) = (live, for_this_host(g)) {
        report.text.push_str(&line);
    }
}

/// This host's route of `g`'s zone, from the route journal at its default place: its adapter and
/// what its resolver caches; `None` when no route is installed (or its journal cannot be read: then
/// nothing is claimed).
fn route_here(g: &Generation) -> Option<(AdapterName, Caching)> {
    let dir = Path::new(journal::default_dir(Os::this()));
    match journal::read(dir) {
        Ok(Some(j))
            if j.zones()
                .iter()
                .any(|z| z.trim_end_matches('.') == g.zone.trim_end_matches('.')) =>
        {
            Some((j.adapter, family::of_adapter(j.adapter).caching(&j.server)))
        }
        _ => None,
    }
}

/// The line for this host; `None` when no route of the zone is installed.
pub fn for_this_host(g: &Generation) -> Option<String> {
    route_here(g).map(|(a, caching)| cache_line(a, g, caching))
}

/// At most this many names are polled; the rest are named as skipped.
pub const MAX_NAMES: usize = 24;
/// Beyond the cache bound, how long `--wait-visible` keeps asking.
pub const MARGIN: Duration = Duration::from_secs(5);
const POLL: Duration = Duration::from_millis(250);

/// The names a load changed, as polled: `added`, `changed`, `removed`, in that order.
pub fn changes(diff: &Diff) -> Vec<Change> {
    [&diff.added, &diff.changed, &diff.removed]
        .into_iter()
        .flatten()
        .map(|c| Change {
            name: c.name.trim_end_matches('.').to_string(),
            ..c.clone()
        })
        .collect()
}

/// How long a program's cached answer may outlive the change: a name that did not exist is cached
/// as negative (the SOA minimum; macOS at least 60 s), any other by the records' TTL.
fn bound(c: &Change, r: &dyn Resolver, g: &Generation, caching: Caching) -> (Duration, String) {
    match c.old {
        None if !caching.negative => (
            Duration::ZERO,
            "the resolver caches no \"no such name\" from the daemon".into(),
        ),
        Some(_) if !caching.positive => (
            Duration::ZERO,
            "the resolver caches nothing from the daemon".into(),
        ),
        None => r.negative_bound(g),
        Some(_) => (
            Duration::from_secs(u64::from(g.ttl)),
            format!("a cached answer lives up to the records' TTL, {} s", g.ttl),
        ),
    }
}

fn shown(a: Option<Ipv4Addr>) -> String {
    a.map_or("no address".into(), |a| a.to_string())
}

/// This host's native path, as `--wait-visible` asks it.
pub struct Native<'a> {
    pub adapter: AdapterName,
    pub caching: Caching,
    /// Where the hosts file is (named in the lines).
    pub hosts_path: &'a str,
    /// Its answering lines (none when it cannot be read: then nothing is attributed to it).
    pub hosts: &'a [HostsLine],
}

impl Native<'_> {
    /// The first hosts line naming `fqdn` (glibc's first match; case and a trailing dot ignored).
    fn shadowing(&self, fqdn: &str) -> Option<&HostsLine> {
        self.hosts.iter().find(|l| {
            l.names
                .iter()
                .any(|n| n.trim_end_matches('.').eq_ignore_ascii_case(fqdn))
        })
    }
}

/// How a wait ended: a line per name, whether all became visible, whether a hosts line answers one.
#[derive(Debug)]
pub struct Waited {
    pub text: String,
    pub all: bool,
    pub shadowed: bool,
}

/// Polls the native path for every change until each shows its new answer or its bound plus
/// [`MARGIN`] has passed.
pub fn wait(
    runner: &mut dyn Runner,
    host: &Native<'_>,
    g: &Generation,
    changes: &[Change],
    clock: &mut dyn FnMut() -> Duration,
    sleep: &mut dyn FnMut(Duration),
) -> Waited {
    let r = family::of_adapter(host.adapter);
    let (polled, skipped) = changes.split_at(changes.len().min(MAX_NAMES));
    let mut text = String::new();
    if !skipped.is_empty() {
        text.push_str(&format!(
            "wait-visible: {} names polled, {} skipped (at most {MAX_NAMES}): {}\n",
            polled.len(),
            skipped.len(),
            skipped
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    let start = clock();
    let mut pending: Vec<(usize, Duration, String)> = polled
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (b, why) = bound(c, r, g, host.caching);
            (i, b + MARGIN, why)
        })
        .collect();
    let mut lines: Vec<Option<String>> = vec![None; polled.len()];
    let (mut all, mut shadowed) = (true, false);
    while !pending.is_empty() {
        let now = clock() - start;
        pending.retain(|(i, limit, why)| {
            let c = &polled[*i];
            let got = r.native_a(runner, &c.name);
            if got == c.new {
                lines[*i] = Some(format!("{}: visible after {:.1} s ({})\n", c.name, now.as_secs_f64(), shown(got)));
                return false;
            }
            // The hosts file's answer is no cache: waiting would not change it.
            if let Some(l) = host.shadowing(&c.name).filter(|l| got.is_some() && l.ipv4() == got) {
                (all, shadowed) = (false, true);
                lines[*i] = Some(format!(
                    "{}: line {} of {} ({}) answers it before the zone: not visible while that line is there\n",
                    c.name,
                    l.number,
                    host.hosts_path,
                    crate::output::text::cut(&l.text)
                ));
                return false;
            }
            if now >= *limit {
                all = false;
                lines[*i] = Some(format!(
                    "{}: still the old answer after {} s ({}, want {}): {why}; programs that asked before the load keep it until then\n",
                    c.name,
                    limit.as_secs(),
                    shown(got),
                    shown(c.new)
                ));
                return false;
            }
            true
        });
        if !pending.is_empty() {
            sleep(POLL);
        }
    }
    lines.into_iter().flatten().for_each(|l| text.push_str(&l));
    text.extend(r.purge_line());
    Waited {
        text,
        all,
        shadowed,
    }
}

/// `load --wait-visible`, after the store and the live check: polls this host's native path for the
/// load's `changes` when a route is installed; exit 5 when a name is not visible in time.
pub fn wait_visible(
    mut report: Report,
    g: &Generation,
    changes: &[Change],
) -> Result<Report, AppError> {
    let Some((adapter, caching)) = route_here(g) else {
        report.text.push_str(
            "wait-visible: no route of this zone is installed on this host: nothing to wait for\n",
        );
        return Ok(report);
    };
    let mut runner = SystemRunner::new(Duration::from_secs(5));
    let t0 = Instant::now();
    let hosts_path = hosts_view::hosts_path(Os::this());
    let hosts = crate::route::hosts::read(Path::new(hosts_path))
        .ok()
        .flatten()
        .unwrap_or_default();
    let host = Native {
        adapter,
        caching,
        hosts_path,
        hosts: &hosts.lines,
    };
    let waited = wait(
        &mut runner,
        &host,
        g,
        changes,
        &mut || t0.elapsed(),
        &mut std::thread::sleep,
    );
    report.text.push_str(&waited.text);
    if waited.all {
        return Ok(report);
    }
    let next = if waited.shadowed {
        "remove the hosts line named above (pigsty-dns never edits the hosts file; `pigsty-dns route status` lists every line that answers before the zone)"
    } else {
        "wait out the cache bound above, or start programs afresh; pigsty-dns never flushes caches"
    };
    Err(AppError::new(
        Class::Partial,
        format!("serial {} is live, but not every changed name is visible through this host's resolver yet", g.serial),
        next,
    )
    .with_report(report))
}

#[cfg(test)]
mod tests;
