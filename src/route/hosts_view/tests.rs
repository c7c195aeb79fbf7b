//! The hosts items alone, over a fake root: each state of the file, the NSS order, the refusal.

use super::*;
use crate::route::status::testing::with_ctx;
use crate::sys::runner::ScriptedRunner;
use std::net::Ipv4Addr;
use std::path::PathBuf;

const ZONE: &str = "pigsty.test";

fn view(root: &Path, os: Os, adapter: Option<AdapterName>) -> View {
    let mut r = ScriptedRunner::new();
    with_ctx(root, os, &mut r, crate::route::status::testing::up, |ctx| {
        View::read(ctx, ZONE, adapter, Err("no generation yet".into()))
    })
}

fn write(root: &Path, abs: &str, text: &str) {
    let p = under(root, abs);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn no_hosts_file_is_one_ok_item_and_glibc_default_order() {
    let d = tempfile::tempdir().unwrap();
    let v = view(d.path(), Os::Linux, Some(AdapterName::ResolvedLink)).items();
    assert_eq!(v.len(), 2, "{v:?}");
    assert_eq!(v[0].item, "hosts file");
    assert!(
        v[0].ok && v[0].verdict.starts_with("no hosts file at /etc/hosts"),
        "{v:?}"
    );
    assert_eq!(v[1].item, "nss hosts order");
    // glibc's default `files dns`, and no resolv.conf at the stub: no route takes effect.
    assert!(!v[1].ok, "{v:?}");
    assert!(
        v[1].verdict
            .contains("no /etc/nsswitch.conf: glibc's default"),
        "{v:?}"
    );
    assert!(v[1].verdict.contains("unsupported:"), "{v:?}");
}

#[test]
fn an_unreadable_hosts_file_is_its_own_failing_item_and_the_order_still_shows() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "/etc/hosts", "127.0.0.1 localhost\0\n");
    write(
        d.path(),
        "/etc/nsswitch.conf",
        "hosts: files resolve [!UNAVAIL=return] dns\n",
    );
    let v = view(d.path(), Os::Linux, Some(AdapterName::ResolvedDelegate)).items();
    assert_eq!(v.len(), 2, "{v:?}");
    assert!(
        !v[0].ok && v[0].verdict.contains("cannot be read safely"),
        "{v:?}"
    );
    assert!(!v[0].next.is_empty() && v[0].next != "none", "{v:?}");
    assert!(
        v[1].ok && v[1].verdict.contains("through nss-resolve"),
        "{v:?}"
    );
}

#[test]
fn macos_reads_private_etc_hosts_and_has_no_nss_item() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "/private/etc/hosts",
        "10.10.10.2 pg-meta.pigsty.test\n",
    );
    let view = view(d.path(), Os::Macos, Some(AdapterName::MacosResolver));
    assert_eq!(view.summary.file, "/private/etc/hosts");
    let v = view.items();
    assert_eq!(v.len(), 2, "{v:?}");
    assert_eq!(v[1].item, "hosts: shadowed name pg-meta.pigsty.test");
    assert!(!v[1].ok, "{v:?}");
    assert!(v[1].verdict.starts_with("line 1 ("), "{v:?}");
    assert_eq!(
        v[1].next,
        "delete line 1 of /private/etc/hosts by hand: 10.10.10.2 pg-meta.pigsty.test"
    );
    assert!(view.refuse_unsupported().is_ok());
}

#[test]
fn files_after_dns_is_not_a_shadow_without_resolved_and_nm_dnsmasq_is_not_refused() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "/etc/hosts", "10.10.10.2 pg-meta.pigsty.test\n");
    write(
        d.path(),
        "/etc/nsswitch.conf",
        "hosts: dns [!UNAVAIL=return] files\n",
    );
    write(d.path(), "/etc/resolv.conf", "nameserver 127.0.0.1\n");
    let view = view(d.path(), Os::Linux, Some(AdapterName::NmDnsmasq));
    let v = view.items();
    assert!(v.iter().all(|i| i.ok), "{v:?}");
    assert!(v[1].verdict.contains("not a shadow"), "{v:?}");
    assert!(view.refuse_unsupported().is_ok());
    let (warnings, notes) = view.plan_lines();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(notes.len(), 1, "{notes:?}");
}

