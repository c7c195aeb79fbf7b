use super::*;
use crate::route::hosts::file::{HostsErrorKind, parse};
use crate::zone::view::fixtures::reverse::generation_from;

/// meta at .10 (alias pg-meta), node-1 at .11: PTRs .10 → meta, .11 → node-1.
const YAML: &str = "all:
  children:
    meta:
      hosts:
        10.10.10.10: { nodename: meta, vm_alias: [pg-meta] }
        10.10.10.11: { nodename: node-1 }
";

const HOSTS: &str = "127.0.0.1 localhost
# pigsty dns records
10.10.10.10 meta pigsty c.pigsty g.pigsty
10.10.10.2  pg-meta  # sandbox vip for pg-meta
10.10.10.11 node-1   # sandbox node node-1

# barn:begin
10.10.10.10\tmeta.pigsty.test pg-meta.pigsty.test
10.10.10.12\tGHOST.Pigsty.Test.
# barn:end
10.10.10.11 node-1.pigsty.test
192.168.0.9 meta.pigsty.test.evil.com pigsty.test.x x.pigsty xpigsty.test
2001:db8::10 Meta.pigsty.test
::ffff:10.10.10.11 node-1.pigsty.test
";

const PATH: &str = "/etc/hosts";

fn gen_() -> Generation {
    generation_from(YAML, 3)
}

fn first() -> NssSummary {
    NssSummary {
        line: Some(12),
        text: "hosts: files dns".into(),
        files_order: FilesOrder::FilesFirst,
        resolved_reads_hosts: false,
    }
}

fn run(order: FilesOrder, zone: &dyn ZoneAnswers) -> Vec<Finding> {
    let nss = NssSummary {
        files_order: order,
        ..first()
    };
    findings(&parse(HOSTS.as_bytes()).unwrap(), PATH, &nss, zone)
}

fn shape(f: &[Finding]) -> Vec<(usize, FindingKind, &str, bool, bool)> {
    f.iter()
        .map(|f| (f.line, f.kind, f.hosts_name.as_str(), f.same, f.failure))
        .collect()
}

#[test]
fn the_generation_answers_names_ptrs_and_its_24() {
    let g = gen_();
    assert_eq!(g.zone(), "pigsty.test");
    assert_eq!(
        g.address_of("pg-meta.pigsty.test"),
        Some(Ipv4Addr::new(10, 10, 10, 10))
    );
    assert_eq!(g.address_of("ghost.pigsty.test"), None);
    assert_eq!(g.address_of("pigsty.test"), None);
    assert_eq!(g.reverse_net(), Some([10, 10, 10]));
    assert_eq!(
        g.ptr_of(Ipv4Addr::new(10, 10, 10, 11)),
        Some("node-1.pigsty.test")
    );
    assert_eq!(
        g.ptr_of(Ipv4Addr::new(10, 10, 10, 10)),
        Some("meta.pigsty.test")
    );
    assert_eq!(g.ptr_of(Ipv4Addr::new(10, 10, 10, 2)), None);
}

#[test]
fn every_kind_of_finding_with_its_line_class_and_verdict() {
    use FindingKind::*;
    let f = run(FilesOrder::FilesFirst, &gen_());
    assert_eq!(
        shape(&f),
        vec![
            // meta on .10 agrees with the zone; the reverse answer "meta" is not the PTR's name.
            (3, ShadowedReverse, "meta", false, true),
            (4, ShortNameDisagrees, "pg-meta", false, true),
            (4, ShadowedReverse, "pg-meta", false, true),
            (5, ShadowedReverse, "node-1", false, true),
            (8, ShadowedName, "meta.pigsty.test", true, false),
            (8, ShadowedName, "pg-meta.pigsty.test", true, false),
            (8, ShadowedReverse, "meta.pigsty.test", true, false),
            (9, ShadowedName, "GHOST.Pigsty.Test.", false, true),
            (9, ShadowedReverse, "GHOST.Pigsty.Test.", false, true),
            (11, ShadowedName, "node-1.pigsty.test", true, false),
            (11, ShadowedReverse, "node-1.pigsty.test", true, false),
            // Line 12: no suffix match (`.pigsty`, `pigsty.test.x`), outside the /24: nothing.
            (13, ShadowedName, "Meta.pigsty.test", false, true),
            (14, ShadowedName, "node-1.pigsty.test", true, false),
            (14, ShadowedReverse, "node-1.pigsty.test", true, false),
        ]
    );
}

