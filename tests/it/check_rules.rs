//! Every input rule, each with a positive and a negative case, through `pigsty-dns check` on real files.

use crate::util::*;

#[test]
fn samples_are_valid_and_serve_their_names() {
    let meta = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/zones/pigsty.test.yml"
    ))
    .unwrap();
    assert_eq!(
        served(&meta),
        pairs(&[
            ("adm.pigsty", "10.10.10.10"),
            ("i.pigsty", "10.10.10.10"),
            ("meta.pigsty.test", "10.10.10.10"),
            ("pg-meta-1.pigsty.test", "10.10.10.10"),
            ("pg-meta.pigsty.test", "10.10.10.10"),
            ("sss.pigsty", "10.10.10.10"),
        ])
    );
    let ha = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/zones/ha.yml")).unwrap();
    let names = served(&ha);
    // 7 in pigsty.test and 6 of Pigsty's own in pigsty (i, sss, adm, …).
    assert_eq!(names.len(), 13, "{names:?}");
    assert!(names.contains(&("pg-meta-3.pigsty.test".into(), "10.10.10.12".into())));
}

#[test]
fn outside_zone_names_are_listed_not_dropped() {
    let r = check_text(
        "all:\n  hosts: {10.10.10.10: {nodename: meta}}\n  vars:\n    vm_hosts: [{address: 10.10.10.10, names: [www.pigsty.cc, a.pigsty.test]}]\n",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("not served (1):"), "{}", r.stdout);
    assert!(
        r.stdout.contains("www.pigsty.cc") && r.stdout.contains("outside the served zones"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("a.pigsty.test"),
        "served as is: {}",
        r.stdout
    );
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "h.yml",
        "all:\n  hosts: {10.10.10.10: {nodename: meta}}\n  vars: {vm_hosts: [{address: 10.10.10.10, names: [www.pigsty.cc]}]}\n",
    );
    let r = run(&["check", "--json", p.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["not_served"][0]["name"], "www.pigsty.cc");
    assert_eq!(v["not_served"][0]["reason"], "outside the served zones");
    assert_eq!(
        v["not_served"][0]["sources"][0],
        "all.vars.vm_hosts[0].names[0]"
    );
    // With --zone pigsty.cc, the same name is served.
    let r = run(&[
        "check",
        "--json",
        "--zone",
        "pigsty.cc",
        p.to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["served"][0]["name"], "meta.pigsty.cc", "{v}");
    assert_eq!(v["served"][1]["name"], "www.pigsty.cc", "{v}");
}

#[test]
fn node_name_order_nodename_then_pg_then_octet() {
    let text = "all:\n  children:\n    pg-meta:\n      vars: {pg_cluster: pg-meta}\n      hosts:\n        10.10.10.10: {pg_seq: 1, nodename: meta}\n        10.10.10.11: {pg_seq: 2}\n        10.10.10.12: {}\n        10.10.10.13: {nodename: ''}\n";
    // .12 has pg_cluster but no pg_seq: falls back to node-12. An empty nodename does not count.
    let text = text.replace(
        "10.10.10.13: {nodename: ''}",
        "10.10.10.13: {nodename: '', pg_seq: 3}",
    );
    assert_eq!(
        served(&text),
        pairs(&[
            ("meta.pigsty.test", "10.10.10.10"),
            ("node-12.pigsty.test", "10.10.10.12"),
            ("pg-meta-2.pigsty.test", "10.10.10.11"),
            ("pg-meta-3.pigsty.test", "10.10.10.13"),
        ])
    );
}

#[test]
fn pg_seq_must_be_an_integer() {
    refused(
        "all:\n  hosts: {10.10.10.10: {pg_cluster: pg-meta, pg_seq: '1'}}\n",
        &["all.hosts[10.10.10.10].pg_seq", "\"1\"", "unquoted integer"],
    );
    // A number that is not an integer is quoted as written: `1e0` shown as `1.0` or `1` read as if
    // another value were refused (issue 24, defect 6).
    for written in [
        "1.0", "1e0", "1.5", ".5", "1E+0", "+1.0", "-0.0", ".inf", ".NaN",
    ] {
        let r = refused(
            &format!(
                "all:\n  hosts: {{10.10.10.10: {{pg_cluster: pg-meta, pg_seq: {written}}}}}\n"
            ),
            &["pg_seq", "not an integer"],
        );
        let line = r.error_line();
        assert!(
            line.contains(&format!("is the number {written}, not an integer")),
            "{written}: {line}"
        );
    }
    // An integer out of range, as written; a long one cut like every quoted value.
    refused(
        "all:\n  hosts: {10.10.10.10: {pg_cluster: pg-meta, pg_seq: 0x80000000}}\n",
        &["pg_seq: is 0x80000000; pg_seq is an unquoted integer"],
    );
    let long = format!("1{}.0", "0".repeat(300));
    let r = refused(
        &format!("all:\n  hosts: {{10.10.10.10: {{pg_cluster: pg-meta, pg_seq: {long}}}}}\n"),
        &["pg_seq", "not an integer"],
    );
    let shown = format!(
        "is the number 1{}…(303 bytes), not an integer",
        "0".repeat(79)
    );
    assert!(r.error_line().contains(&shown), "{}", r.error_line());
    let r = refused(
        "all:\n  hosts: {10.10.10.10: {pg_cluster: pg-meta, pg_seq: 2147483648}}\n",
        &["pg_seq"],
    );
    assert!(
        r.stderr.contains("next: set nodename explicitly"),
        "{}",
        r.stderr
    );
    assert_eq!(
        served("all:\n  hosts: {10.10.10.10: {pg_cluster: pg-meta, pg_seq: 2147483647}}\n")[0].0,
        "pg-meta-2147483647.pigsty.test"
    );
}

#[test]
fn node_names_are_lowercase_single_labels_and_unique() {
    refused(
        "all:\n  hosts: {10.10.10.10: {nodename: Meta}}\n",
        &["all.hosts[10.10.10.10].nodename", "\"Meta\"", "upper case"],
    );
    refused(
        "all:\n  hosts: {10.10.10.10: {nodename: pigsty.cc}}\n",
        &["\"pigsty.cc\"", "single label"],
    );
    refused(
        "all:\n  hosts: {10.10.10.10: {nodename: 5}}\n",
        &["nodename", "is a string"],
    );
    refused(
        "all:\n  hosts: {10.10.10.10: {nodename: meta}, 10.10.10.11: {nodename: meta}}\n",
        &[
            "all.hosts[10.10.10.11].nodename",
            "\"meta\"",
            "all.hosts[10.10.10.10].nodename",
        ],
    );
}

#[test]
fn groups_merge_hosts_by_address_and_deeper_layer_wins() {
    let text = "all:\n  vars: {nodename: from-all}\n  children:\n    pg-meta:\n      vars: {nodename: from-group}\n      hosts: {10.10.10.10: {nodename: meta}, 10.10.10.11: }\n    infra:\n      hosts: {10.10.10.10: {vm_alias: [infra-1]}}\n    etcd:\n      hosts: {10.10.10.10: }\n";
    // The group value beats all.vars; equal-depth agreement (two host layers of .10) is fine.
    let s = served(text);
    assert!(
        s.contains(&("meta.pigsty.test".into(), "10.10.10.10".into())),
        "{s:?}"
    );
    assert!(
        s.contains(&("infra-1.pigsty.test".into(), "10.10.10.10".into())),
        "{s:?}"
    );
    assert!(
        s.contains(&("from-group.pigsty.test".into(), "10.10.10.11".into())),
        "{s:?}"
    );
    // Besides these three, the infra group's stock `.pigsty` records (zone pigsty).
    let in_test = s.iter().filter(|(n, _)| n.ends_with(".pigsty.test"));
    assert_eq!(in_test.count(), 3, "{s:?}");
}

#[test]
fn equal_depth_disagreement_is_an_error() {
    let text = "all:\n  children:\n    a:\n      vars: {nodename: one}\n      hosts: {10.10.10.10: }\n    b:\n      vars: {nodename: two}\n      hosts: {10.10.10.10: }\n";
    let r = refused(
        text,
        &[
            "inherits conflicting values for nodename",
            "all.children.a.vars.nodename",
            "all.children.b.vars.nodename",
        ],
    );
    assert!(
        r.stderr.contains("next: set nodename at host level"),
        "{}",
        r.stderr
    );
    // Same value at the same depth is fine.
    assert_eq!(
        served(&text.replace("nodename: two", "nodename: one")).len(),
        1
    );
    // And a host-level value resolves it.
    assert_eq!(
        served(&text.replace(
            "a:\n      vars: {nodename: one}\n      hosts: {10.10.10.10: }",
            "a:\n      vars: {nodename: one}\n      hosts: {10.10.10.10: {nodename: own}}"
        ))[0]
            .0,
        "own.pigsty.test"
    );
}

#[test]
fn host_keys_must_be_canonical_ipv4() {
    refused(
        "all:\n  hosts: {meta: {}}\n",
        &["all.hosts", "\"meta\"", "not an IPv4"],
    );
    refused(
        "all:\n  hosts: {10.10.10.010: {}}\n",
        &["\"10.10.10.010\"", "leading zero", "10.10.10.10"],
    );
    refused(
        "all:\n  hosts: {10.10.10.10/24: {}}\n",
        &["\"10.10.10.10/24\"", "CIDR", "bare address 10.10.10.10"],
    );
    refused("all:\n  hosts: {'::1': {}}\n", &["\"::1\"", "IPv6"]);
}

#[test]
fn addresses_share_one_private_slash24_in_the_static_pool() {
    refused(
        "all:\n  hosts: {10.10.10.10: {}, 10.10.11.10: {}}\n",
        &["10.10.11.10", "outside 10.10.10.0/24", "one /24"],
    );
    refused("all:\n  hosts: {8.8.8.10: {}}\n", &["8.8.8.10", "RFC 1918"]);
    refused(
        "all:\n  hosts: {10.10.10.8: {}}\n",
        &["10.10.10.8", ".9-.254"],
    );
    refused(
        "all:\n  hosts: {10.10.10.255: {}}\n",
        &["10.10.10.255", ".9-.254"],
    );
    assert_eq!(
        served("all:\n  hosts: {192.168.5.9: {}, 192.168.5.254: {}}\n").len(),
        2
    );
    assert_eq!(
        served("all:\n  hosts: {172.31.1.9: {}}\n")[0].0,
        "node-9.pigsty.test"
    );
}

#[test]
fn vm_hosts_entries_are_exactly_address_and_names() {
    let ok = "all:\n  hosts: {10.10.10.10: {nodename: meta}}\n  vars:\n    vm_hosts:\n      - {address: 10.10.10.10, names: [pg-meta]}\n      - {address: 10.10.10.9, names: [sss]}\n";
    assert_eq!(
        served(ok),
        pairs(&[
            ("meta.pigsty.test", "10.10.10.10"),
            ("pg-meta.pigsty.test", "10.10.10.10"),
            ("sss.pigsty.test", "10.10.10.9")
        ])
    );
    let base = "all:\n  hosts: {10.10.10.10: {nodename: meta}}\n  vars:\n    vm_hosts:\n      - {address: 10.10.10.10, names: [pg-meta]}\n      - {address: 10.10.10.9, names: [sss]}\n";
    refused(
        &format!("{base}      - {{address: 10.10.10.100/24, names: [x]}}\n"),
        &[
            "all.vars.vm_hosts[2].address",
            "\"10.10.10.100/24\" is a CIDR; give the bare address 10.10.10.100",
        ],
    );
    refused(
        &format!("{base}      - {{address: 10.10.10.11, names: [x], comment: hi}}\n"),
        &["all.vars.vm_hosts[2]", "unknown key \"comment\""],
    );
    refused(
        &format!("{base}      - {{address: 10.10.10.11}}\n"),
        &["all.vars.vm_hosts[2]", "no names"],
    );
    refused(
        &format!("{base}      - {{address: 10.10.10.11, names: []}}\n"),
        &["all.vars.vm_hosts[2].names", "empty"],
    );
    refused(
        &format!("{base}      - {{names: [x]}}\n"),
        &["all.vars.vm_hosts[2]", "no address"],
    );
    refused(
        &format!("{base}      - {{address: 10.10.10.3, names: [x]}}\n"),
        &["all.vars.vm_hosts[2].address", "10.10.10.3", ".9-.254"],
    );
    refused(
        &format!("{base}      - {{address: 10.10.10.10, names: [x]}}\n"),
        &[
            "all.vars.vm_hosts[2].address",
            "listed again",
            "vm_hosts[0]",
        ],
    );
    refused(
        &format!("{base}      - {{address: 10.10.10.11, names: [x, X]}}\n"),
        &["all.vars.vm_hosts[2].names[1]", "repeats"],
    );
    refused(
        "all:\n  hosts: {10.10.10.10: {}}\n  vars: {vm_hosts: {address: 10.10.10.10}}\n",
        &["all.vars.vm_hosts", "a list"],
    );
}

#[test]
fn vm_hosts_only_in_all_vars() {
    refused(
        "all:\n  children:\n    g:\n      vars: {vm_hosts: []}\n      hosts: {10.10.10.10: {}}\n",
        &["all.children.g.vars.vm_hosts", "only from all.vars"],
    );
    refused(
        "all:\n  hosts: {10.10.10.10: {vm_hosts: []}}\n",
        &["all.hosts[10.10.10.10].vm_hosts", "only from all.vars"],
    );
}

#[test]
fn vm_hosts_names_fold_case() {
    let s = served(
        "all:\n  hosts: {10.10.10.10: {nodename: meta}}\n  vars: {vm_hosts: [{address: 10.10.10.10, names: [PG-Meta, META]}]}\n",
    );
    assert_eq!(
        s,
        pairs(&[
            ("meta.pigsty.test", "10.10.10.10"),
            ("pg-meta.pigsty.test", "10.10.10.10")
        ])
    );
}

#[test]
fn bad_names_are_refused_with_value_and_place() {
    let host = "all:\n  hosts: {10.10.10.10: {nodename: meta}}\n  vars: {vm_hosts: [{address: 10.10.10.10, names: [NAME]}]}\n";
    for (name, why) in [
        ("'meta.'", "trailing dot"),
        ("'*.pigsty.test'", "wildcard"),
        ("_pg", "\"_\""),
        ("bücher", "non-ASCII"),
        ("'a..b'", "empty label"),
        ("-a", "starts or ends"),
    ] {
        refused(
            &host.replace("NAME", name),
            &["all.vars.vm_hosts[0].names[0]", why],
        );
    }
    let long = "a".repeat(64);
    refused(&host.replace("NAME", &long), &[&long, "at most 63"]);
    let long_name = vec!["a".repeat(60); 5].join(".");
    refused(&host.replace("NAME", &long_name), &["at most 253"]);
}

#[test]
fn aliases_serve_and_conflicts_name_both_sources() {
    let s = served(
        "all:\n  hosts: {10.10.10.10: {nodename: meta, vm_alias: [pg-meta, meta, x.pigsty.test]}}\n",
    );
    assert_eq!(
        s,
        pairs(&[
            ("meta.pigsty.test", "10.10.10.10"),
            ("pg-meta.pigsty.test", "10.10.10.10"),
            ("x.pigsty.test", "10.10.10.10")
        ])
    );
    refused(
        "all:\n  hosts:\n    10.10.10.10: {nodename: meta}\n    10.10.10.11: {nodename: other, vm_alias: [meta]}\n",
        &[
            "\"meta.pigsty.test\" maps to both 10.10.10.10 (all.hosts[10.10.10.10].nodename) and 10.10.10.11 (all.hosts[10.10.10.11].vm_alias[0])",
        ],
    );
    // meta and meta.pigsty.test are the same served name.
    refused(
        "all:\n  hosts: {10.10.10.10: {nodename: meta}}\n  vars: {vm_hosts: [{address: 10.10.10.11, names: [meta.pigsty.test]}]}\n",
        &[
            "maps to both 10.10.10.10",
            "10.10.10.11 (all.vars.vm_hosts[0].names[0])",
        ],
    );
    refused(
        "all:\n  hosts: {10.10.10.10: {vm_alias: [a, a]}}\n",
        &["vm_alias[1]", "repeats"],
    );
    refused(
        "all:\n  hosts: {10.10.10.10: {vm_alias: a}}\n",
        &["vm_alias", "a list"],
    );
    // The same name on the same address from two sources merges.
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "h.yml",
        "all:\n  hosts: {10.10.10.10: {nodename: meta}}\n  vars: {vm_hosts: [{address: 10.10.10.10, names: [meta]}]}\n",
    );
    let v: serde_json::Value =
        serde_json::from_str(&run(&["check", "--json", p.to_str().unwrap()]).stdout).unwrap();
    assert_eq!(
        v["served"][0]["sources"],
        serde_json::json!([
            "all.hosts[10.10.10.10].nodename",
            "all.vars.vm_hosts[0].names[0]"
        ])
    );
}

/// A value that is not a string is quoted in an error as written, not as the reader's value printed
/// again (`0x1` is not shown as `1`, nor `True` as `true`); nulls say null, however written.
#[test]
fn values_that_are_not_strings_are_quoted_as_written() {
    let host = |vars: &str| format!("all:\n  hosts: {{10.10.10.10: {{{vars}}}}}\n");
    for (vars, needle) in [
        ("vm_skip: 0x1", "vm_skip: is 0x1; vm_skip is true or false"),
        ("vm_skip: +1", "vm_skip: is +1; vm_skip is"),
        ("nodename: True", "nodename: is True; nodename is a string"),
        ("nodename: 1e3", "nodename: is 1e3; nodename is a string"),
        ("nodename: 007", "nodename: is 007; nodename is a string"),
        (
            "pg_cluster: FALSE, pg_seq: 1",
            "pg_cluster: is FALSE; pg_cluster",
        ),
        (
            "vm_alias: [a, 0o17]",
            "vm_alias[1]: is 0o17; a name is a string",
        ),
        (
            "vm_alias: [a, ~]",
            "vm_alias[1]: is null; a name is a string",
        ),
    ] {
        refused(&host(vars), &[needle]);
    }
    refused(
        "all:\n  hosts: {0x0a0a0a0a: {}}\n",
        &["host key 0x0a0a0a0a must be an IPv4 address"],
    );
    refused(
        "all:\n  hosts: {10.10.10.10: {}}\n  vars: {vm_hosts: [{address: 10.10.10.11, names: [a], 1e3: x}]}\n",
        &["has the unknown key 1e3;"],
    );
    refused(
        "all:\n  hosts: {10.10.10.10: {}}\n  vars: {vm_hosts: [{address: +10, names: [a]}]}\n",
        &["address: is +10; an address is a string"],
    );
    // Two groups at one depth: the conflict quotes both as written; the same value written two ways
    // is no conflict.
    let groups = |a: &str, b: &str| {
        format!(
            "all:\n  vars: {{pg_cluster: pg}}\n  children:\n    a: {{vars: {{pg_seq: {a}}}, hosts: {{10.10.10.10: {{}}}}}}\n    b: {{vars: {{pg_seq: {b}}}, hosts: {{10.10.10.10: {{}}}}}}\n"
        )
    };
    refused(
        &groups("0x1", "2"),
        &["(0x1) and all.children.b.vars.pg_seq (2)"],
    );
    assert_eq!(served(&groups("0x1", "1"))[0].0, "pg-1.pigsty.test");
}

/// Every value quoted in an inventory error is cut to its first 80 bytes and its length, strings as
/// well as values written otherwise (a 5,000-byte value was quoted whole).
#[test]
fn long_values_in_inventory_errors_are_cut() {
    let long = "x".repeat(5000);
    let cut = format!("\"{}\"…(5000 bytes)", "x".repeat(80));
    let template = format!("\"{{{{{}\"…(5002 bytes)", "x".repeat(78));
    for (text, shown) in [
        (
            format!("all:\n  hosts: {{10.10.10.10: {{vm_skip: '{long}'}}}}\n"),
            &cut,
        ),
        (
            format!("all:\n  hosts: {{10.10.10.10: {{pg_cluster: a, pg_seq: '{long}'}}}}\n"),
            &cut,
        ),
        (
            format!("all:\n  hosts: {{10.10.10.10: {{nodename: '{{{{{long}'}}}}\n"),
            &template,
        ),
        (
            format!(
                "all:\n  hosts: {{10.10.10.10: {{}}}}\n  vars: {{vm_hosts: [{{address: '{long}', names: [a]}}]}}\n"
            ),
            &cut,
        ),
        (
            format!(
                "all:\n  hosts: {{10.10.10.10: {{}}}}\n  vars: {{vm_hosts: [{{address: 10.10.10.11, names: ['{{{{{long}']}}]}}\n"
            ),
            &template,
        ),
    ] {
        let r = refused(&text, &[shown]);
        let line = r.error_line();
        assert!(line.len() < 400, "{} bytes: {}", line.len(), &line[..200]);
    }
}

#[test]
fn vm_skip_removes_a_host_but_one_must_remain() {
    let s = served("all:\n  hosts: {10.10.10.10: {nodename: meta}, 10.20.0.5: {vm_skip: true}}\n");
    assert_eq!(s, pairs(&[("meta.pigsty.test", "10.10.10.10")]));
    refused(
        "all:\n  hosts: {10.10.10.10: {vm_skip: true}}\n",
        &["no managed host"],
    );
    refused(
        "all:\n  hosts: {10.10.10.10: {}, 10.10.10.11: {vm_skip: 'yes'}}\n",
        &["vm_skip", "true or false"],
    );
    refused(
        "all:\n  hosts: {10.10.10.10: {}, skipped: {vm_skip: true}}\n",
        &["\"skipped\"", "IPv4"],
    );
    let r = check_text("all:\n  hosts: {10.10.10.10: {}, 10.10.10.11: {vm_skip: true}}\n");
    assert!(
        r.stdout.contains("not managed: host 10.10.10.11"),
        "{}",
        r.stdout
    );
}

#[test]
fn literal_values_only_where_read() {
    refused(
        "all:\n  hosts: {10.10.10.10: {nodename: '{{ name }}'}}\n",
        &["nodename", "template", "literal values only"],
    );
    refused(
        "all:\n  hosts: {10.10.10.10: {vm_alias: ['{{ x }}']}}\n",
        &["vm_alias", "template"],
    );
    refused(
        "all:\n  hosts: {10.10.10.10: {}}\n  vars: {vm_hosts: [{address: 10.10.10.10, names: ['{{a}}']}]}\n",
        &["vm_hosts", "template"],
    );
    // Templates in variables pigsty-dns does not read are none of its business.
    assert_eq!(
        served("all:\n  hosts: {10.10.10.10: {pg_hba: '{{ x }}'}}\n  vars: {grafana: '{{ y }}'}\n")
            .len(),
        1
    );
}

#[test]
fn a_full_pigsty_inventory_loads() {
    let text = r#"---
all:
  children:
    infra: { hosts: { 10.10.10.10: { infra_seq: 1 } }, vars: { repo_enabled: false } }
    etcd: { hosts: { 10.10.10.10: { etcd_seq: 1 } }, vars: { etcd_cluster: etcd } }
    minio: { hosts: { 10.10.10.10: { minio_seq: 1 } }, vars: { minio_cluster: minio } }
    pg-meta:
      hosts: { 10.10.10.10: { pg_seq: 1, pg_role: primary } }
      vars:
        pg_cluster: pg-meta
        pg_users:
          - { name: dbuser_meta ,password: DBUser.Meta ,pgbouncer: true ,roles: [dbrole_admin] ,comment: pigsty admin user }
        pg_databases:
          - { name: meta ,baseline: cmdb.sql ,comment: pigsty meta database ,schemas: [pigsty] ,extensions: [{ name: vector }] }
        pg_hba_rules:
          - { user: dbuser_view , db: all ,addr: infra ,auth: pwd ,title: 'allow grafana dashboard access cmdb from infra nodes' }
        pg_vip_enabled: false
        pg_vip_address: 10.10.10.2/24
        node_crontab: [ '00 01 * * * postgres /pg/bin/pg-backup full' ]
  vars:
    version: v4.5.0
    admin_ip: 10.10.10.10
    region: default
    node_tune: oltp
    pg_conf: oltp.yml
    infra_portal:
      home: { domain: i.pigsty }
      pgadmin: { domain: adm.pigsty, endpoint: "${admin_ip}:8885" }
    node_etc_hosts: [ '${admin_ip} i.pigsty sss.pigsty' ]
    pg_default_hba_rules: &hba
      - {user: '${dbsu}' ,db: all ,addr: local ,auth: ident ,title: 'dbsu access via local os user ident' }
    pgb_default_hba_rules: *hba
    vm_cpu: 2
    vm_mem: 4096
    jinja_thing: "{{ inventory_hostname }}"
"#;
    // A Pigsty config: the literal host-access view (issue 31) serves the cluster and the MinIO
    // member besides the instance; the identity-only reading serves what it did before.
    assert_eq!(
        served(text),
        pairs(&[
            ("adm.pigsty", "10.10.10.10"),
            ("api.pigsty", "10.10.10.10"),
            ("cli.pigsty", "10.10.10.10"),
            ("ddl.pigsty", "10.10.10.10"),
            ("i.pigsty", "10.10.10.10"),
            ("m.pigsty", "10.10.10.10"),
            ("minio-1.pigsty", "10.10.10.10"),
            ("minio-1.pigsty.test", "10.10.10.10"),
            ("pg-meta-1.pigsty.test", "10.10.10.10"),
            ("pg-meta.pigsty.test", "10.10.10.10"),
            ("sss.pigsty", "10.10.10.10"),
            ("supa.pigsty", "10.10.10.10"),
        ])
    );
    let r = check_text_with(text, &["--identity-only"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("served (1):"), "{}", r.stdout);
    assert!(
        r.stdout.contains("view: identity (projection)"),
        "{}",
        r.stdout
    );
}

#[test]
fn yaml_document_rules() {
    refused(
        "all:\n  hosts: {10.10.10.10: {}}\n  hosts: {10.10.10.11: {}}\n",
        &["line 3", "mapping key \"hosts\" twice (lines 2 and 3)"],
    );
    refused(
        "all:\n  hosts: {10.10.10.10: {}}\n---\nall: {}\n",
        &["exactly one YAML document"],
    );
    refused("", &["is empty"]);
    refused("- a\n- b\n", &["a list at the top"]);
    refused("hosts: {10.10.10.10: {}}\n", &["no all: key"]);
    refused(
        "all:\n  hosts: {10.10.10.10: {}\n",
        &["not valid YAML", "line"],
    );
    refused("all:\n  hosts: {}\n", &["lists no hosts"]);
    // Anchors, aliases and merge keys work; explicit keys win over merged ones.
    let text = "x-common: &common {nodename: merged, vm_alias: [shared]}\nall:\n  hosts:\n    10.10.10.10: {<<: *common, nodename: meta}\n    10.10.10.11: {<<: *common, vm_alias: [other]}\n";
    assert_eq!(
        served(text),
        pairs(&[
            ("merged.pigsty.test", "10.10.10.11"),
            ("meta.pigsty.test", "10.10.10.10"),
            ("other.pigsty.test", "10.10.10.11"),
            ("shared.pigsty.test", "10.10.10.10")
        ])
    );
}

#[test]
fn hostile_documents_are_refused_with_bounds() {
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let p = i - 1;
        bomb.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    bomb.push_str("all:\n  hosts: {10.10.10.10: {}}\n");
    refused(&bomb, &["too many values"]);
    let deep = format!(
        "all:\n  hosts: {{10.10.10.10: {{x: {}1{}}}}}\n",
        "[".repeat(200),
        "]".repeat(200)
    );
    refused(&deep, &["not valid YAML"]);
    // The most values per byte: refused at the value budget, long before the end of the file.
    let head = "all:\n  hosts: {10.10.10.10: {}}\n  vars: {pad: [";
    let wide = format!("{head}{}]}}\n", vec!["a"; 2_000_000].join(","));
    refused(&wide, &["line 3", "too many values"]);
    let dir = tempfile::tempdir().unwrap();
    let big = format!(
        "all:\n  hosts: {{10.10.10.10: {{}}}}\n  vars: {{pad: '{}'}}\n",
        "x".repeat(4 * 1024 * 1024)
    );
    let p = write(dir.path(), "big.yml", &big);
    let r = run(&["check", p.to_str().unwrap()]);
    assert_eq!(r.code, 8);
    assert!(r.error_line().contains("4 MiB"), "{}", r.stderr);
}

#[test]
fn more_than_100000_served_names_is_refused() {
    let mut text = String::from(
        "all:\n  hosts: {10.10.10.10: {nodename: meta}}\n  vars:\n    vm_hosts:\n      - address: 10.10.10.10\n        names:\n",
    );
    for i in 0..100_001 {
        text.push_str(&format!("          - n{i}\n"));
    }
    refused(&text, &["100002 served names", "at most 100000"]);
}

#[test]
fn errors_in_json_are_one_object() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "h.yml", "all:\n  hosts: {10.10.10.010: {}}\n");
    let r = run(&["check", "--json", p.to_str().unwrap()]);
    assert_eq!(r.code, 8);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("one JSON object");
    assert_eq!(v["error"], "invalid");
    assert!(v["message"].as_str().unwrap().contains("leading zero"));
    assert!(v["next"].as_str().unwrap().contains("canonical IPv4"));
    let r = run(&["check", "/nonexistent/host-names.yml"]);
    assert_eq!(r.code, 2);
    assert!(r.error_line().contains("/nonexistent/host-names.yml"));
    let r = run(&["check"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let r = run(&["bogus"]);
    assert_eq!(r.code, 2);
    r.error_line();
}

#[test]
fn a_deeper_value_wins_even_when_it_comes_after_an_equal_depth_disagreement() {
    // a and b disagree at group depth, but the host-level value (listed under b) is deeper and wins.
    let text = "all:\n  children:\n    a:\n      vars: {nodename: one}\n      hosts: {10.10.10.10: }\n    b:\n      vars: {nodename: two}\n      hosts: {10.10.10.10: {nodename: own}}\n";
    assert_eq!(served(text), pairs(&[("own.pigsty.test", "10.10.10.10")]));
}

/// Name → address (or address → name) pairs of a `check --json` list.
type Pairs = Vec<(String, String)>;

/// `check --json` of a valid text: served name → address, and the PTRs (address → name) in order.
fn served_and_ptr(text: &str) -> (Pairs, Pairs, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "host-names.yml", text);
    let r = run(&["check", "--json", p.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let pairs = |key: &str, a: &str, b: &str| -> Pairs {
        v[key]
            .as_array()
            .unwrap_or_else(|| panic!("{key} in {v}"))
            .iter()
            .map(|x| (x[a].as_str().unwrap().into(), x[b].as_str().unwrap().into()))
            .collect()
    };
    let served = pairs("served", "name", "address");
    let ptr = pairs("ptr", "address", "name");
    (served, ptr, v)
}

/// Forward confirmation: every PTR target has an A back to the same address, every address with names
/// has exactly one PTR, in address order.
fn assert_forward_confirmed(what: &str, served: &[(String, String)], ptr: &[(String, String)]) {
    let addresses: std::collections::BTreeSet<std::net::Ipv4Addr> =
        served.iter().map(|(_, a)| a.parse().unwrap()).collect();
    let ptr_addresses: Vec<std::net::Ipv4Addr> =
        ptr.iter().map(|(a, _)| a.parse().unwrap()).collect();
    assert_eq!(
        ptr_addresses,
        addresses.into_iter().collect::<Vec<_>>(),
        "{what}: one PTR per address with names, sorted"
    );
    for (address, name) in ptr {
        assert!(
            served.contains(&(name.clone(), address.clone())),
            "{what}: PTR {address} -> {name} has no A back to {address}"
        );
    }
}

#[test]
fn every_ptr_of_every_sample_is_forward_confirmed() {
    let mut texts: Vec<(String, String)> = ["zones/pigsty.test.yml", "zones/ha.yml"]
        .iter()
        .map(|f| {
            let p = format!("{}/{f}", env!("CARGO_MANIFEST_DIR"));
            (f.to_string(), std::fs::read_to_string(p).unwrap())
        })
        .collect();
    texts.push((
        "the differential suite's records".into(),
        crate::differential::records().1,
    ));
    for (what, text) in &texts {
        let (served, ptr, v) = served_and_ptr(text);
        assert!(!ptr.is_empty(), "{what}");
        assert_eq!(v["reverse_zone"], "10.10.10.in-addr.arpa", "{what}");
        assert_forward_confirmed(what, &served, &ptr);
    }
    // The samples' canonical names, as the README states them.
    let (_, ptr, _) = served_and_ptr(&texts[0].1);
    assert_eq!(ptr, pairs(&[("10.10.10.10", "meta.pigsty.test")]));
    let (_, ptr, _) = served_and_ptr(&texts[1].1);
    // ha.yml's 10.10.10.9 is a vm_hosts entry whose first name is MinIO's sss.pigsty.
    assert_eq!(
        ptr,
        pairs(&[
            ("10.10.10.9", "sss.pigsty"),
            ("10.10.10.10", "pg-meta-1.pigsty.test"),
            ("10.10.10.11", "pg-meta-2.pigsty.test"),
            ("10.10.10.12", "pg-meta-3.pigsty.test"),
        ])
    );
}

#[test]
fn check_shows_the_reverse_zone_and_the_canonical_names() {
    let text = "all:
  hosts: { 10.10.10.10: { nodename: meta, vm_alias: [a] } }
  vars:
    vm_hosts:
      - { address: 10.10.10.20, names: [i.pigsty.cc, Zed, abc] }
      - { address: 10.10.10.21, names: [only.outside] }
";
    let r = check_text(text);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains(
            "reverse zone 10.10.10.in-addr.arpa (2 PTR):\n  10.10.10.10      meta.pigsty.test\n  10.10.10.20      zed.pigsty.test\n"
        ),
        "{}",
        r.stdout
    );
    let (served, ptr, _) = served_and_ptr(text);
    assert_forward_confirmed("inline", &served, &ptr);
    assert!(
        !ptr.iter().any(|(a, _)| a == "10.10.10.21"),
        "no names served there"
    );
}

#[test]
fn an_xn_label_that_is_not_punycode_is_refused() {
    refused(
        "all:\n  hosts: {10.10.10.10: {nodename: xn--zz}}\n",
        &["xn--zz", "not valid punycode"],
    );
    refused(
        "all:\n  hosts: {10.10.10.10: {vm_alias: [a.xn--zz]}}\n",
        &["xn--zz", "not valid punycode"],
    );
    let r = check_text("all:\n  hosts: {10.10.10.10: {vm_alias: [xn--mnchen-3ya]}}\n");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("xn--mnchen-3ya.pigsty.test"),
        "{}",
        r.stdout
    );
}

#[test]
fn tags_that_change_a_value_or_that_ansible_cannot_read_are_refused_naming_the_tag() {
    // Ansible reads a !vault value as encrypted, never as the text after the tag.
    refused(
        "all:\n  hosts: {10.10.10.10: {nodename: !vault meta}}\n",
        &["nodename", "!vault (encrypted) value"],
    );
    refused(
        "all:\n  hosts: !!seq {10.10.10.10: {nodename: meta}}\n",
        &["\"!!seq\" on a mapping"],
    );
    refused(
        "all:\n  hosts: {10.10.10.10: {nodename: !foo meta}}\n",
        &["\"!foo\"", "Ansible cannot read"],
    );
    // A vault value the view does not read is no matter; !!str and !unsafe keep the text.
    let r = check_text(
        "all:\n  hosts: {10.10.10.10: {nodename: !!str meta, vm_alias: [!unsafe m], secret: !vault x}}\n",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("meta.pigsty.test") && r.stdout.contains("m.pigsty.test"));
}

#[test]
fn a_valid_file_past_the_readers_limit_says_which_limit_not_invalid_yaml() {
    let mut text = String::from("all:\n  hosts:\n");
    for i in 0..100_000u32 {
        let (b, c) = (i / 256 % 256, i % 256);
        text.push_str(&format!(
            "    10.{}.{b}.{c}: {{nodename: n{i}}}\n",
            10 + i / 65_536
        ));
    }
    let r = refused(
        &text,
        &["is past a limit of the YAML reader", "at most 400000"],
    );
    assert!(!r.stderr.contains("not valid YAML"), "{}", r.stderr);
    assert!(r.stderr.contains("next: split the hosts"), "{}", r.stderr);
}

#[test]
fn a_files_problems_are_listed_up_to_a_cap_then_counted() {
    // 25 hosts outside the first host's /24: each its own problem, 20 listed, then "and 5 more".
    let mut text = String::from("all:\n  hosts:\n    10.10.10.10: {}\n");
    for i in 0..25 {
        text.push_str(&format!("    10.10.11.{}: {{}}\n", 10 + i));
    }
    let r = check_text(&text);
    assert_eq!(r.code, 8, "{}", r.stderr);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 2 * 21, "{}", r.stderr);
    assert!(lines[0].contains("all.hosts[10.10.11.10]: host 10.10.11.10 is outside"));
    assert!(lines[38].contains("all.hosts[10.10.11.29]: host 10.10.11.29 is outside"));
    assert_eq!(lines[40], "error: and 5 more problems not listed");
    assert_eq!(
        lines[41],
        "next: fix the ones above and run check again for the rest"
    );
    let r = check_text_with(&text, &["--json"]);
    assert_eq!(r.code, 8, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["errors"].as_array().unwrap().len(), 20);
    assert_eq!(v["errors_not_listed"], 5);
    assert_eq!(v["message"], v["errors"][0]["message"]);
}

