//! The literal host-access view of a Pigsty config (issue 31), through `check` on real files: the
//! stock configs of pgsty/pigsty v4.5.0 (in ../shared/reference/pigsty-conf, copied into
//! tests/data/pigsty-conf) and small configs for each rule and each refusal.

use crate::util::*;

fn stock(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/data/pigsty-conf/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("stock config")
}

fn json(text: &str, flags: &[&str]) -> serde_json::Value {
    let mut f = vec!["--json"];
    f.extend_from_slice(flags);
    let r = check_text_with(text, &f);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    serde_json::from_str(&r.stdout).expect("json")
}

/// (name, address, category) of a list of the check's JSON.
fn triples(v: &serde_json::Value, list: &str) -> Vec<(String, String, String)> {
    v[list]
        .as_array()
        .expect("list")
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
            (s("name"), s("address"), s("category"))
        })
        .collect()
}

fn t(n: &str, a: &str, c: &str) -> (String, String, String) {
    (n.into(), a.into(), c.into())
}

/// Issue 37's "done when": with no flags, stock `conf/meta.yml` serves all 10 of its names, Pigsty's
/// own `.pigsty` names under their own name (zone `pigsty`), the cluster and the instance under
/// `pigsty.test`; nothing is left unserved.
#[test]
fn stock_meta_serves_all_ten_names_pigstys_under_their_own_name() {
    let v = json(&stock("meta.yml"), &[]);
    assert_eq!(v["view"], "literal host-access");
    assert_eq!(v["zones"], serde_json::json!(["pigsty.test", "pigsty"]));
    assert_eq!(
        triples(&v, "served"),
        [
            t("adm.pigsty", "10.10.10.10", "infra-dns"),
            t("api.pigsty", "10.10.10.10", "infra-dns"),
            t("cli.pigsty", "10.10.10.10", "infra-dns"),
            t("ddl.pigsty", "10.10.10.10", "infra-dns"),
            t("i.pigsty", "10.10.10.10", "infra-dns"),
            t("m.pigsty", "10.10.10.10", "infra-dns"),
            t("pg-meta-1.pigsty.test", "10.10.10.10", "vm-identity"),
            t("pg-meta.pigsty.test", "10.10.10.10", "service-access"),
            t("sss.pigsty", "10.10.10.10", "guest-hosts"),
            t("supa.pigsty", "10.10.10.10", "infra-dns"),
        ]
    );
    assert_eq!(v["not_served"], serde_json::json!([]));
    // Every source of a record names its category; the portal's adm.pigsty keeps both.
    let adm = v["served"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "adm.pigsty")
        .unwrap();
    assert_eq!(
        adm["sources"],
        serde_json::json!([
            "infra-dns: dns_records[1] (Pigsty v4.5.0 default)",
            "portal-access: all.vars.infra_portal.pgadmin.domain"
        ])
    );
    // With --zone pigsty.test alone the .pigsty names are listed, not served, with their category.
    let v = json(&stock("meta.yml"), &["--zone", "pigsty.test"]);
    let not = triples(&v, "not_served");
    for want in [
        t("i.pigsty", "10.10.10.10", "infra-dns"),
        t("sss.pigsty", "10.10.10.10", "guest-hosts"),
    ] {
        assert!(not.contains(&want), "{want:?} not in {not:?}");
    }
    assert_eq!(
        v["not_served"][0]["reason"], "outside the served zones",
        "{v}"
    );
    // The text names the view and each name's category with its source.
    let r = check_text(&stock("meta.yml"));
    assert!(
        r.stdout.contains("view: literal host-access\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("pg-meta.pigsty.test    10.10.10.10      service-access: all.children.pg-meta.hosts[10.10.10.10].pg_role (PG cluster, pg_dns_target auto: primary)"),
        "{}",
        r.stdout
    );
}

#[test]
fn identity_only_keeps_todays_reading() {
    let v = json(&stock("meta.yml"), &["--identity-only"]);
    assert_eq!(v["view"], "identity (projection)");
    assert_eq!(
        triples(&v, "served"),
        [t("pg-meta-1.pigsty.test", "10.10.10.10", "vm-identity")]
    );
    assert_eq!(v["not_served"], serde_json::json!([]));
}

#[test]
fn a_projection_is_read_as_before() {
    let v = json(
        "all:\n  hosts: {10.10.10.10: {nodename: meta}}\n  vars:\n    admin_ip: 10.10.10.10\n    vm_hosts: [{address: 10.10.10.11, names: [pg-meta]}]\n",
        &[],
    );
    assert_eq!(v["view"], "identity (projection)");
    assert_eq!(
        triples(&v, "served"),
        [
            t("meta.pigsty.test", "10.10.10.10", "vm-identity"),
            t("pg-meta.pigsty.test", "10.10.10.11", "explicit"),
        ]
    );
    // Untagged sources, as before (so a projection's generations do not change).
    assert_eq!(
        v["served"][1]["sources"],
        serde_json::json!(["all.vars.vm_hosts[0].names[0]"])
    );
}

#[test]
fn stock_trio_clash_names_both_sources_and_the_fixes() {
    // The clash (found deriving Pigsty's records) and the reserved .2 (Barn's address rule, later) are
    // independent: both are listed at once, each its own error: and next: line, exit 8, nothing on stdout.
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "trio.yml", &stock("ha/trio.yml"));
    let file = f.to_str().unwrap();
    let r = run(&["check", file]);
    assert_eq!(r.code, 8, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 4, "two problems, two lines each: {}", r.stderr);
    for (i, l) in lines.iter().enumerate() {
        let want = if i % 2 == 0 { "error: " } else { "next: " };
        assert!(l.starts_with(want), "line {i} {l:?}");
    }
    for n in [
        "name \"pg-meta\" maps to both 10.10.10.2",
        "all.children.pg-meta.vars.pg_vip_address",
        "10.10.10.9 (service-access: all.children.minio.vars.vip_address (node VIP))",
    ] {
        assert!(lines[0].contains(n), "{:?} lacks {n:?}", lines[0]);
    }
    assert!(
        lines[1].starts_with("next: give the node VIP its own name: set vip_dns_suffix"),
        "{}",
        lines[1]
    );
    for n in [
        "10.10.10.2 for \"pg-meta\" is in .2-.8",
        "all.children.pg-meta.vars.pg_vip_address",
    ] {
        assert!(lines[2].contains(n), "{:?} lacks {n:?}", lines[2]);
    }
    assert!(
        lines[3].starts_with("next: move the PG VIP into 10.10.10.9-254"),
        "{}",
        lines[3]
    );
    // --json: one object, the first problem at the top as before, every problem in `errors`.
    let j = run(&["check", "--json", file]);
    assert_eq!(j.code, 8, "{}", j.stderr);
    assert!(j.stderr.is_empty(), "{}", j.stderr);
    let v: serde_json::Value = serde_json::from_str(&j.stdout).expect("one JSON object");
    assert_eq!(v["error"], "invalid");
    let errors = v["errors"].as_array().expect("errors");
    assert_eq!(errors.len(), 2, "{v:#}");
    assert_eq!(v["message"], errors[0]["message"]);
    assert_eq!(v["next"], errors[0]["next"]);
    for (e, l) in errors.iter().zip([lines[0], lines[2]]) {
        let m = e["message"].as_str().unwrap();
        assert_eq!(format!("error: {m}"), l);
    }
    assert!(v.get("errors_not_listed").is_none(), "{v:#}");
    // load writes nothing while any problem is left.
    let state = dir.path().join("state");
    let r = load(&state, &f, &[]);
    assert_eq!(r.code, 8, "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 4, "{}", r.stderr);
    assert!(!state.exists(), "an invalid file created the state dir");
    // With the node VIP's name apart, Barn's address rule refuses the PG VIP at .2.
    let fixed = stock("ha/trio.yml").replace(
        "vip_address: 10.10.10.9",
        "vip_address: 10.10.10.9\n        vip_dns_suffix: '-vip'",
    );
    let r = refused(
        &fixed,
        &[
            "10.10.10.2 for \"pg-meta\" is in .2-.8",
            "all.children.pg-meta.vars.pg_vip_address",
        ],
    );
    assert!(
        r.stderr
            .contains("next: move the PG VIP into 10.10.10.9-254"),
        "{}",
        r.stderr
    );
    // And with the VIP moved, every name is served, the node VIP under its own name.
    let ok = fixed.replace(
        "pg_vip_address: 10.10.10.2/24",
        "pg_vip_address: 10.10.10.20/24",
    );
    let v = json(&ok, &[]);
    let served = triples(&v, "served");
    for want in [
        t("pg-meta.pigsty.test", "10.10.10.20", "service-access"),
        // node_cluster falls back to pg_cluster (roles/node_id), so the node VIP is pg-meta-vip.
        t("pg-meta-vip.pigsty.test", "10.10.10.9", "service-access"),
        t("minio-2.pigsty.test", "10.10.10.11", "service-access"),
        t("pg-meta-3.pigsty.test", "10.10.10.12", "vm-identity"),
    ] {
        assert!(served.contains(&want), "{want:?} not in {served:?}");
    }
    assert!(triples(&v, "served").contains(&t("minio-1.pigsty", "10.10.10.10", "service-access")));
}

#[test]
fn stock_ha_templates_put_the_pg_vip_where_barn_reserves() {
    // Each cluster's VIP at once: full's pg-meta at .2 and pg-test at .3, dual's pg-meta.
    for (f, vips) in [
        (
            "ha/full.yml",
            &[("10.10.10.2", "pg-meta"), ("10.10.10.3", "pg-test")][..],
        ),
        ("ha/dual.yml", &[("10.10.10.2", "pg-meta")][..]),
    ] {
        let r = check_text(&stock(f));
        assert_eq!(r.code, 8, "{}", r.stderr);
        let lines: Vec<&str> = r.stderr.lines().collect();
        assert_eq!(lines.len(), 2 * vips.len(), "{}", r.stderr);
        for (i, (a, name)) in vips.iter().enumerate() {
            let l = lines[2 * i];
            let want = format!("{a} for \"{name}\" is in .2-.8");
            assert!(l.starts_with("error: ") && l.contains(&want), "{l}");
            assert!(l.contains("pg_vip_address"), "{l}");
        }
        assert!(
            lines[1].ends_with("or set pg_dns_target: primary"),
            "{}",
            r.stderr
        );
        // pg_dns_target: primary is the way out the error names.
        let text = stock(f).replace(
            "    pg_version: 18",
            "    pg_version: 18\n    pg_dns_target: primary",
        );
        let v = json(&text, &[]);
        assert!(
            triples(&v, "served")
                .iter()
                .any(|(n, _, c)| n == "pg-meta.pigsty.test" && c == "service-access"),
            "{v}"
        );
    }
}

const ONE: &str = "all:\n  children:\n    infra: {hosts: {10.10.10.10: {infra_seq: 1}}}\n    pg-x:\n      hosts:\n        10.10.10.10: {pg_seq: 1, pg_role: primary}\n        10.10.10.11: {pg_seq: 2, pg_role: replica}\n      vars: {pg_cluster: pg-x VARS}\n  vars: {admin_ip: 10.10.10.10}\n";

fn one(vars: &str) -> String {
    ONE.replace(" VARS", &format!(", {vars}"))
        .replace(", }", "}")
}

#[test]
fn pg_dns_target_rules() {
    let served_at = |vars: &str, name: &str| -> Option<String> {
        let v = json(&one(vars), &[]);
        triples(&v, "served")
            .into_iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, a, _)| a)
    };
    assert_eq!(
        served_at("", "pg-x.pigsty.test").as_deref(),
        Some("10.10.10.10")
    );
    assert_eq!(
        served_at("pg_dns_suffix: '-rw'", "pg-x-rw.pigsty.test").as_deref(),
        Some("10.10.10.10")
    );
    assert_eq!(served_at("pg_dns_target: none", "pg-x.pigsty.test"), None);
    assert_eq!(served_at("pg_dns_target: vip", "pg-x.pigsty.test"), None);
    assert_eq!(
        served_at(
            "pg_dns_target: vip, pg_vip_enabled: true, pg_vip_address: 10.10.10.30/24",
            "pg-x.pigsty.test"
        )
        .as_deref(),
        Some("10.10.10.30")
    );
    assert_eq!(
        served_at("pg_dns_target: 10.10.10.50", "pg-x.pigsty.test").as_deref(),
        Some("10.10.10.50")
    );
    // The instances keep their own names.
    assert_eq!(
        served_at("pg_dns_target: none", "pg-x-2.pigsty.test").as_deref(),
        Some("10.10.10.11")
    );
}

