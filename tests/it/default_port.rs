//! The default listen address is 127.0.0.1:5354 wherever a user reads it: every `--help` that shows a
//! default, the README's quickstart, the unit templates and their golden renderings. (5353 is the mDNS
//! port: macOS never sends unicast DNS to a resolver on it, and Avahi or mDNSResponder hold it.)

use std::path::Path;
use std::process::Command;

use pigsty_dns::defaults::{LISTEN, LISTEN_STR};

use crate::util::BIN;

fn help(args: &[&str]) -> String {
    let out = Command::new(BIN)
        .args(args)
        .arg("--help")
        .env_remove("PIGSTY_DNS_LISTEN")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?} --help");
    String::from_utf8(out.stdout).unwrap()
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
}

#[test]
fn every_help_that_shows_the_default_says_5354() {
    assert_eq!(LISTEN_STR, "127.0.0.1:5354");
    assert_eq!(LISTEN.port(), 5354);
    for args in [
        &["serve"][..],
        &["status"],
        &["load"],
        &["route", "install"],
        &["service", "install"],
    ] {
        let h = help(args);
        assert!(h.contains("127.0.0.1:5354"), "{args:?}: {h}");
        assert!(!h.contains("127.0.0.1:5353"), "{args:?}: {h}");
    }
}

#[test]
fn the_readme_and_the_units_say_5354() {
    let readme = read("README.md");
    let quick = &readme[readme.find("## Quickstart").unwrap()..readme.find("## Tests").unwrap()];
    assert!(
        quick.contains("dig @127.0.0.1 -p 5354 meta.pigsty.test"),
        "{quick}"
    );
    assert!(!quick.contains("-p 5353"), "{quick}");
    assert!(readme.contains("The default is `127.0.0.1:5354`"));
    // 5353 only where the README says why not, and how to use it where it is free.
    for (i, _) in readme.match_indices("127.0.0.1:5353") {
        let line = readme[..i].rsplit('\n').next().unwrap_or("").to_string()
            + readme[i..].split('\n').next().unwrap_or("");
        assert!(
            [
                "mDNS",
                "5353 on a Linux",
                "--listen 127.0.0.1:5353",
                "moves",
                "Move"
            ]
            .iter()
            .any(|w| line.contains(w)),
            "5353 spelled as a default? {line}"
        );
    }
    for rel in [
        "deploy/systemd/pigsty-dns.service",
        "deploy/systemd/pigsty-dns-system.service",
        "deploy/launchd/io.pigsty.dns.plist",
        "tests/golden/io.pigsty.dns.plist",
        "tests/golden/pigsty-dns.user-252.service",
        "tests/golden/pigsty-dns.user-257.service",
        "tests/golden/pigsty-dns.system-252.service",
    ] {
        let t = read(rel);
        assert!(
            !t.contains("127.0.0.1:5353") && !t.contains("-p 5353"),
            "{rel}"
        );
    }
}