#[test]
fn each_finding_carries_the_zones_answer_its_reason_and_the_next_step_for_its_class() {
    use FindingKind::*;
    let f = run(FilesOrder::FilesFirst, &gen_());
    let by = |line, kind| f.iter().find(|x| x.line == line && x.kind == kind).unwrap();
    let short = by(4, ShortNameDisagrees);
    assert_eq!(short.class, LineClass::Pigsty);
    assert_eq!(short.zone_name, "pg-meta.pigsty.test");
    assert_eq!(short.zone_answer.as_deref(), Some("10.10.10.10"));
    assert!(short.reason.contains("two addresses"), "{}", short.reason);
    assert_eq!(
        short.next,
        "delete line 4 of /etc/hosts by hand: 10.10.10.2  pg-meta  # sandbox vip for pg-meta"
    );
    let ghost = by(9, ShadowedName);
    assert_eq!(ghost.class, LineClass::Barn);
    assert_eq!(ghost.zone_name, "ghost.pigsty.test");
    assert_eq!(ghost.zone_answer, None);
    assert!(!ghost.reason.contains("ReadEtcHosts"));
    assert!(ghost.reason.contains("NXDOMAIN"), "{}", ghost.reason);
    assert_eq!(
        ghost.next,
        "run `barn hosts uninstall` (it removes Barn's block, lines 7-10), or re-sync Barn without GHOST.Pigsty.Test."
    );
    let rev = by(5, ShadowedReverse);
    assert_eq!(rev.zone_name, "11.10.10.10.in-addr.arpa");
    assert_eq!(rev.zone_answer.as_deref(), Some("node-1.pigsty.test"));
    assert!(
        rev.reason.contains("not the zone's PTR node-1.pigsty.test"),
        "{}",
        rev.reason
    );
    let no_ptr = by(9, ShadowedReverse);
    assert!(
        no_ptr.reason.contains("no PTR for 10.10.10.12"),
        "{}",
        no_ptr.reason
    );
    assert!(
        no_ptr.next.contains("without the 10.10.10.12 entry"),
        "{}",
        no_ptr.next
    );
    let same = by(8, ShadowedName);
    assert!(
        same.reason.contains("keeps answering after the route"),
        "{}",
        same.reason
    );
    assert!(same.shadows && !same.failure);
    let six = by(13, ShadowedName);
    assert_eq!(six.hosts_address.to_string(), "2001:db8::10");
    assert!(
        six.reason.contains("which serves 10.10.10.10"),
        "{}",
        six.reason
    );
    assert_eq!(by(11, ShadowedName).class, LineClass::Other);
    assert_eq!(
        by(11, ShadowedName).next,
        "delete line 11 of /etc/hosts by hand: 10.10.10.11 node-1.pigsty.test"
    );
}

#[test]
fn with_files_after_resolve_nothing_is_a_shadow_and_the_finding_says_why() {
    let f = run(FilesOrder::AfterUnavailable, &gen_());
    assert_eq!(f.len(), 14);
    for x in &f {
        assert!(!x.shadows && !x.failure, "{x:?}");
        assert!(
            x.reason.starts_with("not a shadow: files comes after"),
            "{}",
            x.reason
        );
        assert!(x.reason.contains("hosts: files dns"), "{}", x.reason);
    }
}

#[test]
fn with_files_after_resolve_resolveds_own_hosts_reading_still_shadows() {
    let nss = NssSummary {
        files_order: FilesOrder::AfterUnavailable,
        resolved_reads_hosts: true,
        ..first()
    };
    let f = findings(&parse(HOSTS.as_bytes()).unwrap(), PATH, &nss, &gen_());
    let first_order = run(FilesOrder::FilesFirst, &gen_());
    let verdicts = |f: &[Finding]| {
        f.iter()
            .map(|x| (x.line, x.kind, x.failure))
            .collect::<Vec<_>>()
    };
    assert_eq!(verdicts(&f), verdicts(&first_order));
    for x in f.iter().filter(|x| x.failure) {
        assert!(x.reason.contains("ReadEtcHosts=yes"), "{}", x.reason);
    }
}

