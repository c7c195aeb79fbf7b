use super::*;
use crate::route::files;

/// A Mac on Wi-Fi with the route installed, as `scutil --dns` prints it (dnsinfo_logging.h,
/// non-debug: flags without their hex, reach with it).
const WIFI_WITH_ROUTE: &str = "DNS configuration

resolver #1
  search domain[0] : lan
  nameserver[0] : 192.168.1.1
  if_index : 6 (en0)
  flags    : Request A records
  reach    : 0x00020002 (Reachable,Directly Reachable Address)

resolver #2
  domain   : local
  options  : mdns
  timeout  : 5
  flags    : Request A records
  reach    : 0x00000000 (Not Reachable)
  order    : 300000

resolver #3
  domain   : 254.169.in-addr.arpa
  options  : mdns
  timeout  : 5
  flags    : Request A records
  reach    : 0x00000000 (Not Reachable)
  order    : 300200

resolver #4
  domain   : pigsty.test
  nameserver[0] : 127.0.0.1
  port     : 5354
  flags    : Request A records, Request AAAA records
  reach    : 0x00030002 (Reachable,Local Address,Directly Reachable Address)

DNS configuration (for scoped queries)

resolver #1
  search domain[0] : lan
  nameserver[0] : 192.168.1.1
  if_index : 6 (en0)
  flags    : Scoped, Request A records
  reach    : 0x00020002 (Reachable,Directly Reachable Address)
";

