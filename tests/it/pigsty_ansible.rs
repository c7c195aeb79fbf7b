//! Real Ansible as the oracle for variables (issue 31): for the stock Pigsty configs and a few hundred
//! generated inventories (random group trees, the same group name twice, conflicting values at equal
//! and unequal depths, host vars in several groups, merge keys, YAML 1.1 spellings), every variable
//! the host-access view reads is exactly `ansible-inventory -i FILE --list`'s merged value and every
//! host is in the same groups, or the file is refused. Needs ansible-core (`pip install ansible-core`,
//! as .ci/run does); runs only under PIGSTY_DNS_E2E=1, where a missing ansible-inventory is a failure.
//! PIGSTY_DNS_ANSIBLE_CASES sets how many inventories are generated (200).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use pigsty_dns::input::inventory::pigsty::{VIEW_KEYS, merged_vars};

use crate::util::e2e;

/// Ansible's merged view: host → (groups, the VIEW_KEYS it sets).
type Oracle = BTreeMap<String, (BTreeSet<String>, serde_json::Map<String, serde_json::Value>)>;

fn ansible(file: &Path) -> Result<Oracle, String> {
    let out = Command::new("ansible-inventory")
        .arg("-i")
        .arg(file)
        .arg("--list")
        .env("ANSIBLE_INVENTORY_UNPARSED_FAILED", "true")
        .env("ANSIBLE_INVENTORY_ENABLED", "yaml")
        .env("ANSIBLE_LOCALHOST_WARNING", "false")
        .output()
        .map_err(|e| format!("ansible-inventory: {e} (pip install ansible-core)"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("ansible json: {e}"))?;
    let mut groups: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    // Each group's own hosts, then the hosts of its children, transitively.
    let obj = v.as_object().ok_or("not an object")?;
    fn hosts_of(
        obj: &serde_json::Map<String, serde_json::Value>,
        g: &str,
        depth: usize,
    ) -> BTreeSet<String> {
        let mut set = BTreeSet::new();
        if depth > 70 {
            return set;
        }
        if let Some(h) = obj.get(g).and_then(|g| g["hosts"].as_array()) {
            set.extend(h.iter().filter_map(|h| h.as_str().map(str::to_string)));
        }
        if let Some(c) = obj.get(g).and_then(|g| g["children"].as_array()) {
            for c in c.iter().filter_map(|c| c.as_str()) {
                set.extend(hosts_of(obj, c, depth + 1));
            }
        }
        set
    }
    for g in obj
        .keys()
        .filter(|g| !["_meta", "all", "ungrouped"].contains(&g.as_str()))
    {
        for h in hosts_of(obj, g, 0) {
            groups.entry(h).or_default().insert(g.clone());
        }
    }
    let mut oracle = Oracle::new();
    for (h, vars) in v["_meta"]["hostvars"].as_object().into_iter().flatten() {
        let vars = vars
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| VIEW_KEYS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        oracle.insert(h.clone(), (groups.remove(h).unwrap_or_default(), vars));
    }
    // Hosts with no variables at all are only in the groups' lists.
    for (h, g) in groups {
        oracle.insert(h, (g, serde_json::Map::new()));
    }
    Ok(oracle)
}

/// `None` when the view refuses the file; else the same shape as [`ansible`]'s.
fn ours(text: &str) -> Option<Oracle> {
    let hosts = merged_vars(text).ok()?;
    Some(
        hosts
            .into_iter()
            .map(|h| {
                (
                    h.address.to_string(),
                    (h.groups.into_iter().collect(), h.vars),
                )
            })
            .collect(),
    )
}

/// A small deterministic generator (xorshift64*), so a failure names a case that can be rerun.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

const GROUPS: &[&str] = &[
    "infra", "pg-a", "pg-b", "minio", "etcd", "g1", "g2", "g3", "g4",
];
const KEYS: &[&str] = &[
    "pg_cluster",
    "pg_seq",
    "pg_role",
    "pg_dns_target",
    "pg_dns_suffix",
    "pg_vip_enabled",
    "vip_enabled",
    "node_cluster",
    "nodename",
    "admin_ip",
    "dns_records",
    "infra_portal",
    "node_etc_hosts",
    "minio_seq",
    "node_id_from_pg",
];
/// Values as written: the same value spelled differently, lists and mappings...
const VALUES: &[&str] = &[
    "a",
    "b",
    "'a'",
    "\"b\"",
    "1",
    "2",
    "'1'",
    "1.0",
    "true",
    "false",
    "True",
    "''",
    "primary",
    "10.10.10.10",
    "10.10.10.10/24",
    "[x, y]",
    "['${admin_ip} i.pigsty']",
    "{home: {domain: i.pigsty}}",
    "{a: 1, b: [2, 3]}",
];
/// ... and, less often, YAML 1.1 spellings Ansible reads otherwise than YAML 1.2 (yes, on, 010,
/// 0x1f, 1_000, ~, 1e3).
const ODD_VALUES: &[&str] = &[
    "010", "0x1f", "1_000", "1e3", "yes", "no", "on", "Off", "~", "null", "'no'",
];

struct Gen {
    rng: Rng,
    out: String,
    anchors: usize,
}

impl Gen {
    fn vars(&mut self) -> String {
        let n = self.rng.below(4);
        let mut parts: Vec<String> = Vec::new();
        if self.anchors > 0 && self.rng.chance(15) {
            parts.push(format!("<<: *v{}", self.rng.below(self.anchors)));
        }
        for _ in 0..n {
            let k = self.rng.pick(KEYS);
            if parts.iter().any(|p| p.starts_with(&format!("{k}:"))) {
                continue;
            }
            let value = if self.rng.chance(8) {
                self.rng.pick(ODD_VALUES)
            } else {
                self.rng.pick(VALUES)
            };
            parts.push(format!("{k}: {value}"));
        }
        let anchor = if self.rng.chance(20) {
            self.anchors += 1;
            format!("&v{} ", self.anchors - 1)
        } else {
            String::new()
        };
        format!("{anchor}{{{}}}", parts.join(", "))
    }

    fn group(&mut self, indent: usize, depth: usize) {
        let pad = " ".repeat(indent);
        if self.rng.chance(70) {
            let v = self.vars();
            self.out.push_str(&format!("{pad}vars: {v}\n"));
        }
        if depth > 0 && self.rng.chance(80) {
            self.out.push_str(&format!("{pad}hosts:\n"));
            let mut used = BTreeSet::new();
            for _ in 0..=self.rng.below(3) {
                let h = 10 + self.rng.below(4);
                if !used.insert(h) {
                    continue;
                }
                let v = if self.rng.chance(50) {
                    self.vars()
                } else {
                    "{}".into()
                };
                self.out.push_str(&format!("{pad}  10.10.10.{h}: {v}\n"));
            }
        }
        if depth < 3 && self.rng.chance(if depth == 0 { 100 } else { 35 }) {
            self.out.push_str(&format!("{pad}children:\n"));
            let mut used = BTreeSet::new();
            for _ in 0..=self.rng.below(3) {
                let g = self.rng.pick(GROUPS);
                if !used.insert(g) {
                    continue;
                }
                self.out.push_str(&format!("{pad}  {g}:\n"));
                self.group(indent + 4, depth + 1);
            }
        }
    }
}

fn generated(seed: u64) -> String {
    let mut g = Gen {
        rng: Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1),
        out: "all:\n".into(),
        anchors: 0,
    };
    g.group(2, 0);
    g.out
}