#[test]
fn targets_pigsty_would_write_wrong_are_refused() {
    refused(
        &one("pg_dns_target: 10.10.10.50/24"),
        &[
            "pg_dns_target \"10.10.10.50/24\" is a CIDR",
            "all.children.pg-x.vars.pg_dns_target",
        ],
    );
    let r = refused(
        &one("").replace("pg_role: primary", "pg_role: replica"),
        &["PG cluster \"pg-x\" has 0 primaries", "\"unknown\""],
    );
    assert!(
        r.stderr
            .contains("next: mark exactly one instance pg_role: primary"),
        "{}",
        r.stderr
    );
    refused(
        &one("").replace("pg_role: replica", "pg_role: primary"),
        &["has 2 primaries"],
    );
    refused(
        &one("pg_dns_target: somewhere"),
        &["pg_dns_target \"somewhere\""],
    );
}

#[test]
fn what_the_literal_mode_cannot_know_is_refused() {
    refused(
        &one("pg_dns_suffix: '{{ x }}'"),
        &["all.children.pg-x.vars.pg_dns_suffix", "template"],
    );
    refused(
        &format!(
            "{}    infra_portal: {{home: {{domain: i.pigsty}}, x: {{domain: x.pigsty, conf: x.conf}}}}\n",
            one("").replace(
                "  vars: {admin_ip: 10.10.10.10}\n",
                "  vars:\n    admin_ip: 10.10.10.10\n"
            )
        ),
        &["infra_portal.x.conf", "custom portal template"],
    );
    // Two infra entries that would publish from different admin_ip.
    refused(
        &one("").replace("infra: {hosts: {10.10.10.10: {infra_seq: 1}}}", "infra: {hosts: {10.10.10.10: {infra_seq: 1}, 10.10.10.11: {infra_seq: 2, admin_ip: 10.10.10.11}}}"),
        &["infra entries 10.10.10.10 and 10.10.10.11 have different admin_ip"],
    );
    // A value that depends on the order of sibling groups.
    refused(
        &one("").replace("  vars: {admin_ip", "    b: {hosts: {10.10.10.11: {}}, vars: {pg_dns_suffix: '-b'}}\n    a: {hosts: {10.10.10.11: {}}, vars: {pg_dns_suffix: '-a'}}\n  vars: {admin_ip"),
        &["conflicting values for pg_dns_suffix"],
    );
    // group_vars/ beside the file.
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "pigsty.yml", &one(""));
    std::fs::create_dir(dir.path().join("group_vars")).unwrap();
    let r = run(&["check", p.to_str().unwrap()]);
    assert_eq!(r.code, 8, "{}", r.stderr);
    assert!(r.stderr.contains("group_vars is beside it"), "{}", r.stderr);
    assert_eq!(
        run(&["check", "--identity-only", p.to_str().unwrap()]).code,
        0
    );
}