fn server(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

#[test]
fn blocks_keep_their_section_number_and_fields() {
    let rs = parse(WIFI_WITH_ROUTE);
    assert_eq!(rs.len(), 5);
    let ours = &rs[3];
    assert_eq!(
        (ours.section, ours.number, ours.domain.as_deref()),
        (Section::Default, 4, Some("pigsty.test"))
    );
    assert_eq!(ours.nameservers, ["127.0.0.1"]);
    assert_eq!(ours.port, Some(5354));
    assert_eq!(ours.flags, ["Request A records", "Request AAAA records"]);
    assert_eq!(rs[1].options.as_deref(), Some("mdns"));
    assert_eq!(rs[1].order, Some(300000));
    assert!(!rs[1].is_unicast(), "no nameserver: multicast");
    let scoped = &rs[4];
    assert_eq!((scoped.section, scoped.number), (Section::Scoped, 1));
    assert_eq!(scoped.if_index.as_deref(), Some("6 (en0)"));
    assert_eq!(scoped.flags, ["Scoped", "Request A records"]);
    assert_eq!(rs[0].search, ["lan"]);
    assert!(route_block(&rs, "pigsty.test", server("127.0.0.1:5354")).is_ok());
    assert!(route_block(&rs, "PIGSTY.test.", server("127.0.0.1:5354")).is_ok());
}

#[test]
fn domain_nameserver_and_port_must_be_in_the_same_block() {
    // Today's bug: "domain : pigsty.test" in one block and "port : 5354" in another passed.
    let split = "DNS configuration

resolver #1
  domain   : pigsty.test
  nameserver[0] : 10.0.0.53
  flags    : Request A records
  reach    : 0x00000002 (Reachable)

resolver #2
  domain   : other.test
  nameserver[0] : 127.0.0.1
  port     : 5354
  flags    : Request A records
  reach    : 0x00030002 (Reachable,Local Address,Directly Reachable Address)
";
    let e = route_block(&parse(split), "pigsty.test", server("127.0.0.1:5354")).unwrap_err();
    assert!(
        e.contains("no unscoped resolver for pigsty.test with nameserver 127.0.0.1 and port 5354")
            && e.contains("resolver #1: nameserver 10.0.0.53"),
        "{e}"
    );
    let e = route_block(&parse(split), "nope.test", server("127.0.0.1:5354")).unwrap_err();
    assert!(e.contains("lists no resolver for domain nope.test"), "{e}");
}

#[test]
fn two_resolvers_for_the_same_domain_are_both_seen() {
    let two = "DNS configuration

resolver #1
  nameserver[0] : 192.168.1.1
  if_index : 6 (en0)
  flags    : Request A records
  reach    : 0x00020002 (Reachable,Directly Reachable Address)

resolver #2
  domain   : pigsty.test
  nameserver[0] : 10.1.2.3
  flags    : Request A records, Request AAAA records
  reach    : 0x00000002 (Reachable)

resolver #3
  domain   : pigsty.test
  nameserver[0] : 127.0.0.1
  port     : 5354
  flags    : Request A records, Request AAAA records
  reach    : 0x00030002 (Reachable,Local Address,Directly Reachable Address)
";
    let rs = parse(two);
    let for_zone: Vec<u32> = rs
        .iter()
        .filter(|r| r.serves("pigsty.test"))
        .map(|r| r.number)
        .collect();
    assert_eq!(for_zone, [2, 3]);
    assert!(route_block(&rs, "pigsty.test", server("127.0.0.1:5354")).is_ok());
    assert!(!rs[1].is_route("pigsty.test", server("127.0.0.1:5354")));
}

/// A split-DNS VPN (utun) that also resolves pigsty.test: a supplemental resolver in the default
/// section and a scoped one, the latter printed with `scutil -d --dns` (hex flags).
const VPN: &str = "DNS configuration

resolver #1
  search domain[0] : corp.example
  nameserver[0] : 10.8.0.1
  if_index : 17 (utun4)
  flags    : Supplemental, Request A records
  reach    : 0x00000003 (Reachable,Transient Connection)
  order    : 102400

resolver #2
  domain   : pigsty.test
  nameserver[0] : 10.8.0.1
  if_index : 17 (utun4)
  flags    : 0x00004002 (Supplemental, Request A records)
  reach    : 0x00000003 (Reachable,Transient Connection)
  order    : 102402

resolver #3
  domain   : pigsty.test
  nameserver[0] : 127.0.0.1
  port     : 5354
  flags    : 0x00000006 (Request A records, Request AAAA records)
  reach    : 0x00030002 (Reachable,Local Address,Directly Reachable Address)

DNS configuration (for scoped queries)

resolver #1
  domain   : pigsty.test
  nameserver[0] : 10.8.0.1
  if_index : 17 (utun4)
  flags    : 0x00001002 (Scoped, Request A records)
  reach    : 0x00000003 (Reachable,Transient Connection)

generation = 4711
";

#[test]
fn a_vpn_supplemental_and_scoped_resolver() {
    let rs = parse(VPN);
    assert_eq!(rs.len(), 4);
    assert_eq!(rs[1].flags, ["Supplemental", "Request A records"]);
    assert_eq!(rs[1].if_index.as_deref(), Some("17 (utun4)"));
    assert_eq!(rs[3].section, Section::Scoped);
    assert_eq!(rs[3].flags, ["Scoped", "Request A records"]);
    assert!(
        rs[3].describe().contains("(for scoped queries)"),
        "{}",
        rs[3].describe()
    );
    // The route itself is there; the VPN's two blocks are what `claimants` reports.
    assert!(route_block(&rs, "pigsty.test", server("127.0.0.1:5354")).is_ok());
    let others: Vec<&Resolver> = rs
        .iter()
        .filter(|r| r.serves("pigsty.test") && !r.is_route("pigsty.test", server("127.0.0.1:5354")))
        .collect();
    assert_eq!(others.len(), 2);
}

/// The route's block without `Request A records` (offline or IPv6-only, a file without `flags a`):
/// configd lists it, but getaddrinfo's A question never reaches the daemon.
#[test]
fn the_route_block_must_request_a_records() {
    let offline = "DNS configuration

resolver #1
  domain   : pigsty.test
  nameserver[0] : 127.0.0.1
  port     : 5354
  flags    : 
  reach    : 0x00030002 (Reachable,Local Address,Directly Reachable Address)

resolver #2
  domain   : other.test
  nameserver[0] : 127.0.0.1
  port     : 5354
  flags    : 0x00000004 (Request AAAA records)
  reach    : 0x00030002 (Reachable,Local Address,Directly Reachable Address)
";
    let rs = parse(offline);
    assert!(rs[0].flags.is_empty() && !rs[0].requests_a());
    assert_eq!(rs[1].flags, ["Request AAAA records"]);
    for zone in ["pigsty.test", "other.test"] {
        let e = route_block(&rs, zone, server("127.0.0.1:5354")).unwrap_err();
        assert!(
            e.contains("without `Request A records`") && e.contains("`flags a` line"),
            "{e}"
        );
    }
}

/// A domain configd read from a CRLF file keeps its `\r` in `scutil --dns`: another name.
#[test]
fn a_carriage_return_stays_in_the_domain() {
    let rs = parse(
        "DNS configuration\n\nresolver #1\n  domain   : pigsty.test\r\n  nameserver[0] : 10.1.2.3\n",
    );
    assert_eq!(rs[0].domain.as_deref(), Some("pigsty.test\r"));
    assert!(!rs[0].serves("pigsty.test") && !within("pigsty.test\r", "pigsty.test"));
    assert!(within("db.PIGSTY.test.", "pigsty.test") && !within("xpigsty.test", "pigsty.test"));
}

/// With `-d` the hex is configd's value: the names come from it, and agree with the printed ones.
#[test]
fn debug_flags_are_read_from_their_hex() {
    assert_eq!(
        parse_flags("0x00001002 (Scoped, Request A records)"),
        ["Scoped", "Request A records"]
    );
    assert_eq!(
        parse_flags("0x00004006 (Supplemental, Request A records, Request AAAA records)"),
        ["Supplemental", "Request A records", "Request AAAA records"]
    );
    assert_eq!(parse_flags("0x00000000"), Vec::<String>::new());
    assert_eq!(
        parse_flags("0x00010002 (Request A records, 0x00010000)"),
        ["Request A records", "0x00010000"]
    );
    // Every fixture with a hex value prints the names of exactly its bits.
    for line in [WIFI_WITH_ROUTE, VPN]
        .iter()
        .flat_map(|t| t.lines())
        .filter_map(|l| l.trim().strip_prefix("flags    : 0x"))
    {
        let (_, names) = line.split_once(" (").unwrap();
        let printed: Vec<&str> = names.trim_end_matches(')').split(", ").collect();
        assert_eq!(parse_flags(&format!("0x{line}")), printed, "{line}");
    }
}

/// `/etc/resolver/pigsty.test` with `port 5353` (the old default): configd lists it, mDNSResponder
/// hands it to its multicast path and never sends it a unicast query.
#[test]
fn a_port_5353_entry_is_listed_but_not_unicast() {
    let old = "DNS configuration

resolver #1
  nameserver[0] : 192.168.1.1
  flags    : Request A records
  reach    : 0x00020002 (Reachable,Directly Reachable Address)

resolver #2
  domain   : pigsty.test
  nameserver[0] : 127.0.0.1
  port     : 5353
  flags    : Request A records, Request AAAA records
  reach    : 0x00030002 (Reachable,Local Address,Directly Reachable Address)
";
    let rs = parse(old);
    assert!(!rs[1].is_unicast());
    assert!(rs[0].is_unicast());
    assert!(route_block(&rs, "pigsty.test", server("127.0.0.1:5353")).is_ok());
    let e = route_block(&rs, "pigsty.test", server("127.0.0.1:5354")).unwrap_err();
    assert!(e.contains("port 5353"), "{e}");
}

#[test]
fn resolver_files_are_read_as_configd_reads_them() {
    let d = tempfile::tempdir().unwrap();
    let w = |n: &str, t: &str| std::fs::write(d.path().join(n), t).unwrap();
    w(
        "pigsty.test",
        &files::wrap(
            "macos-resolver",
            None,
            "domain pigsty.test\nnameserver 127.0.0.1\nport 5354\n",
        ),
    );
    w(
        "corp",
        "# split DNS\nDOMAIN pigsty.test.\nnameserver 10.1.2.3\nnameserver 10.1.2.4\n",
    );
    w(".hidden", "nameserver 10.9.9.9\n");
    w("empty", "# nothing configd knows\nfoo bar\n");
    std::fs::create_dir(d.path().join("sub")).unwrap();
    let mut fs = read_dir(d.path());
    fs.sort_by(|a, b| a.name.cmp(&b.name));
    let names: Vec<&str> = fs.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, [".hidden", "corp", "pigsty.test"]);
    assert_eq!(
        (fs[0].domain.as_deref(), fs[0].domain_line),
        (Some(".hidden"), false)
    );
    assert_eq!(
        (fs[1].domain.as_deref(), fs[1].domain_line),
        (Some("pigsty.test"), true)
    );
    assert_eq!(
        fs[1].nameservers,
        [
            "10.1.2.3".parse::<IpAddr>().unwrap(),
            "10.1.2.4".parse().unwrap()
        ]
    );
    assert!(fs[2].ours && !fs[1].ours);
    assert_eq!(fs[2].port, Some(5354));
}