#[test]
fn dns_only_reaches_a_resolved_route_through_the_stub_else_install_refuses_with_exit_3() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "/etc/nsswitch.conf", "hosts: files dns\n");
    write(d.path(), "/etc/resolv.conf", "nameserver 192.168.1.1\n");
    let e = view(d.path(), Os::Linux, Some(AdapterName::ResolvedLink))
        .refuse_unsupported()
        .unwrap_err();
    assert_eq!(e.class.exit_code(), 3);
    assert!(
        e.message.starts_with("unsupported: ") && e.message.contains("\"hosts: files dns\""),
        "{}",
        e.message
    );
    write(d.path(), "/etc/resolv.conf", "nameserver 127.0.0.53\n");
    let view = view(d.path(), Os::Linux, Some(AdapterName::ResolvedLink));
    assert!(view.refuse_unsupported().is_ok());
    assert!(
        view.items()[1].verdict.contains("through dns"),
        "{:?}",
        view.items()
    );
}

#[test]
fn resolved_reading_hosts_makes_a_line_shadow_even_after_resolve() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "/etc/hosts", "10.10.10.2 pg-meta.pigsty.test\n");
    write(
        d.path(),
        "/etc/nsswitch.conf",
        "hosts: resolve [!UNAVAIL=return] files\n",
    );
    let v = view(d.path(), Os::Linux, Some(AdapterName::ResolvedLink)).items();
    assert!(
        !v[1].ok && v[1].verdict.contains("ReadEtcHosts=yes"),
        "{v:?}"
    );
    write(
        d.path(),
        "/etc/systemd/resolved.conf.d/hosts.conf",
        "[Resolve]\nReadEtcHosts=no\n",
    );
    let v = view(d.path(), Os::Linux, Some(AdapterName::ResolvedLink)).items();
    assert!(v[1].ok && v[1].verdict.contains("not a shadow"), "{v:?}");
}

fn live(names: &[(&str, [u8; 4])]) -> Live {
    let mut records: Vec<crate::input::records::Record> = names
        .iter()
        .map(|(n, a)| crate::input::records::Record {
            name: n.to_string(),
            address: Ipv4Addr::from(*a),
            sources: vec![],
        })
        .collect();
    records.sort_by(|a, b| a.name.cmp(&b.name));
    Live {
        state_dir: PathBuf::from("/nonexistent"),
        zone: ZONE.into(),
        zones: vec![ZONE.into()],
        serial: 3,
        reverse: Some("10.10.10.in-addr.arpa".into()),
        ptr: vec![],
        records,
    }
}

fn default_name(
    root: &Path,
    l: Option<&Live>,
    state_dir: Option<PathBuf>,
) -> Result<String, String> {
    let mut r = ScriptedRunner::new();
    with_ctx(
        root,
        Os::Linux,
        &mut r,
        crate::route::status::testing::up,
        |ctx| {
            ctx.state_dir = state_dir;
            default_check_name(ctx, AdapterName::ResolvedLink, l, "pigsty.test")
        },
    )
}

#[test]
fn the_default_check_name_is_the_first_served_name_in_canonical_order_the_hosts_file_leaves_alone()
{
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "/etc/nsswitch.conf",
        "hosts: files resolve [!UNAVAIL=return] dns\n",
    );
    // Canonical order compares from the root label down: b.pigsty.test before a.x.pigsty.test.
    let l = live(&[
        ("a.x.pigsty.test", [10, 10, 10, 1]),
        ("b.pigsty.test", [10, 10, 10, 2]),
        ("c.pigsty.test", [10, 10, 10, 3]),
    ]);
    assert_eq!(
        default_name(d.path(), Some(&l), None).unwrap(),
        "b.pigsty.test"
    );
    // A hosts line answers b (even at its own address): the next name proves the route instead.
    write(d.path(), "/etc/hosts", "10.10.10.2 b.pigsty.test\n");
    assert_eq!(
        default_name(d.path(), Some(&l), None).unwrap(),
        "c.pigsty.test"
    );
    // Every name shadowed: the first is checked anyway, and its check shows the shadow.
    write(
        d.path(),
        "/etc/hosts",
        "10.10.10.9 b.pigsty.test c.pigsty.test a.x.pigsty.test\n",
    );
    assert_eq!(
        default_name(d.path(), Some(&l), None).unwrap(),
        "b.pigsty.test"
    );
}

#[test]
fn without_a_served_name_the_check_says_why() {
    let d = tempfile::tempdir().unwrap();
    let empty = live(&[]);
    assert_eq!(
        default_name(d.path(), Some(&empty), None).unwrap_err(),
        "not checked: the zone is empty"
    );
    // A state dir with no generation yet: the daemon serves the empty zone.
    let state = d.path().join("state");
    std::fs::create_dir(&state).unwrap();
    assert_eq!(
        default_name(d.path(), None, Some(state)).unwrap_err(),
        "not checked: the zone is empty"
    );
    let e = default_name(d.path(), None, None).unwrap_err();
    assert!(e.starts_with("not checked: no --check-name"), "{e}");
}
