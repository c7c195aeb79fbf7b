//! The generation-file verifier, `Generation::decode` (what `serve`, `history`, `rollback` and `load`
//! run on every file in `generations/`), on arbitrary bytes.
//!
//! Random bytes almost never get past the self-digest, so every input is tried twice: as it is, and,
//! when it parses as a generation file of either format at all, re-sealed (record digest and
//! self-digest recomputed, canonical bytes re-encoded in its own format), so the content checks behind
//! valid digests are fuzzed too. Checked:
//! - it never panics, and returns within libFuzzer's `-timeout`;
//! - its peak heap stays within `MEMORY_PER_BYTE` × the file size + `MEMORY_BASE`;
//! - an accepted file is canonical: encoding what was decoded gives the same bytes;
//! - a re-sealed file that is accepted decodes to exactly what was sealed;
//! - an accepted generation's records are sorted, unique and lowercase, inside its zone, and its view
//!   (when the SOA/NS encode; the server refuses the rest) answers every record's address.

#![no_main]

use libfuzzer_sys::fuzz_target;
use pigsty_dns::zone::generation::{Generation, record_digest};
use pigsty_dns::zone::view::{Node, ZoneView};
use pigsty_dns_fuzz::peak::{Counting, measure};

#[global_allocator]
static ALLOC: Counting = Counting;

/// Bound on the verifier's peak heap: a small multiple of the file it reads.
const MEMORY_PER_BYTE: usize = 64;
const MEMORY_BASE: usize = 1 << 20;

fuzz_target!(|data: &[u8]| run(data));

fn run(data: &[u8]) {
    let trace = std::env::var_os("PIGSTY_FUZZ_TRACE").is_some();
    let raw = verify(data);
    if let Ok(g) = &raw {
        assert_eq!(g.encode(), data, "an accepted file is not canonical");
        accepted(g);
    }
    let Ok(mut g) = Generation::parse_unverified(data) else {
        if trace {
            eprintln!("raw: {:?}; not a generation file to re-seal", raw.err());
        }
        return;
    };
    g.record_digest = record_digest(&g.zone, g.ttl, &g.soa, &g.ns, &g.records, &g.ptr);
    let bytes = g.encode();
    let resealed = verify(&bytes);
    if let Ok(back) = &resealed {
        assert_eq!(*back, g, "a re-sealed generation decodes to something else");
        accepted(back);
    }
    if trace {
        eprintln!("raw: {:?}; re-sealed: {:?}", raw.err(), resealed.err());
    }
}

fn verify(bytes: &[u8]) -> Result<Generation, String> {
    let (result, peak) = measure(|| Generation::decode(bytes));
    let bound = MEMORY_PER_BYTE * bytes.len() + MEMORY_BASE;
    assert!(
        peak <= bound,
        "the verifier held {peak} bytes for a {}-byte file (bound {bound})",
        bytes.len()
    );
    result
}

fn accepted(g: &Generation) {
    let suffix = format!(".{}", g.zone);
    for pair in g.records.windows(2) {
        assert!(pair[0].name < pair[1].name, "records out of order or twice");
    }
    for r in &g.records {
        assert!(
            r.name == g.zone || r.name.ends_with(&suffix),
            "{} outside {}",
            r.name,
            g.zone
        );
        assert_eq!(
            r.name,
            r.name.to_ascii_lowercase(),
            "a record name not lowercase"
        );
    }
    assert!(g.ttl <= pigsty_dns::zone::generation::MAX_TTL);
    // The server refuses (cleanly) a generation whose SOA or NS names cannot be encoded.
    if let Ok(view) = ZoneView::from_generation(g) {
        assert_eq!(view.serial(), g.serial);
        for r in &g.records {
            assert_eq!(
                view.lookup(&r.name),
                Some(Node::Address(r.address)),
                "{}",
                r.name
            );
        }
    }
}
