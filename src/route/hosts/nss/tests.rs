use super::*;

const Z: &str = "pigsty.test";

// The stock `hosts:` lines, and where each comes from.
/// Debian 12: libc-bin's /usr/share/libc-bin/nsswitch.conf, copied to /etc on install (read on the
/// build host, libc-bin 2.36-9+deb12u14).
const DEBIAN: &str = "hosts:          files dns";
/// Debian with libnss-mdns (its README's Debian example, avahi/nss-mdns README.md).
const DEBIAN_MDNS: &str = "hosts:          files mdns4_minimal [NOTFOUND=return] dns mdns4";
/// Ubuntu desktop 24.04 (libnss-mdns and libnss-myhostname installed; resolv.conf is resolved's stub).
const UBUNTU: &str = "hosts:          files mdns4_minimal [NOTFOUND=return] dns myhostname";
/// Fedora: authselect's `local` profile, profiles/local/nsswitch.conf, without and with mdns4.
const FEDORA: &str = "hosts:      files myhostname resolve [!UNAVAIL=return] dns";
const FEDORA_MDNS: &str =
    "hosts:      files myhostname mdns4_minimal [NOTFOUND=return] resolve [!UNAVAIL=return] dns";
/// Arch: the `filesystem` package's /etc/nsswitch.conf.
const ARCH: &str = "hosts: mymachines resolve [!UNAVAIL=return] files myhostname dns";
/// Alpine: aports main/alpine-baselayout/APKBUILD writes this (musl itself ignores it).
const ALPINE: &str = "hosts: files dns";

fn p(text: &str) -> NssHosts {
    NssHosts::parse(text).unwrap()
}

fn names(h: &NssHosts) -> Vec<&str> {
    h.sources.iter().map(|s| s.name.as_str()).collect()
}

#[test]
fn stock_lines_parse_into_their_sources_with_actions() {
    let h = p(FEDORA_MDNS);
    assert_eq!(
        names(&h),
        ["files", "myhostname", "mdns4_minimal", "resolve", "dns"]
    );
    let mdns = &h.sources[2];
    assert_eq!(mdns.written, "mdns4_minimal [NOTFOUND=return]");
    assert_eq!(mdns.action(Status::NotFound), Action::Return);
    assert_eq!(mdns.action(Status::Unavail), Action::Continue);
    assert_eq!(mdns.action(Status::Success), Action::Return);
    let resolve = &h.sources[3];
    assert_eq!(resolve.written, "resolve [!UNAVAIL=return]");
    for s in [Status::Success, Status::NotFound, Status::TryAgain] {
        assert_eq!(resolve.action(s), Action::Return, "{s:?}");
    }
    assert_eq!(resolve.action(Status::Unavail), Action::Continue);
    assert_eq!(h.line, Some(1));
    assert_eq!(h.text, FEDORA_MDNS);
    for stock in [DEBIAN, DEBIAN_MDNS, UBUNTU, FEDORA, ARCH, ALPINE] {
        assert!(p(stock).ignored.is_none(), "{stock}");
    }
}

#[test]
fn every_stock_line_but_archs_consults_files_before_the_zone() {
    for stock in [DEBIAN, DEBIAN_MDNS, UBUNTU, FEDORA, FEDORA_MDNS, ALPINE] {
        assert_eq!(p(stock).files_order(Z), FilesOrder::FilesFirst, "{stock}");
    }
    // Arch: resolve answers (found or not) unless resolved is down; only then files.
    assert_eq!(p(ARCH).files_order(Z), FilesOrder::AfterUnavailable);
    assert_eq!(
        p("hosts: dns files").files_order(Z),
        FilesOrder::AfterNotFound
    );
    assert_eq!(
        p("hosts: dns [NOTFOUND=return] files").files_order(Z),
        FilesOrder::AfterUnavailable
    );
    assert_eq!(
        p("hosts: resolve [!UNAVAIL=return] dns").files_order(Z),
        FilesOrder::NotConsulted
    );
    assert_eq!(
        p("hosts: resolve [UNAVAIL=return] dns [UNAVAIL=return] files").files_order(Z),
        FilesOrder::AfterNotFound
    );
    assert_eq!(
        p("hosts: dns [!UNAVAIL=return UNAVAIL=return] files").files_order(Z),
        FilesOrder::NotConsulted
    );
    assert!(FilesOrder::FilesFirst.shadows(true));
    assert!(FilesOrder::AfterNotFound.shadows(false));
    assert!(!FilesOrder::AfterNotFound.shadows(true));
    assert!(!FilesOrder::AfterUnavailable.shadows(false));
}

