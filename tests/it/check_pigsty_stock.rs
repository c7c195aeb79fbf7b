//! Every stock config of pgsty/pigsty v4.5.0 (tests/data/pigsty-conf: the 52 inventories of its `conf/`)
//! through `check`: what the view says about each must be true of the file itself.

use std::path::{Path, PathBuf};

use pigsty_dns::input::yaml::{self, Yaml};

use crate::util::*;

fn stock_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pigsty-conf")
}

/// Every `.yml` under the stock directory, as paths relative to it, sorted.
fn stock_files() -> Vec<String> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, base, out);
            } else if p.extension().is_some_and(|x| x == "yml") {
                out.push(p.strip_prefix(base).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    let mut out = Vec::new();
    walk(&stock_dir(), &stock_dir(), &mut out);
    out.sort();
    out
}

/// The path segments of a source such as `all.children.pg-meta.hosts[10.10.10.10].pg_seq`: a bracket
/// holds a mapping key or a sequence index and may contain dots.
fn segments(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = path.chars();
    while let Some(c) = chars.next() {
        match c {
            '.' => out.push(std::mem::take(&mut cur)),
            '[' => {
                out.push(std::mem::take(&mut cur));
                for d in chars.by_ref() {
                    if d == ']' {
                        break;
                    }
                    cur.push(d);
                }
            }
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out.retain(|s| !s.is_empty());
    out
}

fn key_text(k: &Yaml) -> Option<String> {
    match k {
        Yaml::Str(s) => Some(s.clone()),
        Yaml::Int(i, _) => Some(i.to_string()),
        Yaml::Bool(b, _) => Some(b.to_string()),
        _ => None,
    }
}

/// Whether the path names a value written in the file.
fn resolves(root: &Yaml, path: &str) -> bool {
    let mut at = root;
    for seg in segments(path) {
        at = match at {
            Yaml::Map(entries) => match entries
                .iter()
                .find(|(k, _)| key_text(k).as_deref() == Some(&seg))
            {
                Some((_, v)) => v,
                None => return false,
            },
            Yaml::Seq(items) => match seg.parse::<usize>().ok().and_then(|i| items.get(i)) {
                Some(v) => v,
                None => return false,
            },
            _ => return false,
        };
    }
    true
}

/// The file paths a record's source cites: `category: PATH (note)` or `category: A+B`; a value that is
/// Pigsty's default (`(Pigsty v4.5.0 default)`) is written in no file and cites none.
fn cited_paths(source: &str) -> Vec<String> {
    let body = source.split_once(": ").map_or(source, |(_, b)| b);
    if body.contains(" default)") {
        return Vec::new();
    }
    let path = body.split(" (").next().unwrap_or(body);
    path.split('+').map(str::to_string).collect()
}

#[test]
fn every_source_of_every_stock_config_names_where_the_value_is_written() {
    let files = stock_files();
    assert_eq!(files.len(), 52, "the stock configs: {files:?}");
    let (mut accepted, mut cited, mut wrong) = (0, 0, Vec::new());
    for f in &files {
        let path = stock_dir().join(f);
        let r = run(&["check", "--json", path.to_str().unwrap()]);
        if r.code != 0 {
            continue;
        }
        accepted += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        let root = yaml::parse(&text).unwrap();
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        for list in ["served", "not_served"] {
            for rec in v[list].as_array().unwrap() {
                for s in rec["sources"].as_array().unwrap() {
                    for p in cited_paths(s.as_str().unwrap()) {
                        cited += 1;
                        if !resolves(&root, &p) {
                            wrong.push(format!("{f}: {} cites {p}", rec["name"]));
                        }
                    }
                }
            }
        }
    }
    eprintln!(
        "{accepted} of {} stock configs accepted, {cited} cited paths",
        files.len()
    );
    assert!(accepted >= 40, "only {accepted} accepted");
    assert!(
        cited > 100,
        "only {cited} paths cited: the test reads no sources"
    );
    assert!(
        wrong.is_empty(),
        "{} paths name no value:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn the_path_reader_finds_keys_in_brackets_and_indexes() {
    let root = yaml::parse("all:\n  children:\n    pg-meta:\n      hosts:\n        10.10.10.10: {pg_seq: 1}\n  vars:\n    l: [a, b]\n").unwrap();
    assert!(resolves(
        &root,
        "all.children.pg-meta.hosts[10.10.10.10].pg_seq"
    ));
    assert!(resolves(&root, "all.vars.l[1]"));
    assert!(!resolves(&root, "all.vars.l[2]"));
    assert!(!resolves(
        &root,
        "all.children.infra.hosts[10.10.10.10].pg_role"
    ));
}

/// Issue 37's "done when", over every stock config the view accepts with no flags (an HA template
/// whose PG VIPs are in Barn's reserved .2-.8 retried with them moved, a config of several infra entries
/// with `--entry 10.10.10.10`, as the refusals say): every name
/// Pigsty's roles write is served under Pigsty's own name (a `.pigsty` name as it is, a single label
/// under the first zone), the portal `i.pigsty` among them; nothing of Pigsty's is left unserved.
#[test]
fn every_stock_config_serves_pigstys_names_under_their_own_name() {
    let (mut accepted, mut served_names) = (0, 0);
    for f in stock_files() {
        let text = std::fs::read_to_string(stock_dir().join(&f)).unwrap();
        let mut r = check_text_with(&text, &["--json"]);
        if r.code != 0 {
            let moved = text
                .replace("10.10.10.2/24", "10.10.10.20/24")
                .replace("10.10.10.3/24", "10.10.10.30/24");
            r = check_text_with(&moved, &["--json"]);
        }
        if r.code != 0 && r.stdout.contains("--entry") {
            r = check_text_with(&text, &["--json", "--entry", "10.10.10.10"]);
        }
        if r.code != 0 {
            continue;
        }
        accepted += 1;
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        let ours = |n: &str| n == "pigsty" || n.ends_with(".pigsty") || n.ends_with(".pigsty.test");
        for rec in v["not_served"].as_array().unwrap() {
            let name = rec["name"].as_str().unwrap();
            assert!(
                !ours(name),
                "{f}: {name} ({}) is not served",
                rec["category"]
            );
        }
        let served: Vec<&str> = v["served"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        assert!(served.iter().all(|n| ours(n)), "{f}: {served:?}");
        assert!(served.contains(&"i.pigsty"), "{f}: the portal: {served:?}");
        served_names += served.len();
    }
    eprintln!("{accepted} stock configs accepted, {served_names} names served");
    // All but demo/demo.yml (a dotted nodename) and the three HA templates whose names clash.
    assert_eq!(accepted, 48, "accepted");
}