#[test]
fn pigsty_naming_a_guest_otherwise_is_a_note() {
    let text = one("").replace(
        "10.10.10.10: {pg_seq: 1, pg_role: primary}",
        "10.10.10.10: {pg_seq: 1, pg_role: primary, nodename: meta}",
    );
    let v = json(&text, &[]);
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("Pigsty names this node \\\"pg-x-1\\\" (node_id_from_pg)"),
        "{notes}"
    );
    let off = text.replace(
        "admin_ip: 10.10.10.10}",
        "admin_ip: 10.10.10.10, node_id_from_pg: false}",
    );
    assert_eq!(json(&off, &[])["notes"], serde_json::json!([]));
}

#[test]
fn dns_disabled_still_publishes_the_names_with_a_note() {
    let text = one("").replace(
        "admin_ip: 10.10.10.10}",
        "admin_ip: 10.10.10.10, dns_enabled: false}",
    );
    let v = json(&text, &[]);
    assert!(
        v["notes"].to_string().contains("dns_enabled is false"),
        "{v}"
    );
    assert!(
        triples(&v, "served")
            .iter()
            .any(|(n, _, _)| n == "pg-x.pigsty.test")
    );
}

#[test]
fn guest_hosts_lines_follow_node_write_etc_hosts() {
    let text = one("").replace(
        "admin_ip: 10.10.10.10}",
        "admin_ip: 10.10.10.10, node_etc_hosts: ['10.10.10.40 db-extra']}",
    );
    let v = json(&text, &[]);
    assert!(triples(&v, "served").contains(&t(
        "db-extra.pigsty.test",
        "10.10.10.40",
        "guest-hosts"
    )));
    let off = text.replace(
        "admin_ip: 10.10.10.10,",
        "admin_ip: 10.10.10.10, node_write_etc_hosts: false,",
    );
    let v = json(&off, &[]);
    assert!(
        !triples(&v, "served")
            .iter()
            .any(|(n, _, _)| n == "db-extra.pigsty.test")
    );
    refused(
        &text.replace("10.10.10.40 db-extra", "10.10.10.40/24 db-extra"),
        &["all.vars.node_etc_hosts[0]", "is a CIDR"],
    );
}