#[test]
fn mdns_minimal_notfound_return_does_not_stop_names_outside_local() {
    let h = p(UBUNTU);
    let r = h.reach(Z);
    assert!(r.dns && !r.resolve && r.blocker.is_none(), "{r:?}");
    assert_eq!(h.route_effect(Z, true), RouteEffect::Dns);
    // A zone under .local is mDNS's own: NOTFOUND there returns, but it may also answer UNAVAIL
    // (no avahi), so dns is still reachable; the route is not refused.
    assert!(h.reach("lab.local").dns);
}

#[test]
fn the_route_effect_follows_the_order_and_resolv_conf() {
    // resolve first, reachable: resolved routes it, whatever resolv.conf says.
    for stock in [FEDORA, FEDORA_MDNS, ARCH] {
        assert_eq!(
            p(stock).route_effect(Z, false),
            RouteEffect::Resolve,
            "{stock}"
        );
    }
    // dns only: the route takes effect only when resolv.conf leads there.
    for stock in [DEBIAN, DEBIAN_MDNS, UBUNTU, ALPINE] {
        assert_eq!(p(stock).route_effect(Z, true), RouteEffect::Dns, "{stock}");
        let RouteEffect::Unsupported(why) = p(stock).route_effect(Z, false) else {
            panic!("{stock}");
        };
        assert!(why.contains("127.0.0.53") && why.contains(stock), "{why}");
    }
    let RouteEffect::Unsupported(why) = p("hosts: files myhostname").route_effect(Z, true) else {
        panic!()
    };
    assert!(why.contains("neither resolve nor dns"), "{why}");
    assert!(why.contains("hosts: files myhostname"), "{why}");
    // A source that returns for every answer it can give: never reached.
    let h = p("hosts: files [NOTFOUND=return] dns");
    assert_eq!(
        h.reach(Z),
        Reach {
            resolve: false,
            dns: false,
            blocker: Some("files [NOTFOUND=return]".into())
        }
    );
    let RouteEffect::Unsupported(why) = h.route_effect(Z, true) else {
        panic!()
    };
    assert!(why.contains("files [NOTFOUND=return]"), "{why}");
    // An unknown module could answer anything: not certain, so not refused.
    let h = p("hosts: files ldap [NOTFOUND=return] dns");
    assert!(h.reach(Z).dns);
    // mymachines gives NOTFOUND or UNAVAIL: with both returning, dns is never reached.
    let h = p("hosts: mymachines [NOTFOUND=return UNAVAIL=return] dns");
    assert_eq!(
        h.reach(Z).blocker.as_deref(),
        Some("mymachines [NOTFOUND=return UNAVAIL=return]")
    );
    // resolve unreachable but dns reachable after mdns: dns decides.
    let h = p("hosts: files resolve [!UNAVAIL=return] dns");
    assert!(h.reach(Z).resolve && h.reach(Z).dns);
}

#[test]
fn actions_parse_as_glibc_parses_them() {
    let h = p("hosts: files [success=Continue NotFound=RETURN] dns [ !TRYAGAIN = merge ]");
    let f = &h.sources[0];
    assert_eq!(f.action(Status::Success), Action::Continue);
    assert_eq!(f.action(Status::NotFound), Action::Return);
    assert_eq!(f.action(Status::Unavail), Action::Continue);
    let d = &h.sources[1];
    assert_eq!(d.written, "dns [ !TRYAGAIN = merge ]");
    assert_eq!(d.action(Status::TryAgain), Action::Continue);
    for s in [Status::Success, Status::NotFound, Status::Unavail] {
        assert_eq!(d.action(s), Action::Merge);
    }
    // Brackets need no blank before them; glibc stops at a second bracket.
    let h = p("hosts: files[NOTFOUND=return] [SUCCESS=continue] dns");
    assert_eq!(names(&h), ["files"]);
    assert_eq!(h.ignored.as_deref(), Some("[SUCCESS=continue] dns"));
    // A trailing comment is module names to glibc, which fail to load (UNAVAIL, continue).
    let h = p("hosts: files dns # resolved later");
    assert_eq!(names(&h), ["files", "dns", "#", "resolved", "later"]);
    assert_eq!(h.route_effect(Z, true), RouteEffect::Dns);
}