#[test]
fn files_after_a_notfound_still_shadows_what_the_zone_does_not_serve() {
    let f = run(FilesOrder::AfterNotFound, &gen_());
    let failing: Vec<_> = f
        .iter()
        .filter(|x| x.failure)
        .map(|x| (x.line, x.kind))
        .collect();
    assert_eq!(
        failing,
        [
            (4, FindingKind::ShortNameDisagrees),
            (4, FindingKind::ShadowedReverse),
            (9, FindingKind::ShadowedName),
            (9, FindingKind::ShadowedReverse),
        ]
    );
}

#[test]
fn before_the_first_load_every_zone_name_is_a_failure_and_no_address_is_managed() {
    let f = run(FilesOrder::FilesFirst, &EmptyZone("pigsty.test".into()));
    assert!(
        f.iter()
            .all(|x| x.kind == FindingKind::ShadowedName && x.failure)
    );
    assert_eq!(f.len(), 6, "{f:#?}");
}

fn sorted(keys: &[&str]) -> Vec<String> {
    let mut k: Vec<String> = keys.iter().map(|s| s.to_string()).collect();
    k.sort();
    k
}

#[test]
fn the_summary_is_stable_json_with_each_next_step_once() {
    let hosts = crate::route::hosts::file::parse(HOSTS.as_bytes()).map(Some);
    let s = summary(PATH, &hosts, &first(), &gen_());
    assert_eq!(
        (s.state, s.lines, s.skipped, s.failures),
        ("read", 10, 0, 7)
    );
    assert_eq!(s.next.len(), 1 + 6, "{:#?}", s.next);
    assert!(s.next[0].starts_with("run `barn hosts uninstall`"));
    assert!(s.next[1].starts_with("delete line 3 of /etc/hosts"));
    let v = serde_json::to_value(&s).unwrap();
    let mut keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    assert_eq!(
        keys,
        sorted(&[
            "file",
            "state",
            "error",
            "barn_block",
            "lines",
            "skipped",
            "nss",
            "findings",
            "failures",
            "next"
        ])
    );
    assert_eq!(v["barn_block"], serde_json::json!({"begin": 7, "end": 10}));
    assert_eq!(
        v["nss"],
        serde_json::json!({"line": 12, "text": "hosts: files dns", "files_order": "files_first", "resolved_reads_hosts": false})
    );
    let f = &v["findings"][1];
    let mut keys: Vec<_> = f.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    assert_eq!(
        keys,
        sorted(&[
            "kind",
            "line",
            "class",
            "text",
            "hosts_address",
            "hosts_name",
            "zone_name",
            "zone_answer",
            "same",
            "shadows",
            "failure",
            "reason",
            "next"
        ])
    );
    assert_eq!(f["kind"], "short_name_disagrees");
    assert_eq!(f["class"], "pigsty");
    assert_eq!(f["hosts_address"], "10.10.10.2");

    let missing = summary(PATH, &Ok(None), &first(), &gen_());
    assert_eq!((missing.state, missing.failures), ("missing", 0));
    let broken = parse(b"# barn:begin\n").map(Some);
    let s = summary(PATH, &broken, &first(), &gen_());
    assert_eq!(s.state, "error");
    let v = serde_json::to_value(&s).unwrap();
    assert_eq!(v["error"]["kind"], "unterminated");
    assert_eq!(v["error"]["line"], 1);
    assert_eq!(s.error.map(|e| e.kind), Some(HostsErrorKind::Unterminated));
}

#[test]
fn nss_summaries_come_from_the_line_or_the_platform() {
    let nss = NssHosts::parse("hosts: mymachines resolve [!UNAVAIL=return] files myhostname dns\n")
        .unwrap();
    let s = NssSummary::from_nss(&nss, "pigsty.test", true);
    assert!(s.resolved_reads_hosts);
    assert_eq!(
        (s.line, s.files_order),
        (Some(1), FilesOrder::AfterUnavailable)
    );
    assert_eq!(NssSummary::macos().files_order, FilesOrder::FilesFirst);
}

/// What a daemon of several zones answers (issue 37): `pigsty.test` first, then `pigsty`.
struct Served {
    zones: Vec<&'static str>,
    records: Vec<Record>,
    ptr: Vec<Ptr>,
}