#[test]
fn every_bad_hosts_line_is_listed_at_once() {
    // Two bad lines and a third address out of Barn's range: three problems, each its own pair.
    let text = one("").replace(
        "admin_ip: 10.10.10.10}",
        "admin_ip: 10.10.10.10, node_etc_hosts: ['10.10.10.40/24 a', '10.10.10.41', '10.10.10.3 c']}",
    );
    refused_listing(
        &text,
        &[
            "all.vars.node_etc_hosts[0]: the hosts line \"10.10.10.40/24 a\"",
            "all.vars.node_etc_hosts[1]: the hosts line \"10.10.10.41\" has no name",
            "10.10.10.3 for \"c\" is in .2-.8",
        ],
    );
}

#[test]
fn load_keeps_the_category_and_its_diff_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let file = write(dir.path(), "pigsty.yml", &stock("meta.yml"));
    let r = load(&state, &file, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.starts_with("view: literal host-access\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("+ pg-meta.pigsty.test 10.10.10.10 (service-access)\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("+ sss.pigsty 10.10.10.10 (guest-hosts)\n"),
        "{}",
        r.stdout
    );
    // A second cluster added to the config: the diff names the new names' category.
    let grown = stock("meta.yml").replace(
        "    infra:\n",
        "    pg-test:\n      hosts: { 10.10.10.11: { pg_seq: 1, pg_role: primary } }\n      vars: { pg_cluster: pg-test }\n    infra:\n",
    );
    write(dir.path(), "pigsty.yml", &grown);
    let r = load(&state, &file, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("+ pg-test.pigsty.test 10.10.10.11 (service-access)\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("+ pg-test-1.pigsty.test 10.10.10.11 (vm-identity)\n"),
        "{}",
        r.stdout
    );
    // The generation keeps each source with its category: export shows them.
    let r = run(&[
        "export",
        "--format",
        "json",
        "--state-dir",
        state.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("service-access: all.children.pg-test.hosts[10.10.10.11].pg_role (PG cluster, pg_dns_target auto: primary)"),
        "{}",
        r.stdout
    );
}

/// `load --json` gives each added or changed name of its diff the category the text diff names; a
/// removed name has none there either (the diff base keeps no sources), and a projection's changes
/// stay without one, as before.
#[test]
fn load_json_diff_gives_each_change_its_category() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let file = write(dir.path(), "pigsty.yml", &stock("meta.yml"));
    let diff_in = |state: &std::path::Path, text: &str| -> serde_json::Value {
        write(dir.path(), "pigsty.yml", text);
        let r = load(state, &file, &["--json"]);
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
        v["diff"].clone()
    };
    let diff = |text: &str| diff_in(&state, text);
    let change = |c: &str, name: &str, old: Option<&str>, new: Option<&str>| {
        let mut o = serde_json::json!({"name": name});
        if !c.is_empty() {
            o["category"] = c.into();
        }
        if let Some(a) = old {
            o["old"] = a.into();
        }
        if let Some(a) = new {
            o["new"] = a.into();
        }
        o
    };
    let d = diff(&stock("meta.yml"));
    let meta = |n: &str, c: &str| change(c, n, None, Some("10.10.10.10"));
    assert_eq!(
        d["added"],
        serde_json::json!([
            meta("adm.pigsty", "infra-dns"),
            meta("api.pigsty", "infra-dns"),
            meta("cli.pigsty", "infra-dns"),
            meta("ddl.pigsty", "infra-dns"),
            meta("i.pigsty", "infra-dns"),
            meta("m.pigsty", "infra-dns"),
            meta("pg-meta-1.pigsty.test", "vm-identity"),
            meta("pg-meta.pigsty.test", "service-access"),
            meta("sss.pigsty", "guest-hosts"),
            meta("supa.pigsty", "infra-dns"),
        ]),
        "{d}"
    );
    let grown = |at: &str| {
        stock("meta.yml").replace(
            "    infra:\n",
            &format!("    pg-test:\n      hosts: {{ {at}: {{ pg_seq: 1, pg_role: primary }} }}\n      vars: {{ pg_cluster: pg-test }}\n    infra:\n"),
        )
    };
    let d = diff(&grown("10.10.10.11"));
    assert_eq!(
        d["added"],
        serde_json::json!([
            change(
                "vm-identity",
                "pg-test-1.pigsty.test",
                None,
                Some("10.10.10.11")
            ),
            change(
                "service-access",
                "pg-test.pigsty.test",
                None,
                Some("10.10.10.11")
            ),
        ]),
        "{d}"
    );
    let d = diff(&grown("10.10.10.12"));
    assert_eq!(
        d["changed"],
        serde_json::json!([
            change(
                "vm-identity",
                "pg-test-1.pigsty.test",
                Some("10.10.10.11"),
                Some("10.10.10.12")
            ),
            change(
                "service-access",
                "pg-test.pigsty.test",
                Some("10.10.10.11"),
                Some("10.10.10.12")
            ),
        ]),
        "{d}"
    );
    let d = diff(&stock("meta.yml"));
    assert_eq!(
        d["removed"],
        serde_json::json!([
            change("", "pg-test-1.pigsty.test", Some("10.10.10.12"), None),
            change("", "pg-test.pigsty.test", Some("10.10.10.12"), None),
        ]),
        "{d}"
    );
    // A projection's diff is as it was: no category.
    let d = diff_in(
        &dir.path().join("state2"),
        "all:\n  hosts: {10.10.10.10: {nodename: meta}}\n  vars:\n    vm_hosts: [{address: 10.10.10.11, names: [pg-meta]}]\n",
    );
    assert_eq!(
        d["added"],
        serde_json::json!([
            change("", "meta.pigsty.test", None, Some("10.10.10.10")),
            change("", "pg-meta.pigsty.test", None, Some("10.10.10.11")),
        ]),
        "{d}"
    );
}

/// Both found by the Ansible differential (tests/it/pigsty_ansible.rs).
#[test]
fn what_ansible_reads_otherwise_is_refused() {
    // A plain `no` is false to Ansible (YAML 1.1), the string "no" to this reader.
    refused(
        &one("pg_dns_suffix: no"),
        &["all.children.pg-x.vars.pg_dns_suffix", "\"no\"", "YAML 1.1"],
    );
    // Quoted, both read the string; the reader keeps no quotes, so it is refused too, and the
    // message says so rather than claim Ansible reads a boolean.
    let r = refused(&one("pg_dns_suffix: 'yes'"), &["\"yes\"", "written plain"]);
    assert!(r.stderr.contains("quoted"), "{}", r.stderr);
    assert!(!r.stderr.contains("\" ,"), "{}", r.stderr);
    refused(
        &one("").replace("pg_seq: 2,", "pg_seq: 010,"),
        &["pg_seq", "\"010\""],
    );
    // A group name at two places is one group to Ansible, its vars applying at both.
    refused(
        &one("").replace(
            "  vars: {admin_ip",
            "    g: {hosts: {10.10.10.10: {}}}\n    infra2: {children: {g: {vars: {node_etc_hosts: []}}}}\n  vars: {admin_ip",
        ),
        &["all.children.infra2.children.g", "repeats the group \"g\" of all.children.g"],
    );
}

/// Every node renders the hosts lines it inherits, so a file could make the view grow with hosts times
/// lines: a list shared by many nodes is read once per admin_ip, and past twice the served-name limit
/// the derivation stops.
#[test]
fn hosts_lines_shared_by_many_nodes_stay_bounded() {
    let names: Vec<String> = (0..2_100).map(|i| format!("h{i}")).collect();
    let line = format!("'${{admin_ip}} {}'", names.join(" "));
    let mut text =
        String::from("all:\n  children:\n    infra: {hosts: {10.10.10.10: {}}}\n  hosts:\n");
    for h in 10..110 {
        text.push_str(&format!("    10.10.10.{h}: {{admin_ip: 10.10.10.{h}}}\n"));
    }
    text.push_str(&format!("  vars:\n    node_etc_hosts: [{line}]\n"));
    refused(&text, &["derives more than 200000 names"]);
    // One admin_ip for all: the list is rendered once, 2,100 names served.
    let shared = text.replace(": {admin_ip: 10.10.10.", ": {vm_alias: [], x: 10.10.10.")
        + "    admin_ip: 10.10.10.10\n";
    let r = check_text(&shared);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // The 2,100 shared names, 100 node names and the stock infra records (zone pigsty).
    assert!(r.stdout.contains("served (2207):"), "{}", r.stdout);
    assert!(r.stdout.contains("h2099.pigsty.test"), "{}", r.stdout);
}

#[test]
fn entry_picks_the_infra_node_the_host_uses() {
    // Without the nodes' hosts lines, whose i.pigsty at the other admin_ip would clash.
    let text = one("")
        .replace("admin_ip: 10.10.10.10}", "admin_ip: 10.10.10.10, node_write_etc_hosts: false}")
        .replace(
        "infra: {hosts: {10.10.10.10: {infra_seq: 1}}}",
        "infra: {hosts: {10.10.10.10: {infra_seq: 1}, 10.10.10.11: {infra_seq: 2, admin_ip: 10.10.10.11}}}",
    );
    let r = refused(
        &text,
        &["infra entries 10.10.10.10 and 10.10.10.11 have different admin_ip"],
    );
    assert!(
        r.stderr.contains(
            "next: pick the entry the host uses with --entry 10.10.10.10 (or 10.10.10.11)"
        ),
        "{}",
        r.stderr
    );
    let v = json(&text, &["--entry", "10.10.10.11"]);
    let served = triples(&v, "served");
    assert!(
        served.contains(&t("m.pigsty", "10.10.10.11", "infra-dns")),
        "{served:?}"
    );
    let r = check_text_with(&text, &["--entry", "10.10.10.99"]);
    assert_eq!(r.code, 8, "{}", r.stderr);
    assert!(r.stderr.contains("--entry \"10.10.10.99\" is not an infra node's name or address (the infra group has \"pg-x-1\" at 10.10.10.10, \"pg-x-2\" at 10.10.10.11)"), "{}", r.stderr);
    assert_eq!(
        check_text_with(&text, &["--entry", "10.10.10.11", "--identity-only"]).code,
        2
    );
}

/// `--entry NODE` takes the infra node's name as the view derives it (nodename, else
/// `<pg_cluster>-<pg_seq>`, else `node-<octet>`) as well as its address; a value that is neither is
/// refused naming it (quoted, cut, inert) and the infra group's names and addresses.
#[test]
fn entry_takes_the_node_name_too() {
    let text = one("")
        .replace("admin_ip: 10.10.10.10}", "admin_ip: 10.10.10.10, node_write_etc_hosts: false}")
        .replace(
            "infra: {hosts: {10.10.10.10: {infra_seq: 1}}}",
            "infra: {hosts: {10.10.10.10: {infra_seq: 1}, 10.10.10.11: {infra_seq: 2, admin_ip: 10.10.10.11, nodename: infra-b}, 10.10.10.12: {infra_seq: 3, admin_ip: 10.10.10.12}}}",
        )
        .replace("  vars: {admin_ip", "  hosts: {10.10.10.20: {}}\n  vars: {admin_ip");
    for (entry, admin) in [
        ("pg-x-1", "10.10.10.10"),
        ("infra-b", "10.10.10.11"),
        ("node-12", "10.10.10.12"),
        ("10.10.10.12", "10.10.10.12"),
    ] {
        let v = json(&text, &["--entry", entry]);
        assert!(
            triples(&v, "served").contains(&t("m.pigsty", admin, "infra-dns")),
            "--entry {entry}: {v}"
        );
    }
    // load reads it the same way.
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "pigsty.yml", &text);
    let r = load(
        &dir.path().join("state"),
        &file,
        &["--entry", "infra-b", "--dry-run"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("+ m.pigsty 10.10.10.11"), "{}", r.stdout);
    // A name that is no infra node's (node-20 is a host, not in the infra group), or none at all.
    let candidates = "(the infra group has \"pg-x-1\" at 10.10.10.10, \"infra-b\" at 10.10.10.11, \"node-12\" at 10.10.10.12)";
    for entry in ["node-20", "pg-x-9", "10.10.10.20", ""] {
        let r = check_text_with(&text, &["--entry", entry]);
        assert_eq!(r.code, 8, "--entry {entry:?}: {}", r.stderr);
        let line = r.error_line();
        assert!(
            line.contains(&format!(
                "--entry {entry:?} is not an infra node's name or address {candidates}"
            )),
            "{line}"
        );
        assert!(
            r.stderr.contains("next: give the name or address of one of the infra group's hosts, e.g. --entry 10.10.10.10\n"),
            "{}",
            r.stderr
        );
    }
    // A value full of escapes, and a long one: quoted, escaped and cut.
    let r = check_text_with(&text, &["--entry", &format!("x{ESCAPES}")]);
    assert_eq!(r.code, 8, "{}", r.stderr);
    assert_run_inert("--entry with escapes", &r);
    assert!(
        r.error_line().contains("--entry \"x\\u{1b}]0;OWNED"),
        "{}",
        r.stderr
    );
    let long = "n".repeat(300);
    let r = check_text_with(&text, &["--entry", &long]);
    assert_eq!(r.code, 8, "{}", r.stderr);
    assert!(
        r.error_line().contains(&format!(
            "--entry \"{}\"…(300 bytes) is not",
            "n".repeat(80)
        )),
        "{}",
        r.stderr
    );
    // Two infra nodes of one name: the address decides. The repeated node name is listed too.
    let twice = text.replace("nodename: infra-b", "nodename: pg-x-1");
    let r = check_text_with(&twice, &["--entry", "pg-x-1"]);
    assert_eq!(r.code, 8, "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 4, "{}", r.stderr);
    assert!(
        r.stderr
            .lines()
            .nth(2)
            .unwrap()
            .contains("infra.hosts[10.10.10.11].nodename: \"pg-x-1\" is also the node name from"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .lines()
            .next()
            .unwrap()
            .contains("--entry \"pg-x-1\" names 2 infra nodes (10.10.10.10, 10.10.10.11)"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("next: give its address, e.g. --entry 10.10.10.10\n"),
        "{}",
        r.stderr
    );
    // Each command's help says so.
    for cmd in ["check", "load", "serve"] {
        let r = run(&[cmd, "--help"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let help = r.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            help.contains("by its name (nodename, else <pg_cluster>-<pg_seq>, else node-<last octet>) or its address"),
            "{cmd}: {help}"
        );
    }
}

#[test]
fn a_second_infra_entry_is_read_as_strictly_as_the_first() {
    refused(
        &one("").replace(
            "infra: {hosts: {10.10.10.10: {infra_seq: 1}}}",
            "infra: {hosts: {10.10.10.10: {infra_seq: 1}, 10.10.10.11: {infra_seq: 2, dns_records: ['{{ x }} a']}}}",
        ),
        &["all.children.infra.hosts[10.10.10.11].dns_records", "template"],
    );
}

/// Stock conf/slim.yml has no `infra` group: Pigsty's PG DNS tasks loop over `groups['infra']`, so it
/// writes no DNS record at all. The names are still published for the host, with the same note as
/// `dns_enabled: false`; a config with an infra group gets no such note.
#[test]
fn no_infra_group_still_publishes_the_names_with_a_note() {
    let v = json(&stock("slim.yml"), &[]);
    let notes = v["notes"].to_string();
    assert!(notes.contains("no infra group"), "{notes}");
    assert!(notes.contains("groups['infra']"), "{notes}");
    assert!(
        triples(&v, "served")
            .iter()
            .any(|(n, _, _)| n == "pg-meta.pigsty.test"),
        "{v}"
    );
    let meta = json(&stock("meta.yml"), &[])["notes"].to_string();
    assert!(!meta.contains("no infra group"), "{meta}");
}

/// The address a name has in the view, served or listed (whichever zones are served).
fn address_of(v: &serde_json::Value, name: &str) -> Option<String> {
    ["served", "not_served"]
        .iter()
        .flat_map(|l| triples(v, l))
        .find(|(n, _, _)| n == name)
        .map(|(_, a, _)| a)
}

/// Stock conf/build/dev.yml and build/oss.yml: seven infra nodes, each with its own admin_ip, so each
/// node's /etc/hosts points `i.pigsty` at itself. Only that node reads it (dnsmasq: no-hosts), so once
/// `--entry` picks the node the host asks, `i.pigsty` is that entry's, with a note.
#[test]
fn entry_views_a_name_every_node_points_at_itself_from_the_entry() {
    for f in ["build/dev.yml", "build/oss.yml"] {
        let text = stock(f);
        refused(&text, &["have different admin_ip"]);
        for entry in ["10.10.10.10", "10.10.10.9"] {
            let v = json(&text, &["--entry", entry]);
            assert_eq!(
                address_of(&v, "i.pigsty").as_deref(),
                Some(entry),
                "{f} {entry}: {v}"
            );
            let notes = v["notes"].to_string();
            assert!(
                notes.contains(&format!("with --entry {entry}, \\\"i.pigsty\\\": every node's own /etc/hosts points it at the node itself"))
                    && notes.contains("no-hosts"),
                "{f} {entry}: {notes}"
            );
        }
    }
}

/// A hosts line that points a name elsewhere than its own node is what Pigsty really publishes twice:
/// still refused with `--entry`, and no note without `--entry`'s case.
#[test]
fn entry_still_refuses_a_name_a_node_points_elsewhere() {
    let two = one("").replace(
        "infra: {hosts: {10.10.10.10: {infra_seq: 1}}}",
        "infra: {hosts: {10.10.10.10: {infra_seq: 1}, 10.10.10.11: {infra_seq: 2, admin_ip: 10.10.10.11, node_etc_hosts: ['10.10.10.20 i.pigsty']}}}",
    );
    let r = check_text_with(&two, &["--entry", "10.10.10.10"]);
    assert_eq!(r.code, 8, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("name \"i.pigsty\" maps to both"),
        "{}",
        r.stderr
    );
    // The same two nodes, each pointing at itself only: loads, the entry's address.
    let own = two.replace("node_etc_hosts: ['10.10.10.20 i.pigsty']", "x: 1");
    let v = json(&own, &["--entry", "10.10.10.11"]);
    assert_eq!(
        address_of(&v, "i.pigsty").as_deref(),
        Some("10.10.10.11"),
        "{v}"
    );
    let v = json(&stock("meta.yml"), &[]);
    assert!(!v["notes"].to_string().contains("/etc/hosts"), "{v}");
}
