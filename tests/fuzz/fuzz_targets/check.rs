//! `pigsty-dns check` on arbitrary bytes: the YAML reader, the inventory rules and the record rules,
//! through the command itself (`commands::check::run` on a file under `$TMPDIR` holding the input, as a user
//! runs it).
//!
//! Checked:
//! - it never panics, and returns within libFuzzer's `-timeout` (bench/fuzz.sh and .ci/run set it);
//! - its peak heap stays within `MEMORY_PER_BYTE` × the input size, plus `LOOKAHEAD_PER_BYTE` × the
//!   part of it the YAML parser may read ahead (`yaml::MAX_LOOKAHEAD`), plus `MEMORY_BASE` (counted by
//!   the allocator, so the bound is exact, not an RSS estimate);
//! - a refusal is an input error (exit 3) naming the file, never a runtime or usage error;
//! - where the one-pass block reader reads the document, the full YAML reader reads it to the same tree;
//! - what `check` accepts, the server can serve: its generation encodes, passes the generation verifier
//!   (`Generation::decode`) unchanged, and builds a zone view that answers every record's address.

#![no_main]

use std::path::PathBuf;
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use pigsty_dns::commands::check;
use pigsty_dns::defaults;
use pigsty_dns::error::Class;
use pigsty_dns::input::records::RecordSet;
use pigsty_dns::input::{inventory, yaml};
use pigsty_dns::zone::generation::{Generation, Input};
use pigsty_dns::zone::view::{Node, ZoneView};
use pigsty_dns_fuzz::peak::{Counting, measure};
use pigsty_dns_fuzz::zones;

#[global_allocator]
static ALLOC: Counting = Counting;

/// The bound on `check`'s peak heap: a small multiple of the input, as a valid zone needs (the densest
/// valid shapes measure about 30 bytes a byte)...
const MEMORY_PER_BYTE: usize = 64;
/// ...plus the parser's token queue over what it reads ahead (about 230 bytes a byte for `[[a,a,...]]`).
const LOOKAHEAD_PER_BYTE: usize = 256;
/// Room for the fixed costs and the alias slack of `yaml::node_budget` (16,384 nodes).
const MEMORY_BASE: usize = 4 << 20;

static FILE: LazyLock<PathBuf> = LazyLock::new(|| {
    let dir = std::env::temp_dir().join(format!("pigsty-dns-fuzz-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir.join("host-names.yml")
});

fuzz_target!(|data: &[u8]| run(data));

fn run(data: &[u8]) {
    if let Some(fast) = std::str::from_utf8(data).ok().and_then(yaml::block_subset) {
        let text = std::str::from_utf8(data).unwrap_or_default();
        let full = yaml::full(text)
            .unwrap_or_else(|e| panic!("the full reader refuses what the block reader reads: {e}"));
        assert_eq!(
            format!("{fast:?}"),
            format!("{full:?}"),
            "the readers disagree"
        );
    }
    let zone = zones::zone();
    std::fs::write(&*FILE, data).expect("the input file is written");
    let (result, peak) = measure(|| {
        check::run(&FILE, &zone, inventory::Reading::Auto)
            .map(|report| (report.render(false), report.render(true)))
    });
    let bound = MEMORY_PER_BYTE * data.len()
        + LOOKAHEAD_PER_BYTE * data.len().min(yaml::MAX_LOOKAHEAD)
        + MEMORY_BASE;
    if std::env::var_os("PIGSTY_FUZZ_PEAK").is_some() {
        eprintln!(
            "peak {peak} bytes for {} input bytes ({}x)",
            data.len(),
            peak / data.len().max(1)
        );
    }
    assert!(
        peak <= bound,
        "check held {peak} bytes for a {}-byte input (bound {bound})",
        data.len()
    );
    match result {
        Err(e) => {
            assert_eq!(e.class, Class::Invalid, "not an input error: {e:?}");
            assert!(
                e.message.contains("host-names.yml"),
                "does not name the file: {}",
                e.message
            );
            assert!(!e.next.is_empty(), "no next: line");
        }
        Ok((text, json)) => {
            assert!(text.contains("valid for zone"));
            assert!(
                json.contains("\"valid\": true") || json.contains("\"valid\":true"),
                "{json}"
            );
            servable(std::str::from_utf8(data).expect("check accepted non-UTF-8"));
        }
    }
}

/// Seals the accepted input as `load` would and checks that the verifier and the server take it.
fn servable(text: &str) {
    let zone = zones::zone();
    let inv = inventory::parse(text).expect("check accepted it");
    let set = RecordSet::build(&inv, &zone).expect("check accepted it");
    let g = Generation::seal(
        &set,
        defaults::TTL,
        defaults::NEGATIVE_TTL,
        1,
        "2026-01-01T00:00:00Z".into(),
        Input {
            path: "/fuzz/host-names.yml".into(),
            sha256: "0".repeat(64),
        },
    );
    let back = Generation::decode(&g.encode())
        .unwrap_or_else(|e| panic!("the verifier refuses what check accepts: {e}"));
    assert_eq!(back, g, "the generation does not round-trip");
    let view = ZoneView::from_generation(&g)
        .unwrap_or_else(|e| panic!("the server refuses what check accepts: {e}"));
    for r in &g.records {
        assert_eq!(
            view.lookup(&r.name),
            Some(Node::Address(r.address)),
            "{}",
            r.name
        );
    }
    // Forward confirmation: every PTR target has an A back to its address, through the served view.
    for p in &g.ptr {
        assert_eq!(
            view.lookup(&p.name),
            Some(Node::Address(p.address)),
            "PTR {} -> {}",
            p.address,
            p.name
        );
    }
    assert_eq!(
        view.reverse().map(|r| r.ptr_count()),
        (!g.ptr.is_empty()).then_some(g.ptr.len()),
        "one reverse-zone slot per PTR"
    );
}