impl ZoneAnswers for Served {
    fn zone(&self) -> &str {
        self.zones[0]
    }
    fn zones(&self) -> Vec<&str> {
        self.zones.clone()
    }
    fn records(&self) -> &[Record] {
        &self.records
    }
    fn ptrs(&self) -> &[Ptr] {
        &self.ptr
    }
}

/// Pigsty's stock meta node as both zones serve it: its portal names under `.pigsty`.
fn pigsty_served(zones: Vec<&'static str>) -> Served {
    let ten = Ipv4Addr::new(10, 10, 10, 10);
    let mut records: Vec<Record> = [
        "adm.pigsty",
        "api.pigsty",
        "i.pigsty",
        "meta.pigsty.test",
        "sss.pigsty",
    ]
    .iter()
    .map(|n| Record {
        name: n.to_string(),
        address: ten,
        sources: vec![],
    })
    .collect();
    records.sort_by(|a, b| a.name.cmp(&b.name));
    Served {
        zones,
        records,
        ptr: vec![Ptr {
            address: ten,
            name: "meta.pigsty.test.".into(),
        }],
    }
}

/// Hosts mode as Pigsty and Barn leave it: the old section, the node role's `# pigsty dns` line
/// (node_etc_hosts), a hand copy of it, Barn's block with the portal names, a stale line.
const PIGSTY_HOSTS: &str = "127.0.0.1 localhost
# pigsty dns records
10.10.10.10 meta pigsty c.pigsty

10.10.10.10 i.pigsty sss.pigsty # pigsty dns
10.10.10.10 i.pigsty sss.pigsty
# barn:begin
10.10.10.10\ti.pigsty adm.pigsty
# barn:end
10.10.10.9 api.pigsty
";

fn names_found(zone: &dyn ZoneAnswers) -> Vec<(usize, LineClass, String, bool, bool)> {
    findings(
        &parse(PIGSTY_HOSTS.as_bytes()).unwrap(),
        PATH,
        &first(),
        zone,
    )
    .into_iter()
    .filter(|f| f.kind == FindingKind::ShadowedName)
    .map(|f| (f.line, f.class, f.zone_name, f.same, f.failure))
    .collect()
}

#[test]
fn the_pigsty_lines_that_shadow_served_names_are_findings_once_pigsty_is_served() {
    let both = pigsty_served(vec!["pigsty.test", "pigsty"]);
    let f = |l, c, n: &str, same, failure| (l, c, n.to_string(), same, failure);
    use LineClass::{Barn, Other, Pigsty};
    assert_eq!(
        names_found(&both),
        vec![
            // The old section: `pigsty` is the apex of the zone pigsty now (a lookup of it reaches
            // the zone, which has no address there), `c.pigsty` a name the zone does not serve.
            f(3, Pigsty, "pigsty", false, true),
            f(3, Pigsty, "c.pigsty", false, true),
            // The node role's line, and a copy without its mark: each by its class.
            f(5, Pigsty, "i.pigsty", true, false),
            f(5, Pigsty, "sss.pigsty", true, false),
            f(6, Other, "i.pigsty", true, false),
            f(6, Other, "sss.pigsty", true, false),
            f(8, Barn, "i.pigsty", true, false),
            f(8, Barn, "adm.pigsty", true, false),
            // A stale address: the name never comes from pigsty-dns while the line is there.
            f(10, Other, "api.pigsty", false, true),
        ]
    );
    let found = findings(
        &parse(PIGSTY_HOSTS.as_bytes()).unwrap(),
        PATH,
        &first(),
        &both,
    );
    let api = found.iter().find(|f| f.zone_name == "api.pigsty").unwrap();
    assert_eq!(
        api.reason,
        "the hosts file answers api.pigsty with 10.10.10.9 before the zone, which serves 10.10.10.10: this name never comes from pigsty-dns"
    );
    assert_eq!(
        api.next,
        "delete line 10 of /etc/hosts by hand: 10.10.10.9 api.pigsty"
    );
    let barn = found.iter().find(|f| f.zone_name == "adm.pigsty").unwrap();
    assert!(
        barn.next.starts_with("run `barn hosts uninstall`"),
        "{}",
        barn.next
    );
    // Serving pigsty.test alone, no `.pigsty` line is a finding: never by its suffix.
    assert_eq!(names_found(&pigsty_served(vec!["pigsty.test"])), vec![]);
}
