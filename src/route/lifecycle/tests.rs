use super::*;
use crate::route::claim::{Seen, advice};
use crate::store::status_file::CountersSnapshot;

fn status(state: ServerState) -> Status {
    Status {
        format: crate::store::status_file::FORMAT,
        state,
        pid: 4242,
        started: "2026-12-03T08:00:00Z".into(),
        started_unix: 0,
        updated: "2026-12-03T08:00:02Z".into(),
        zones: Vec::new(),
        listen: vec!["127.0.0.1:5354".parse().unwrap()],
        zone: "pigsty.test".into(),
        reverse_zone: None,
        serial: 1,
        secondaries: vec![],
        transfers: None,
        record_digest: None,
        records: 1,
        generation: None,
        loaded_at: None,
        loaded_from: None,
        follow: None,
        last_error: None,
        counters: CountersSnapshot::default(),
        nxdomain_names: None,
    }
}

fn server() -> SocketAddr {
    "127.0.0.1:5354".parse().unwrap()
}

fn facts(status: Option<Status>, alive: bool) -> DaemonFacts {
    DaemonFacts {
        server: Some(server()),
        state_dir: Some("/srv/state".into()),
        status,
        pid_alive: alive,
        ..DaemonFacts::default()
    }
}

#[test]
fn the_status_file_tells_stopped_from_crashed_from_never_started() {
    let f = facts(Some(status(ServerState::Stopped)), false);
    let d = daemon_down(&f, server(), "connection refused");
    assert!(d.verdict.starts_with("stopped at 127.0.0.1:5354"), "{d:?}");
    assert!(d.verdict.contains("nothing leaks"), "{d:?}");
    assert_eq!(
        d.next,
        "start it: pigsty-dns serve --listen 127.0.0.1:5354 --state-dir /srv/state (or pigsty-dns service install)"
    );
    // A killed server leaves "running" with a dead pid.
    let d = daemon_down(
        &facts(Some(status(ServerState::Running)), false),
        server(),
        "x",
    );
    assert!(d.verdict.starts_with("crashed"), "{d:?}");
    assert!(d.verdict.contains("pid 4242 is gone"), "{d:?}");
    let d = daemon_down(&facts(None, false), server(), "x");
    assert!(d.verdict.starts_with("never started"), "{d:?}");
    assert!(d.verdict.contains("no status file in /srv/state"), "{d:?}");
    // Alive but not answering: the address is the question.
    let d = daemon_down(
        &facts(Some(status(ServerState::Running)), true),
        server(),
        "timeout",
    );
    assert!(d.verdict.starts_with("not answering"), "{d:?}");
    assert!(d.next.contains("--listen 127.0.0.1:5354"), "{d:?}");
}

#[test]
fn the_unit_tells_crashed_stopped_never_started_and_its_fix() {
    let show = |active: &str, result: &str, started: &str, file: &str| {
        format!(
            "LoadState=loaded\nActiveState={active}\nSubState=x\nResult={result}\nUnitFileState={file}\nExecMainStartTimestampMonotonic={started}\n"
        )
    };
    let with = |s: String| DaemonFacts {
        unit: unit_state(&s),
        ..facts(Some(status(ServerState::Running)), false)
    };
    let d = daemon_down(
        &with(show("failed", "signal", "123", "enabled")),
        server(),
        "x",
    );
    assert!(d.verdict.starts_with("crashed"), "{d:?}");
    assert!(d.verdict.contains("result signal"), "{d:?}");
    assert_eq!(
        d.next,
        "sudo systemctl restart pigsty-dns.service (why it died: journalctl -u pigsty-dns.service -n 50)"
    );
    let d = daemon_down(
        &with(show("inactive", "success", "123", "enabled")),
        server(),
        "x",
    );
    assert!(d.verdict.starts_with("stopped"), "{d:?}");
    assert_eq!(d.next, "sudo systemctl start pigsty-dns.service");
    let d = daemon_down(
        &with(show("inactive", "success", "0", "disabled")),
        server(),
        "x",
    );
    assert!(d.verdict.starts_with("never started"), "{d:?}");
    assert_eq!(d.next, "sudo systemctl enable --now pigsty-dns.service");
    let d = daemon_down(
        &with(show("activating", "success", "1", "enabled")),
        server(),
        "x",
    );
    assert_eq!(
        down_kind(&with(show("activating", "", "1", ""))),
        DownKind::Starting
    );
    assert!(d.next.starts_with("wait for it"), "{d:?}");
    // systemd does not know the unit: the status file decides.
    assert_eq!(
        unit_state("LoadState=not-found\nActiveState=inactive\n"),
        None
    );
}

