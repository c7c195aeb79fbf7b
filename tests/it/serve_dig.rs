//! End-to-end checks with a real resolver tool: `dig` (bind9-dnsutils). Run only with PIGSTY_DNS_E2E=1;
//! then a missing dig is a failure, not a skip.

use std::net::SocketAddr;
use std::time::Duration;

use crate::util::*;
use pigsty_dns::serve::answer::Limits;
use pigsty_dns::serve::net::ServerConfig;

/// Runs dig against the server and returns its output with runs of whitespace collapsed to one space.
async fn dig(server: SocketAddr, args: &[&str]) -> String {
    let dig = std::env::var("DIG").unwrap_or_else(|_| "dig".into());
    let mut cmd = tokio::process::Command::new(&dig);
    cmd.arg(format!("@{}", server.ip()))
        .arg("-p")
        .arg(server.port().to_string())
        .args(["+tries=1", "+time=2", "+nocookie"])
        .args(args)
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(10), cmd.output())
        .await
        .expect("dig finishes")
        .unwrap_or_else(|e| panic!("PIGSTY_DNS_E2E=1 needs `{dig}` (Debian: bind9-dnsutils): {e}"));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dig_sees_every_rule() {
    if !e2e() {
        eprintln!("skipped: set PIGSTY_DNS_E2E=1 to run the dig end-to-end test");
        return;
    }
    let srv = start(test_config());
    let s = srv.addr;

    let out = dig(s, &["meta.pigsty.test", "A"]).await;
    assert!(out.contains("status: NOERROR"), "{out}");
    assert!(out.contains("flags: qr aa rd;"), "AA set, RA not: {out}");
    assert!(
        out.contains("ANSWER SECTION: meta.pigsty.test. 30 IN A 10.10.10.10"),
        "{out}"
    );
    assert!(out.contains("EDNS: version: 0, flags:; udp: 1232"), "{out}");

    let out = dig(s, &["nope.pigsty.test", "A"]).await;
    assert!(out.contains("status: NXDOMAIN"), "{out}");
    assert!(
        out.contains("AUTHORITY SECTION: pigsty.test. 5 IN SOA localhost. hostmaster.pigsty.test. 1 3600 900 604800 5"),
        "{out}"
    );

    let out = dig(s, &["b.pigsty.test", "A"]).await;
    assert!(
        out.contains("status: NOERROR") && out.contains("ANSWER: 0, AUTHORITY: 1"),
        "{out}"
    );
    let out = dig(s, &["meta.pigsty.test", "AAAA"]).await;
    assert!(
        out.contains("status: NOERROR") && out.contains("ANSWER: 0, AUTHORITY: 1"),
        "{out}"
    );

    let out = dig(s, &["+tcp", "a.b.pigsty.test", "A"]).await;
    assert!(
        out.contains("status: NOERROR") && out.contains("a.b.pigsty.test. 30 IN A 10.10.10.11"),
        "{out}"
    );
    assert!(out.contains("(TCP)"), "{out}");

    let out = dig(s, &["+edns=1", "+noednsneg", "meta.pigsty.test", "A"]).await;
    assert!(out.contains("status: BADVERS"), "{out}");
    assert!(out.contains("EDNS: version: 0"), "{out}");
    assert!(out.contains("ANSWER: 0, AUTHORITY: 0"), "{out}");

    let out = dig(
        s,
        &[
            "+ednsopt=100",
            "+ednsflags=0x80",
            "+dnssec",
            "MeTa.PiGsTy.TeSt",
            "A",
        ],
    )
    .await;
    assert!(
        out.contains("status: NOERROR") && out.contains("EDNS: version: 0, flags: do; udp: 1232"),
        "{out}"
    );
    assert!(
        out.contains("QUESTION SECTION: ;MeTa.PiGsTy.TeSt. IN A"),
        "{out}"
    );

    let out = dig(s, &["pigsty.test", "SOA"]).await;
    assert!(
        out.contains(
            "pigsty.test. 30 IN SOA localhost. hostmaster.pigsty.test. 1 3600 900 604800 5"
        ),
        "{out}"
    );
    let out = dig(s, &["example.com", "A"]).await;
    assert!(
        out.contains("status: REFUSED") && out.contains("flags: qr rd;"),
        "{out}"
    );
    let out = dig(s, &["+opcode=15", "+header-only"]).await;
    assert!(out.contains("status: NOTIMP"), "{out}");
    let out = dig(s, &["-c", "CH", "version.bind", "TXT"]).await;
    assert!(out.contains("status: REFUSED"), "{out}");
    srv.stop().await;

    // With an injected UDP cap dig sees TC=1 and retries over TCP by itself.
    let cfg = ServerConfig {
        limits: Limits {
            udp_cap: Some(40),
            ..Limits::default()
        },
        ..test_config()
    };
    let srv = start(cfg);
    let out = dig(srv.addr, &["meta.pigsty.test", "A"]).await;
    assert!(out.contains("Truncated, retrying in TCP mode"), "{out}");
    assert!(
        out.contains("meta.pigsty.test. 30 IN A 10.10.10.10"),
        "{out}"
    );
    srv.stop().await;
}
