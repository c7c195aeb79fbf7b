use super::super::testing::{down, journal, up, with_ctx};
use super::*;
use crate::digest::sha256_hex;
use crate::route::journal::{JournalFile, State};
use crate::sys::Os;
use crate::sys::runner::ScriptedRunner;

/// Runs one item on a route of `j`, with `preflight` as the daemon, on `os`.
fn run(
    os: Os,
    j: Journal,
    runner: &mut ScriptedRunner,
    preflight: fn(SocketAddr, &Zone) -> Result<u32, String>,
    items: &[crate::route::status::RoutedItem],
) -> Vec<Item> {
    let root = tempfile::tempdir().unwrap();
    with_ctx(root.path(), os, runner, preflight, |ctx| {
        let mut r = Route::new(j, ctx);
        items.iter().flat_map(|f| f(ctx, &mut r)).collect()
    })
}

fn one(os: Os, j: Journal, items: &[crate::route::status::RoutedItem]) -> Vec<Item> {
    run(os, j, &mut ScriptedRunner::new(), up, items)
}

#[test]
fn an_interrupted_install_fails_the_journal_item() {
    let mut j = journal(AdapterName::ResolvedDelegate, "127.0.0.1:5354", vec![]);
    let ok = one(Os::Linux, j.clone(), &[super::journal]);
    assert!(ok[0].ok && ok[0].next == "none", "{ok:?}");
    j.state = State::Applying;
    let v = one(Os::Linux, j, &[super::journal]);
    assert!(!v[0].ok);
    assert!(
        v[0].verdict
            .contains("an install was interrupted (journal state applying)"),
        "{v:?}"
    );
    assert_eq!(
        v[0].next,
        "sudo pigsty-dns route uninstall --yes removes what it wrote; then install again"
    );
}

#[test]
fn drift_names_each_changed_and_missing_file() {
    let d = tempfile::tempdir().unwrap();
    let (same, changed) = (d.path().join("same"), d.path().join("changed"));
    std::fs::write(&same, "a").unwrap();
    std::fs::write(&changed, "b").unwrap();
    let f = |p: &std::path::Path, body: &str| JournalFile {
        path: p.display().to_string(),
        existed_before: false,
        sha256: sha256_hex(body.as_bytes()),
    };
    let files = vec![f(&same, "a"), f(&changed, "a")];
    let v = one(
        Os::Linux,
        journal(
            AdapterName::ResolvedDelegate,
            "127.0.0.1:5354",
            files.clone(),
        ),
        &[drift],
    );
    assert_eq!(
        v[0].verdict,
        format!(
            "{} changed by hand, its ownership marker gone (no longer pigsty-dns's; uninstall leaves it)",
            changed.display()
        )
    );
    assert!(v[0].next.starts_with("undo the hand edit"), "{v:?}");
    std::fs::remove_file(&changed).unwrap();
    let v = one(
        Os::Linux,
        journal(AdapterName::ResolvedDelegate, "127.0.0.1:5354", files),
        &[drift],
    );
    assert_eq!(v[0].verdict, format!("{} is missing", changed.display()));
    let v = one(
        Os::Linux,
        journal(
            AdapterName::ResolvedDelegate,
            "127.0.0.1:5354",
            vec![f(&same, "a")],
        ),
        &[drift],
    );
    assert!(
        v[0].ok && v[0].verdict == "all 1 file(s) are as written",
        "{v:?}"
    );
}

#[test]
fn the_mdns_port_is_a_note_on_linux_and_a_failure_on_macos() {
    let linux = one(
        Os::Linux,
        journal(AdapterName::ResolvedDelegate, "127.0.0.1:5353", vec![]),
        &[port],
    );
    assert!(linux[0].ok, "{linux:?}");
    assert!(
        linux[0]
            .verdict
            .contains("move it: pigsty-dns service install --listen 127.0.0.1:5354")
    );
    let mac = one(
        Os::Macos,
        journal(AdapterName::MacosResolver, "127.0.0.1:5353", vec![]),
        &[port],
    );
    assert!(!mac[0].ok, "{mac:?}");
    assert!(
        mac[0]
            .next
            .starts_with("pigsty-dns service install --listen 127.0.0.1:5354")
    );
    let none = one(
        Os::Linux,
        journal(AdapterName::ResolvedDelegate, "127.0.0.1:5354", vec![]),
        &[port],
    );
    assert!(none.is_empty(), "{none:?}");
}

#[test]
fn networkmanager_is_asked_only_when_the_route_wrote_its_drop_in() {
    let mut j = journal(AdapterName::ResolvedLink, "127.0.0.1:5354", vec![]);
    j.link = Some("pigsty-dns0".into());
    let mut r = ScriptedRunner::new();
    assert!(run(Os::Linux, j.clone(), &mut r, up, &[network_manager]).is_empty());
    assert!(r.calls.is_empty(), "{:?}", r.calls);
    j.files.push(JournalFile {
        path: format!("/root{}", link::NM_CONF_PATH),
        existed_before: false,
        sha256: "-".into(),
    });
    let mut r = ScriptedRunner::new().on(
        "nmcli -t -f DEVICE,STATE device",
        0,
        "pigsty-dns0:connected\n",
    );
    let v = run(Os::Linux, j, &mut r, up, &[network_manager]);
    assert!(!v[0].ok, "{v:?}");
    assert!(
        v[0].verdict
            .starts_with("link pigsty-dns0 is connected to NetworkManager")
    );
    assert!(
        v[0].next.starts_with("sudo nmcli general reload conf"),
        "{v:?}"
    );
    assert!(nm_state_item("pigsty-dns0", Some("unmanaged")).ok);
    assert!(nm_state_item("pigsty-dns0", None).ok);
}

#[test]
fn a_daemon_that_is_down_fails_the_daemon_and_the_lookups() {
    let j = journal(AdapterName::ResolvedDelegate, "127.0.0.1:5354", vec![]);
    let mut r = ScriptedRunner::new();
    let v = run(Os::Linux, j.clone(), &mut r, down, &[daemon, lookups]);
    assert_eq!(v.len(), 2, "{v:?}");
    // Why it is down (stopped, crashed, never started) is route::lifecycle's, tested there.
    assert!(
        v[0].verdict.contains(
            "at 127.0.0.1:5354 (no answer from 127.0.0.1:5354); zone lookups fail (SERVFAIL) and nothing leaks"
        ),
        "{v:?}"
    );
    assert!(
        v[0].next
            .starts_with("start it: pigsty-dns serve --listen 127.0.0.1:5354"),
        "{v:?}"
    );
    assert_eq!(
        (v[1].item.as_str(), v[1].next.as_str()),
        ("lookup", "start the daemon")
    );
    // A journal zone that is no zone: the daemon is not asked, and there are no lookups.
    let mut bad = j;
    bad.zone = "not a zone".into();
    let v = run(Os::Linux, bad, &mut r, up, &[daemon, lookups]);
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(
        v[0].verdict,
        "journal zone \"not a zone\" is not a valid zone"
    );
    assert_eq!(v[0].next, "pigsty-dns route uninstall");
}
