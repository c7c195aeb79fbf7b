use std::net::Ipv4Addr;
use std::path::PathBuf;

use super::*;
use crate::dns::name::Zone;
use crate::input::records::{RecordSet, SkippedHost};
use crate::zone::generation::Input;

/// `n` served names (every `drop`-th left out, every `moved`-th at another address), with PTRs,
/// names not served, skipped hosts and sources that JSON must escape.
pub(in crate::commands) fn sample(n: usize, drop: usize, moved: usize, serial: u32) -> Generation {
    let address =
        |i: usize, m: bool| Ipv4Addr::new(10, (i / 250) as u8, u8::from(m), (i % 250) as u8 + 1);
    let records: Vec<Record> = (0..n)
        .filter(|i| i % drop != 0)
        .map(|i| Record {
            name: format!("h{i:06}.pigsty.test"),
            address: address(i, i % moved == 0),
            sources: match i % 4 {
                0 => vec![],
                1 => vec!["/a/b.yml".into()],
                2 => vec!["q\"uote\\back\nline\t\u{1}\u{7f}".into(), "é/ü ✓".into()],
                _ => vec!["x".into(), "y".into(), "z".into()],
            },
        })
        .collect();
    let mut ptr: Vec<Ptr> = records
        .iter()
        .map(|r| Ptr {
            address: r.address,
            name: r.name.clone(),
        })
        .collect();
    ptr.sort_by_key(|p| p.address);
    let set = RecordSet {
        zones: Zone::parse("pigsty.test").unwrap().into(),
        records,
        ptr,
        not_served: (0..n.min(3))
            .map(|i| NotServed {
                name: format!("n{i}.pigsty.test"),
                address: Ipv4Addr::new(192, 168, 0, i as u8),
                reason: format!("reason \"{i}\""),
                sources: vec![format!("/s/{i}")],
            })
            .collect(),
        skipped_hosts: (0..n.min(2))
            .map(|i| SkippedHost {
                address: Ipv4Addr::new(10, 9, 9, i as u8),
                source: format!("/k/{i}"),
            })
            .collect(),
    };
    let input = Input {
        path: "/in/host.yml".into(),
        sha256: "ab".repeat(32),
    };
    Generation::seal_set(set, 30, 5, serial, "2026-12-02T00:00:00Z".into(), input)
}

/// Compares each case (label, output) with `tests/golden/report/NAME`, which holds each output up to
/// 8 KiB whole after a `=== label (N bytes)` line, and a longer one as its length and sha256 (the
/// 3,000-name cases). The files were written from the code that was proven byte-identical to the
/// past versions; `UPDATE_GOLDEN=1` rewrites them.
fn golden(name: &str, cases: &[(String, String)]) {
    let mut text = String::new();
    for (label, out) in cases {
        if out.len() <= 8192 {
            let _ = writeln!(text, "=== {label} ({} bytes)\n{out}", out.len());
        } else {
            let sha = crate::digest::sha256_hex(out.as_bytes());
            let _ = writeln!(text, "=== {label} ({} bytes, sha256 {sha})", out.len());
        }
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/report")
        .join(name);
    if std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()));
    // Case by case first, so a failure names the case rather than printing the whole file.
    for (got, want) in text.split("\n=== ").zip(want.split("\n=== ")) {
        assert_eq!(got, want, "{name} differs from its golden file");
    }
    assert_eq!(text, want, "{name} differs from its golden file");
}

const PREVIOUS: [&str; 4] = ["none", "older", "older without PTRs", "the same"];

#[test]
fn outcome_json_is_the_golden_one() {
    let root = Path::new("/st/d\"ir");
    let path = PathBuf::from("/st/d\"ir/generations/gen-1.json");
    let fields = vec![
        ("live", serde_json::Value::from("live")),
        ("server", serde_json::Value::from("127.0.0.1:5354")),
    ];
    let mut cases = Vec::new();
    for n in [0, 1, 7, 3_000] {
        let new = sample(n, 7, 5, 4);
        let old = sample(n, 3, 11, 3);
        let emptied = Generation {
            ptr: vec![],
            ..sample(n, 2, 3, 2)
        };
        let previous = [None, Some(&old), Some(&emptied), Some(&new)];
        for (previous, label) in previous.into_iter().zip(PREVIOUS) {
            for stored in [true, false] {
                let stored_or_not = if stored {
                    Outcome::Stored {
                        generation: new.clone(),
                        path: path.clone(),
                        previous: previous.map(DiffBase::from),
                    }
                } else {
                    Outcome::WouldStore {
                        generation: new.clone(),
                        previous: previous.map(DiffBase::from),
                    }
                };
                let (mut report, _) = outcome(stored_or_not, root);
                let case = format!("n {n}, previous {label}, stored {stored}");
                cases.push((case.clone(), report.render(true)));
                report.set_json_fields(fields.clone());
                cases.push((format!("{case}, live and server"), report.render(true)));
            }
        }
    }
    golden("outcome.json.txt", &cases);
}

#[test]
fn text_is_the_golden_one() {
    for a in [
        [0, 0, 0, 0],
        [9, 10, 99, 100],
        [255, 254, 199, 1],
        [10, 0, 100, 25],
    ] {
        let a = Ipv4Addr::from(a);
        for width in [0, 15] {
            let mut out = String::new();
            push_address(&mut out, Some(a), width);
            assert_eq!(out, format!("{:width$}", a.to_string()));
        }
    }
    let root = PathBuf::from("/st/gen-1.json");
    let (mut outcomes, mut listings) = (Vec::new(), Vec::new());
    for n in [0, 1, 7, 3_000] {
        let new = sample(n, 7, 5, 4);
        let old = sample(n, 3, 11, 3);
        let previous = [None, Some(&old), Some(&new)];
        for (previous, label) in previous.into_iter().zip(["none", "older", "the same"]) {
            let diff = Diff::between(
                previous.map(|p| p.records.as_slice()).unwrap_or(&[]),
                &new.records,
            )
            .with_ptr(previous.map(|p| p.ptr.as_slice()).unwrap_or(&[]), &new.ptr);
            for path in [None, Some(root.as_path())] {
                outcomes.push((
                    format!("n {n}, previous {label}, stored {}", path.is_some()),
                    outcome_text(&diff, &new, path),
                ));
            }
        }
        let mut out = String::new();
        served(&new.records, &new.not_served, &new.skipped_hosts, &mut out);
        reverse(&new.records, &new.ptr, &mut out);
        listings.push((format!("n {n}"), out));
    }
    golden("outcome.txt", &outcomes);
    golden("served.txt", &listings);
}