#[test]
fn a_user_unit_without_linger_stopped_at_logout() {
    let mut f = facts(Some(status(ServerState::Running)), false);
    f.user_unit = Some(UserUnit {
        user: "alice".into(),
        linger: false,
        manager_running: false,
    });
    let d = daemon_down(&f, server(), "x");
    assert!(d.verdict.starts_with("stopped at logout"), "{d:?}");
    assert_eq!(
        d.next,
        "sudo loginctl enable-linger alice (the user unit then runs without a login)"
    );
    // Lingering (or logged in): it is the user unit that stopped or crashed.
    f.user_unit = Some(UserUnit {
        user: "alice".into(),
        linger: true,
        manager_running: true,
    });
    let d = daemon_down(&f, server(), "x");
    assert!(d.verdict.starts_with("crashed"), "{d:?}");
    assert_eq!(d.next, "systemctl --user start pigsty-dns.service");
}

#[test]
fn the_last_status_file_naming_the_address_is_found_running_or_not() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let mut other = status(ServerState::Stopped);
    other.listen = vec!["127.0.0.1:5399".parse().unwrap()];
    crate::store::status_file::write(a.path(), &other).unwrap();
    crate::store::status_file::write(b.path(), &status(ServerState::Stopped)).unwrap();
    let cands = vec![a.path().to_path_buf(), b.path().to_path_buf()];
    let (d, s) = last_status(&cands, server()).unwrap();
    assert_eq!((d.as_path(), s.state), (b.path(), ServerState::Stopped));
    assert!(last_status(&cands[..1], server()).is_none());
}

const UP: &str = "3: pigsty-dns0: <BROADCAST,NOARP,UP,LOWER_UP> mtu 1500 qdisc noqueue state UNKNOWN group default qlen 1000\n    link/ether 2a:1b:3c:4d:5e:6f brd ff:ff:ff:ff:ff:ff\n    inet 198.18.53.53/32 scope global pigsty-dns0\n       valid_lft forever preferred_lft forever\n";

#[test]
fn the_link_is_gone_down_or_without_its_address() {
    let c = "198.18.53.53/32";
    assert_eq!(link_state(true, UP, "", c), LinkState::Ok);
    assert_eq!(
        link_state(false, "", "Device \"pigsty-dns0\" does not exist.\n", c),
        LinkState::Gone
    );
    let no_addr: String = UP.lines().take(2).map(|l| format!("{l}\n")).collect();
    assert_eq!(link_state(true, &no_addr, "", c), LinkState::NoAddress);
    // Another address is not ours.
    assert_eq!(
        link_state(true, &UP.replace("198.18.53.53", "198.18.53.54"), "", c),
        LinkState::NoAddress
    );
    let down = UP.replace("NOARP,UP,LOWER_UP", "NOARP");
    assert_eq!(link_state(true, &down, "", c), LinkState::Down);
    assert!(matches!(
        link_state(false, "", "ip: not found", c),
        LinkState::Unknown(_)
    ));
    let repair = "sudo pigsty-dns route install --adapter resolved-link --yes";
    let zones = "pigsty.test and 10.10.10.in-addr.arpa";
    let f = link_finding(&LinkState::Gone, "pigsty-dns0", c, zones, repair).unwrap();
    assert_eq!(
        f.verdict,
        "pigsty-dns0 is gone (deleted?): resolved has no DNS scope for pigsty.test and 10.10.10.in-addr.arpa then, so their names leak to the default upstream"
    );
    assert_eq!(f.next, repair);
    let f = link_finding(&LinkState::NoAddress, "pigsty-dns0", c, zones, repair).unwrap();
    assert!(
        f.verdict.starts_with(
            "pigsty-dns0 has lost its address 198.18.53.53/32: resolved has no DNS scope"
        ),
        "{f:?}"
    );
    assert_eq!(link_finding(&LinkState::Ok, "l", c, zones, repair), None);
}

const DOMAINS: &str = "Global:\nLink 2 (pu0):\nLink 3 (pigsty-dns0): ~10.10.10.in-addr.arpa ~pigsty.test\nLink 4 (vpn0): ~.\n";

fn zones() -> Vec<String> {
    vec!["pigsty.test".into(), "10.10.10.in-addr.arpa".into()]
}

