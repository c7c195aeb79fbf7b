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
use crate::generation::Generation;
use crate::hosts::HostsLine;
use crate::output::Report;
use crate::records::{Change, Diff};
use crate::sys::runner::SystemRunner;
use crate::sys::{Os, Runner};

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
        Ok(Some(j)) if j.zone.trim_end_matches('.') == g.zone.trim_end_matches('.') => {
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
                    crate::text::cut(&l.text)
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
    let hosts = crate::hosts::read(Path::new(hosts_path))
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
mod tests {
    use super::*;
    use crate::route::family::resolved_caching;

    fn generation() -> Generation {
        let d = tempfile::tempdir().unwrap();
        let yaml = d.path().join("in.yml");
        std::fs::write(
            &yaml,
            "all:\n  hosts:\n    10.10.10.10: { nodename: meta }\n",
        )
        .unwrap();
        let zone = crate::name::Zone::parse("pigsty.test").unwrap();
        let (set, input) = crate::input::read(&yaml, &zone).unwrap();
        let dir = crate::store::StateDir::open(&d.path().join("state"), true).unwrap();
        match dir.commit(set, 30, 5, input, false).unwrap() {
            crate::store::Outcome::Stored { generation, .. } => generation,
            _ => panic!("not stored"),
        }
    }

    #[test]
    fn the_line_names_the_bounds_of_the_adapter_and_macos_prints_the_purge_it_never_runs() {
        let g = generation();
        let l = cache_line(AdapterName::ResolvedLink, &g, Caching::ALL);
        assert!(l.contains("up to 30 s") && l.contains("up to 5 s"), "{l}");
        assert!(l.contains("no cache is flushed"), "{l}");
        let m = cache_line(AdapterName::MacosResolver, &g, Caching::ALL);
        // resolved and a daemon on loopback: nothing cached (CacheFromLocalhost=no, the default).
        let none = resolved_caching(&[], true);
        assert_eq!(
            none,
            Caching {
                positive: false,
                negative: false
            }
        );
        assert!(cache_line(AdapterName::ResolvedLink, &g, none).contains("at once"));
        let on = ["[Resolve]\nCache=no-negative\nCacheFromLocalhost=yes\n".to_string()];
        assert_eq!(
            resolved_caching(&on, true),
            Caching {
                positive: true,
                negative: false
            }
        );
        assert!(
            !resolved_caching(
                &["[Resolve]
Cache=no
"
                .into()],
                false
            )
            .positive
        );
        assert_eq!(resolved_caching(&[], false), Caching::ALL);
        // What systemd cannot read it ignores (a warning in its log): the earlier value stands.
        let unread = [
            "[Resolve]\nCache=no\nCache=maybe\nCacheFromLocalhost=yes\nCacheFromLocalhost=?\n"
                .to_string(),
        ];
        assert!(!resolved_caching(&unread, true).positive);
        let reset = [
            "[Resolve]\nCache=no\nCacheFromLocalhost=yes\n".to_string(),
            "[Resolve]\nCache=\n".to_string(),
        ];
        assert_eq!(resolved_caching(&reset, true), Caching::ALL);
        assert!(
            m.contains("at least 60 s") && m.contains("up to 3600 s"),
            "{m}"
        );
        assert!(
            m.contains("sudo killall -HUP mDNSResponder (not run)"),
            "{m}"
        );
    }

    #[test]
    fn the_changed_names_come_from_the_load_diff_in_diff_order() {
        let a = |o: u8| Ipv4Addr::new(10, 10, 10, o);
        let diff = Diff::of(
            [("meta.pigsty.test.", a(10)), ("old.pigsty.test.", a(9))],
            [("meta.pigsty.test.", a(11)), ("new.pigsty.test.", a(5))],
        );
        let c = changes(&diff);
        assert_eq!(c.len(), 3);
        assert_eq!(
            (c[0].name.as_str(), c[0].old, c[0].new),
            ("new.pigsty.test", None, Some(Ipv4Addr::new(10, 10, 10, 5)))
        );
        assert_eq!(c[1].old, Some(Ipv4Addr::new(10, 10, 10, 10)));
        assert_eq!((c[2].name.as_str(), c[2].new), ("old.pigsty.test", None));
        assert!(changes(&Diff::default()).is_empty());
    }

    /// A fake clock that advances by each sleep.
    fn run_wait(
        runner: &mut crate::sys::runner::ScriptedRunner,
        adapter: AdapterName,
        changes: &[Change],
    ) -> Waited {
        let g = generation();
        let now = std::cell::Cell::new(Duration::ZERO);
        let host = Native {
            adapter,
            caching: Caching::ALL,
            hosts_path: "/etc/hosts",
            hosts: &[],
        };
        wait(runner, &host, &g, changes, &mut || now.get(), &mut |d| {
            now.set(now.get() + d)
        })
    }

    #[test]
    fn each_name_is_visible_after_its_time_or_still_old_after_its_bound_plus_5_s() {
        use crate::sys::runner::{Output, ScriptedRunner};
        let mut r = ScriptedRunner::new();
        // The changed name shows its new address on the 3rd ask; the new name never appears.
        let old = Output::ok_with("10.10.10.10 STREAM meta.pigsty.test\n");
        r.always(
            "getent ahostsv4 meta.pigsty.test",
            Output::ok_with("10.10.10.11 STREAM meta.pigsty.test\n"),
        )
        .always("getent ahostsv4 new.pigsty.test", Output::fail(2, ""))
        .once("getent ahostsv4 meta.pigsty.test", old.clone())
        .once("getent ahostsv4 meta.pigsty.test", old);
        let c = [
            Change {
                name: "meta.pigsty.test".into(),
                old: Some(Ipv4Addr::new(10, 10, 10, 10)),
                new: Some(Ipv4Addr::new(10, 10, 10, 11)),
            },
            Change {
                name: "new.pigsty.test".into(),
                old: None,
                new: Some(Ipv4Addr::new(10, 10, 10, 5)),
            },
        ];
        let Waited { text, all, .. } = run_wait(&mut r, AdapterName::ResolvedLink, &c);
        assert!(!all, "{text}");
        assert!(
            text.contains("meta.pigsty.test: visible after 0.5 s (10.10.10.11)"),
            "{text}"
        );
        // A new name: the negative bound (SOA minimum 5 s) + 5 s.
        assert!(
            text.contains(
                "new.pigsty.test: still the old answer after 10 s (no address, want 10.10.10.5)"
            ),
            "{text}"
        );
        assert!(text.contains("SOA minimum, 5 s"), "{text}");
        assert!(!text.contains("killall"), "{text}");
    }

    #[test]
    fn a_removed_name_is_visible_when_it_has_no_address_and_macos_prints_the_purge() {
        use crate::sys::runner::ScriptedRunner;
        let mut r = ScriptedRunner::new();
        r.fallback = Some(crate::sys::runner::Output::ok_with(""));
        let c: Vec<Change> = (0..MAX_NAMES + 2)
            .map(|i| Change {
                name: format!("n{i}.pigsty.test"),
                old: Some(Ipv4Addr::new(10, 10, 10, 1)),
                new: None,
            })
            .collect();
        let Waited { text, all, .. } = run_wait(&mut r, AdapterName::MacosResolver, &c);
        assert!(all, "{text}");
        assert!(
            text.contains("n0.pigsty.test: visible after 0.0 s (no address)"),
            "{text}"
        );
        assert!(
            text.contains("2 skipped (at most 24): n24.pigsty.test n25.pigsty.test"),
            "{text}"
        );
        assert!(
            text.ends_with("to see it now: sudo killall -HUP mDNSResponder (printed, not run)\n"),
            "{text}"
        );
    }

    #[test]
    fn a_name_a_hosts_line_answers_fails_at_once_naming_the_line() {
        use crate::sys::runner::{Output, ScriptedRunner};
        let mut r = ScriptedRunner::new();
        r.always(
            "getent ahostsv4 meta.pigsty.test",
            Output::ok_with("10.10.10.99 STREAM meta.pigsty.test\n"),
        )
        .always(
            "getent ahostsv4 db.pigsty.test",
            Output::ok_with("10.10.10.30 STREAM db.pigsty.test\n"),
        );
        let hosts = crate::hosts::parse(
            b"127.0.0.1 localhost\n10.10.10.99 Meta.Pigsty.Test. meta\n10.10.10.30 db.pigsty.test\n",
        )
        .unwrap();
        let c = [
            Change {
                name: "meta.pigsty.test".into(),
                old: Some(Ipv4Addr::new(10, 10, 10, 10)),
                new: Some(Ipv4Addr::new(10, 10, 10, 11)),
            },
            // A line with the new address: getent shows what the zone now serves.
            Change {
                name: "db.pigsty.test".into(),
                old: Some(Ipv4Addr::new(10, 10, 10, 3)),
                new: Some(Ipv4Addr::new(10, 10, 10, 30)),
            },
        ];
        let g = generation();
        let now = std::cell::Cell::new(Duration::ZERO);
        let host = Native {
            adapter: AdapterName::ResolvedLink,
            caching: Caching::ALL,
            hosts_path: "/etc/hosts",
            hosts: &hosts.lines,
        };
        let Waited {
            text,
            all,
            shadowed,
        } = wait(&mut r, &host, &g, &c, &mut || now.get(), &mut |d| {
            now.set(now.get() + d)
        });
        assert!(!all, "{text}");
        assert!(
            text.contains(
                "meta.pigsty.test: line 2 of /etc/hosts (10.10.10.99 Meta.Pigsty.Test. meta) answers it before the zone: not visible while that line is there\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("db.pigsty.test: visible after 0.0 s (10.10.10.30)"),
            "{text}"
        );
        assert!(shadowed);
        // Failed at once: no waiting out the cache bound for a name the hosts file answers.
        assert_eq!(now.get(), Duration::ZERO, "{text}");
    }
}
