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
    let zone = crate::dns::name::Zone::parse("pigsty.test").unwrap();
    let (set, input, _) =
        crate::input::read_as(&yaml, &zone, &crate::input::inventory::Reading::Auto).unwrap();
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
    let hosts = crate::route::hosts::file::parse(
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