#[test]
fn a_default_route_vpn_is_no_claim_but_the_zone_its_subdomain_or_the_reverse_zone_are() {
    assert_eq!(claims(DOMAINS, &zones(), "link pigsty-dns0"), vec![]);
    assert_eq!(default_route_links(DOMAINS), vec!["link vpn0".to_string()]);
    for (d, zone, sub) in [
        ("~pigsty.test", "pigsty.test", false),
        ("~Corp.Pigsty.Test.", "pigsty.test", true),
        ("~10.10.10.in-addr.arpa", "10.10.10.in-addr.arpa", false),
        ("~5.10.10.10.in-addr.arpa", "10.10.10.in-addr.arpa", true),
        // A search domain (no ~) routes too.
        ("pigsty.test", "pigsty.test", false),
    ] {
        let out = DOMAINS.replace("(vpn0): ~.", &format!("(vpn0): ~. {d}"));
        let c = claims(&out, &zones(), "link pigsty-dns0");
        assert_eq!(c.len(), 1, "{d}: {c:?}");
        let s = c[0].scope.as_ref().unwrap();
        assert_eq!(
            (s.link.as_deref(), s.zone.as_str(), s.subdomain),
            (Some("vpn0"), zone, sub),
            "{d}"
        );
        assert!(
            c[0].what.starts_with(&format!("link vpn0 claims {d} (")),
            "{c:?}"
        );
        let next = advice(&c, "pigsty.test", Seen::Status);
        assert!(next.starts_with(&format!("drop {d} from link vpn0")));
    }
    // A parent domain or a look-alike takes nothing of ours (longest match, label boundaries).
    for d in [
        "~test",
        "~xpigsty.test",
        "~in-addr.arpa",
        "~110.10.10.in-addr.arpa",
    ] {
        let out = DOMAINS.replace("(vpn0): ~.", &format!("(vpn0): {d}"));
        assert_eq!(claims(&out, &zones(), "link pigsty-dns0"), vec![], "{d}");
    }
    // The global settings and another delegate claim too; our own delegate does not.
    let out =
        "Global: ~pigsty.test\nDelegate pigsty-dns: ~pigsty.test\nDelegate corp: ~x.pigsty.test\n";
    let owners: Vec<String> = claims(out, &zones(), "delegate pigsty-dns")
        .into_iter()
        .map(|c| c.scope.unwrap().owner)
        .collect();
    assert_eq!(owners, ["the global settings", "delegate corp"]);
}

#[test]
fn a_journal_of_another_owner_or_writable_by_others_is_not_trusted() {
    assert_eq!(journal_meta(0, 0o100644, 0), None);
    assert_eq!(journal_meta(1000, 0o100644, 1000), None);
    assert_eq!(
        journal_meta(65534, 0o100644, 0),
        Some(JournalDamage::Owner(65534))
    );
    assert_eq!(
        journal_meta(0, 0o100666, 0),
        Some(JournalDamage::Mode(0o666))
    );
    assert_eq!(
        journal_meta(0, 0o100664, 0),
        Some(JournalDamage::Mode(0o664))
    );
    let p = Path::new("/var/lib/pigsty-dns-route/journal.json");
    let m = journal_message(p, &JournalDamage::Mode(0o666));
    assert_eq!(
        m,
        "/var/lib/pigsty-dns-route/journal.json has mode 0666: writable by others, not trusted (uninstall removes what it lists)"
    );
    assert!(journal_next(p, &JournalDamage::Owner(7)).contains("sudo chown root:root"));
}

#[test]
fn a_truncated_journal_is_told_from_one_that_is_not_json() {
    let err = |s: &str| serde_json::from_str::<super::super::journal::Journal>(s).unwrap_err();
    let j = r#"{"format": 1, "state": "installed", "adapter": "resolved-li"#;
    assert!(matches!(
        journal_parse_error(&err(j)),
        JournalDamage::Truncated(_)
    ));
    assert!(matches!(
        journal_parse_error(&err("not json\n")),
        JournalDamage::NotJson(_)
    ));
    assert!(matches!(
        journal_parse_error(&err(r#"{"format": 1}"#)),
        JournalDamage::NotAJournal(_)
    ));
    let p = Path::new("/j.json");
    let m = journal_message(p, &journal_parse_error(&err("not json\n")));
    assert!(m.starts_with("/j.json is not JSON ("), "{m}");
    assert!(journal_next(p, &JournalDamage::NotJson(String::new())).starts_with("sudo rm /j.json"));
}

#[test]
fn a_file_changed_by_hand_is_told_from_a_missing_one_and_one_without_marker() {
    let body = crate::route::files::wrap("resolved-link", Some("pigsty-dns0"), "[NetDev]\n");
    let sha = crate::digest::sha256_hex(body.as_bytes());
    assert_eq!(file_drift("/f", &sha, Some(body.as_bytes())), None);
    assert_eq!(
        file_drift("/f", &sha, None).as_deref(),
        Some("/f is missing")
    );
    let edited = format!("{body}# mine\n");
    assert_eq!(
        file_drift("/f", &sha, Some(edited.as_bytes())).as_deref(),
        Some("/f changed by hand (uninstall leaves it)")
    );
    let d = file_drift("/f", &sha, Some(b"[NetDev]\n")).unwrap();
    assert!(d.contains("ownership marker gone"), "{d}");
    let next = drift_next(&[d], "sudo pigsty-dns route install --yes");
    assert!(next.starts_with("undo the hand edit"), "{next}");
    assert_eq!(
        drift_next(&["/f is missing".into()], "R"),
        "an uninstall cut short: sudo pigsty-dns route uninstall --yes finishes it; else R writes them again"
    );
    assert_eq!(
        partial_install(&["/a".into()], &["/b".into(), "/c".into()]),
        "an install was interrupted (journal state applying): written /a; not written /b, /c"
    );
}