#[test]
fn every_name_on_two_addresses_and_every_bad_name_is_listed() {
    // Barn's projection: two names each on two addresses and a bad name between them, in input order.
    let text = "all:\n  hosts:\n    10.10.10.10: {nodename: meta}\n  vars:\n    vm_hosts:\n      - {address: 10.10.10.11, names: [a, b]}\n      - {address: 10.10.10.12, names: [a, bad_name]}\n      - {address: 10.10.10.13, names: [b]}\n";
    refused_listing(
        text,
        &[
            "vm_hosts[1].names[0]: name \"a.pigsty.test\" maps to both 10.10.10.11",
            "vm_hosts[1].names[1]:",
            "vm_hosts[2].names[0]: name \"b.pigsty.test\" maps to both 10.10.10.11",
        ],
    );
}

#[test]
fn clashing_names_past_the_cap_are_counted_in_input_order() {
    // 30 names each on .11 and .12, and a bad name last: the first 20 clashes by input order, 11 more.
    let names: Vec<String> = (0..30).map(|i| format!("n{i:02}")).collect();
    let list = names.join(", ");
    let text = format!(
        "all:\n  hosts: {{10.10.10.10: {{nodename: meta}}}}\n  vars:\n    vm_hosts:\n      - {{address: 10.10.10.11, names: [{list}]}}\n      - {{address: 10.10.10.12, names: [{list}, bad_name]}}\n"
    );
    let r = check_text(&text);
    assert_eq!(r.code, 8, "{}", r.stderr);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 2 * 21, "{}", r.stderr);
    for i in 0..20 {
        assert!(
            lines[2 * i].contains(&format!(
                "vm_hosts[1].names[{i}]: name \"n{i:02}.pigsty.test\""
            )),
            "{}",
            lines[2 * i]
        );
    }
    assert_eq!(lines[40], "error: and 11 more problems not listed");
}

#[test]
fn every_bad_host_is_listed_and_a_group_variable_once() {
    // Two hosts each with its own bad value, and a group's bad pg_seq that both of its hosts read:
    // three problems, the group's once.
    let text = "all:\n  children:\n    g:\n      hosts: {10.10.10.12: {}, 10.10.10.13: {}}\n      vars: {pg_cluster: pg-x, pg_seq: one}\n  hosts:\n    10.10.10.10: {nodename: 5}\n    10.10.10.11: {vm_skip: maybe}\n";
    refused_listing(
        text,
        &[
            "all.hosts[10.10.10.10].nodename: is 5; nodename is a string",
            "all.hosts[10.10.10.11].vm_skip: is",
            "all.children.g.vars.pg_seq: is",
        ],
    );
}