/// Compares one file; `Ok(true)` when the view read it, `Ok(false)` when it refused it.
fn compare(dir: &Path, name: &str, text: &str) -> Result<bool, String> {
    let Some(mine) = ours(text) else {
        return Ok(false);
    };
    let file = dir.join(name);
    std::fs::write(&file, text).map_err(|e| e.to_string())?;
    let theirs = ansible(&file)?;
    if mine != theirs {
        for (h, m) in &mine {
            let t = theirs.get(h);
            if t != Some(m) {
                return Err(format!(
                    "{name}: host {h} differs\n  ours:    {m:?}\n  ansible: {t:?}\n--- file:\n{text}"
                ));
            }
        }
        return Err(format!(
            "{name}: hosts differ: ours {:?}, ansible {:?}\n{text}",
            mine.keys(),
            theirs.keys()
        ));
    }
    Ok(true)
}

#[test]
fn every_variable_the_view_reads_is_ansibles_or_the_file_is_refused() {
    if !e2e() {
        eprintln!("skipped: set PIGSTY_DNS_E2E=1 (needs ansible-core)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let stock = format!("{}/tests/data/pigsty-conf", env!("CARGO_MANIFEST_DIR"));
    for f in ["meta.yml", "ha/trio.yml", "ha/full.yml", "ha/dual.yml"] {
        let text = std::fs::read_to_string(format!("{stock}/{f}")).unwrap();
        let read = compare(dir.path(), &f.replace('/', "-"), &text).unwrap();
        assert!(read, "stock {f} is read");
    }
    let cases: u64 = std::env::var("PIGSTY_DNS_ANSIBLE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    // Two workers: each case is one ansible-inventory process (about a second).
    let results: Vec<Result<bool, String>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..2u64)
            .map(|w| {
                let dir = dir.path();
                s.spawn(move || {
                    (0..cases)
                        .filter(|c| c % 2 == w)
                        .map(|c| compare(dir, &format!("case-{c}.yml"), &generated(c)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    let failures: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    let read = results.iter().filter(|r| matches!(r, Ok(true))).count();
    eprintln!(
        "{} cases: {read} read and agreeing with Ansible, {} refused",
        results.len(),
        results.len() - read - failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} disagree; first:\n{}",
        failures.len(),
        failures[0]
    );
    // The generator must exercise both outcomes, or the test proves nothing.
    assert!(
        read >= results.len() / 5,
        "only {read} of {} read",
        results.len()
    );
    assert!(read < results.len(), "nothing refused");
}

/// A tree of `depth` nested groups (random names) with a host in each, whose deepest group takes as
/// a child one of its ancestors, itself, or `all`: Ansible refuses each ("recursive dependency loop",
/// "can't add group to itself").
fn looped(seed: u64) -> String {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let depth = 1 + rng.below(5);
    let names: Vec<String> = (0..depth)
        .map(|i| format!("g{i}x{}", rng.below(100)))
        .collect();
    let mut out = String::from("all:\n  children:\n");
    let mut pad = String::from("    ");
    for (i, n) in names.iter().enumerate() {
        out.push_str(&format!(
            "{pad}{n}:\n{pad}  hosts: {{10.10.10.{}: {{}}}}\n",
            10 + i
        ));
        out.push_str(&format!("{pad}  children:\n"));
        pad.push_str("    ");
    }
    let back = match rng.below(depth + 1) {
        0 => "all".to_string(),
        k => names[k - 1].clone(),
    };
    out.push_str(&format!("{pad}{back}: {{}}\n"));
    out
}

#[test]
fn loops_of_groups_and_all_as_a_child_are_refused_as_ansible_refuses_them() {
    if !e2e() {
        eprintln!("skipped: set PIGSTY_DNS_E2E=1 (needs ansible-core)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for seed in 0..24 {
        let text = looped(seed);
        let file = dir.path().join(format!("loop-{seed}.yml"));
        std::fs::write(&file, &text).unwrap();
        let theirs = ansible(&file);
        assert!(theirs.is_err(), "Ansible read it:\n{text}");
        assert!(
            merged_vars(&text).is_err(),
            "the host-access view read it:\n{text}"
        );
        let r = crate::util::run(&["check", "--identity-only", file.to_str().unwrap()]);
        assert_eq!(
            r.code, 8,
            "the projection view read it:\n{text}\n{}",
            r.stdout
        );
        let line = r.error_line();
        assert!(
            [
                "recursive dependency loop",
                "child of itself",
                "group all under"
            ]
            .iter()
            .any(|w| line.contains(w)),
            "{line}"
        );
    }
}

/// Tags, generated: on a value the view reads or on a collection, `!!seq`/`!!map` on the other kind,
/// an unknown local tag, `!vault`. Ansible refuses the file or reads no plain value there; so do we.
#[test]
fn tags_are_refused_where_ansible_refuses_them_or_reads_no_plain_value() {
    if !e2e() {
        eprintln!("skipped: set PIGSTY_DNS_E2E=1 (needs ansible-core)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x5eed);
    // Keys the projection view (what `check` reads this file as) reads.
    let keys = ["nodename", "vm_alias"];
    for case in 0..16 {
        let key = keys[rng.below(keys.len())];
        let (tagged, plain_refusal) = match rng.below(4) {
            0 => (format!("{key}: !vault v1"), false),
            1 => (format!("{key}: !x{case} v1"), true),
            2 => (format!("{key}: !!seq {{a: 1}}"), true),
            _ => (format!("{key}: !!map [a]"), true),
        };
        let text = format!(
            "all:\n  children:\n    g{case}:\n      hosts: {{10.10.10.10: {{{tagged}}}}}\n"
        );
        let file = dir.path().join(format!("tag-{case}.yml"));
        std::fs::write(&file, &text).unwrap();
        match ansible(&file) {
            Err(_) => assert!(
                plain_refusal,
                "Ansible refused what we expected it to read:\n{text}"
            ),
            // Read: the value is Ansible's encrypted object, not the text.
            Ok(o) => {
                let vars = &o["10.10.10.10"].1;
                assert!(
                    vars.get(key)
                        .is_none_or(|v| v.get("__ansible_vault").is_some()),
                    "{text}\n{vars:?}"
                );
            }
        }
        let r = crate::util::run(&["check", file.to_str().unwrap()]);
        assert_eq!(r.code, 8, "we read it:\n{text}\n{}", r.stdout);
    }
}