#[test]
fn bad_actions_are_errors_with_their_line() {
    for (line, needle) in [
        (
            "hosts: files [NOTFOUND=stop] dns",
            "\"stop\" is not an NSS action",
        ),
        (
            "hosts: files [FOUND=return] dns",
            "\"FOUND\" is not an NSS status",
        ),
        ("hosts: files [NOTFOUND] dns", "no \"=action\""),
        ("hosts: files [NOTFOUND=return", "unterminated"),
        ("hosts: files [] dns", "empty"),
    ] {
        let e = NssHosts::parse(&format!("# nsswitch\n{line}\n")).unwrap_err();
        assert_eq!(e.line, 2, "{line}");
        assert!(e.to_string().contains(needle), "{line}: {e}");
    }
}

#[test]
fn the_last_hosts_line_wins_and_without_one_glibcs_default_applies() {
    let h = p("passwd: files\n  hosts: dns\n#hosts: files\nhosts:files resolve\nhostsx: dns\n");
    assert_eq!(names(&h), ["files", "resolve"]);
    assert_eq!((h.line, h.overridden.clone()), (Some(4), vec![2]));
    assert_eq!(h.text, "hosts:files resolve");
    // glibc takes a blank as the name's end too.
    assert_eq!(names(&p("hosts files dns\r\n")), ["files", "dns"]);
    let d = p("passwd: files\n");
    assert_eq!((d.line, names(&d)), (None, vec!["files", "dns"]));
    assert_eq!(d, NssHosts::glibc_default());
    // `hosts:` with nothing after it: no sources at all.
    let e = p("hosts:\n");
    assert!(e.sources.is_empty());
    assert!(matches!(
        e.route_effect(Z, true),
        RouteEffect::Unsupported(_)
    ));
}

#[test]
fn resolv_conf_points_at_the_stub_by_its_first_nameserver_or_its_target() {
    let stub = "# This is /run/systemd/resolve/stub-resolv.conf\nnameserver 127.0.0.53\noptions edns0 trust-ad\nsearch .\n";
    assert!(resolv_conf_points_at_stub(stub));
    assert!(resolv_conf_points_at_stub(
        "; x\n  nameserver\t127.0.0.53\n"
    ));
    for other in [
        "nameserver 10.0.0.1\nnameserver 127.0.0.53\n",
        "#nameserver 127.0.0.53\nnameserver 1.1.1.1\n",
        "nameserver 127.0.0.54\n",
        "nameservers 127.0.0.53\n",
        "",
    ] {
        assert!(!resolv_conf_points_at_stub(other), "{other:?}");
    }
    assert!(resolv_target_is_stub(Path::new(
        "/run/systemd/resolve/stub-resolv.conf"
    )));
    assert!(resolv_target_is_stub(Path::new(
        "../run/systemd/resolve/stub-resolv.conf"
    )));
    assert!(!resolv_target_is_stub(Path::new(
        "/run/systemd/resolve/resolv.conf"
    )));
    assert!(!resolv_target_is_stub(Path::new(
        "/run/NetworkManager/resolv.conf"
    )));
}

#[test]
fn resolved_reads_the_hosts_file_unless_a_resolve_section_says_no() {
    assert!(resolved_reads_etc_hosts(&[]));
    assert!(resolved_reads_etc_hosts(&["[Resolve]\n#ReadEtcHosts=no\n"]));
    assert!(!resolved_reads_etc_hosts(&[
        "[Resolve]\nReadEtcHosts = No\n"
    ]));
    // A drop-in after the main file wins; an empty value resets to the default.
    assert!(resolved_reads_etc_hosts(&[
        "[Resolve]\nReadEtcHosts=no\n",
        "[Resolve]\nReadEtcHosts=\n"
    ]));
    assert!(!resolved_reads_etc_hosts(&[
        "[Resolve]\nReadEtcHosts=yes\n",
        "[Resolve]\nReadEtcHosts=off\n"
    ]));
    // Outside [Resolve], or not a boolean: ignored.
    assert!(resolved_reads_etc_hosts(&["[Other]\nReadEtcHosts=no\n"]));
    assert!(resolved_reads_etc_hosts(&[
        "[Resolve]\nReadEtcHosts=maybe\n"
    ]));
}
