use super::*;
use crate::sys::runner::ScriptedRunner;
use std::cell::RefCell;
use std::rc::Rc;

fn addrs(s: &str) -> Vec<SocketAddr> {
    vec![s.parse().unwrap()]
}

#[test]
fn refuses_ports_that_cannot_work() {
    let none: Vec<String> = vec![];
    assert!(check_listen(Os::Linux, &addrs("127.0.0.1:5354"), &none).is_ok());
    assert!(check_listen(Os::Linux, &addrs("127.0.0.1:5353"), &none).is_ok());
    let e = check_listen(Os::Macos, &addrs("127.0.0.1:5353"), &none).unwrap_err();
    assert_eq!(e.class, Class::Usage);
    assert_eq!(e.class.exit_code(), 2);
    assert!(e.message.contains("mDNSResponder") && e.next.contains("127.0.0.1:5354"));
    let e = check_listen(
        Os::Linux,
        &addrs("127.0.0.1:5353"),
        &["avahi-daemon.service is enabled".into()],
    )
    .unwrap_err();
    assert_eq!(e.class, Class::Conflict);
    assert!(
        e.message.contains("avahi-daemon.service is enabled"),
        "{}",
        e.message
    );
    for bad in [
        "127.0.0.1:0",
        "127.0.0.1:53",
        "127.0.0.1:5355",
        "10.0.0.1:5354",
    ] {
        assert_eq!(
            check_listen(Os::Linux, &addrs(bad), &none)
                .unwrap_err()
                .class,
            Class::Usage,
            "{bad}"
        );
    }
    assert!(check_listen(Os::Linux, &[], &none).is_err());
}

fn runner() -> ScriptedRunner {
    ScriptedRunner::logging(Rc::new(RefCell::new(Vec::new()))).on(
        "systemctl is-enabled",
        1,
        "disabled\n",
    )
}

#[test]
fn detects_avahi_resolved_and_a_bound_port_from_files_and_systemctl() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    assert!(detect_mdns(r, &mut runner()).is_empty());

    let mut avahi = ScriptedRunner::logging(Rc::new(RefCell::new(Vec::new())))
        .on("systemctl is-enabled avahi-daemon.service", 0, "enabled\n")
        .on("systemctl is-enabled", 1, "disabled\n");
    assert_eq!(
        detect_mdns(r, &mut avahi),
        ["avahi-daemon.service is enabled"]
    );

    // resolved running, its own view says -mDNS: not a holder, whatever the files say.
    std::fs::create_dir_all(r.join("run/systemd/resolve")).unwrap();
    let mut off = runner().on(
        "resolvectl status",
        0,
        "Global\n       Protocols: +LLMNR -mDNS -DNSOverTLS DNSSEC=no/unsupported\n",
    );
    assert!(detect_mdns(r, &mut off).is_empty());
    let mut on = runner().on(
        "resolvectl status",
        0,
        "Global\n       Protocols: +LLMNR +mDNS -DNSOverTLS\nLink 2\n    Protocols: -mDNS\n",
    );
    assert_eq!(detect_mdns(r, &mut on).len(), 1);

    // resolvectl fails: the configuration decides (drop-in over main file over commented default).
    let mut broken = runner().on("resolvectl status", 1, "");
    std::fs::create_dir_all(r.join("etc/systemd/resolved.conf.d")).unwrap();
    std::fs::write(
        r.join("etc/systemd/resolved.conf"),
        "[Resolve]\n#MulticastDNS=no\n",
    )
    .unwrap();
    assert!(detect_mdns(r, &mut broken).is_empty());
    std::fs::write(
        r.join("etc/systemd/resolved.conf.d/mdns.conf"),
        "[Resolve]\nMulticastDNS=yes\n",
    )
    .unwrap();
    assert_eq!(
        detect_mdns(r, &mut broken),
        ["systemd-resolved has MulticastDNS=yes"]
    );
    std::fs::remove_dir_all(r.join("run/systemd/resolve")).unwrap();
    assert!(
        detect_mdns(r, &mut runner()).is_empty(),
        "resolved neither running nor enabled"
    );

    std::fs::create_dir_all(r.join("proc/net")).unwrap();
    std::fs::write(
            r.join("proc/net/udp"),
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
             0: 00000000:14E9 00000000:0000 07 00000000:00000000 00:00000000 00000000   107        0 1234 2\n",
        )
        .unwrap();
    assert_eq!(
        detect_mdns(r, &mut runner()),
        ["UDP port 5353 is already bound (uid 107)"]
    );
}

#[test]
fn a_unit_on_the_old_default_is_spotted_in_either_format() {
    let unit = "[Service]\nExecStart=/usr/bin/pigsty-dns serve --listen 127.0.0.1:5353 --listen [::1]:5353 --state-dir /x\n";
    assert_eq!(
        listen_in_unit(unit),
        addrs("127.0.0.1:5353")
            .into_iter()
            .chain(addrs("[::1]:5353"))
            .collect::<Vec<_>>()
    );
    let plist = "\t\t<string>/usr/local/bin/pigsty-dns</string>\n\t\t<string>serve</string>\n\t\t<string>--listen</string>\n\t\t<string>127.0.0.1:5353</string>\n";
    assert_eq!(listen_in_unit(plist), addrs("127.0.0.1:5353"));
    let note = old_default_note(&listen_in_unit(plist), "pigsty-dns").unwrap();
    assert!(
        note.contains("pigsty-dns service install --listen 127.0.0.1:5354")
            && note.contains("route install --server 127.0.0.1:5354"),
        "{note}"
    );
    assert_eq!(
        old_default_note(&addrs("127.0.0.1:5354"), "pigsty-dns"),
        None
    );
}

#[test]
fn multicast_dns_default_comes_from_the_commented_line() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    assert_eq!(multicast_dns_setting(r), None);
    std::fs::create_dir_all(r.join("etc/systemd")).unwrap();
    std::fs::write(
        r.join("etc/systemd/resolved.conf"),
        "[Resolve]\n#MulticastDNS=yes\n",
    )
    .unwrap();
    assert_eq!(multicast_dns_setting(r).as_deref(), Some("yes"));
    std::fs::write(
        r.join("etc/systemd/resolved.conf"),
        "[Resolve]\n#MulticastDNS=yes\nMulticastDNS=resolve\n",
    )
    .unwrap();
    assert_eq!(multicast_dns_setting(r).as_deref(), Some("resolve"));
}
