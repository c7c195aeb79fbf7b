//! A sealed generation: the records of one successful `load`, with its canonical encoding and its two
//! digests. A generation is immutable; a change is a new generation.
//!
//! Format 2 (written now) is a pretty JSON header, one line per record and per PTR, and a last line
//! with the self-digest, which is the sha256 of every byte before that line:
//!
//! ```text
//! {
//!   "format": 2,
//!   "zone": "pigsty.test",
//!   ...
//!   "record_lines": 2,
//!   "ptr_lines": 1,
//!   "sources": [
//!     "all.hosts[10.10.10.10].nodename",
//!     "all.vars.vm_hosts[0].names"
//!   ],
//!   ...
//!   "record_digest": "518e…"
//! }
//! a meta 10.10.10.10 0
//! a n9-0 10.10.10.9 1[0]
//! ptr 10.10.10.10 meta
//! self_digest cf26…
//! ```
//!
//! Names are relative to the zone as in a zone file (`@` is the apex); a source is an entry of the
//! header's `sources` (in order of first use) and, when the source ended in a list index, that index:
//! `1[0]` is `all.vars.vm_hosts[0].names[0]`. The sources verbatim were about 30 of a line's 68 bytes
//! and the zone suffix 12; so written, 100,000 names take 3.1–3.4 MB instead of 6.8–7.1.
//!
//! `head -n -1 FILE | sha256sum` checks the self-digest and `grep` finds a name. It is verified by one hash over
//! the raw bytes before anything is parsed, then parsed in one pass that accepts exactly the bytes the
//! encoder writes. Format 1 (one pretty JSON document, [`Sealed`]) is still read and re-encoded byte for
//! byte, so older generations stay listed, served and restorable.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::name::{self, Zone};
use crate::records::{NotServed, Ptr, Record, RecordSet, SkippedHost};
use lines::SourceLines;

/// Version of the on-disk generation format written now; a reader refuses any but this and [`FORMAT_JSON`].
pub const FORMAT: u32 = 2;
/// The first format, one pretty JSON document; still read, never written for a new generation.
pub const FORMAT_JSON: u32 = 1;
/// TTLs are capped at one day: a sandbox name should never be cached for longer.
pub const MAX_TTL: u32 = 86_400;
/// JSON strings (keys included) in one generation file. 100,000 names with their sources need well
/// under a million; the bound is checked on the raw bytes before anything is parsed, so a crafted file
/// of millions of tiny strings is refused without allocating for them.
pub const MAX_STRINGS: usize = 3_000_000;

/// The SOA and NS settings sealed into a generation (RFC 1035 §3.3.13).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Soa {
    pub mname: String,
    pub rname: String,
    pub refresh: u32,
    pub retry: u32,
    pub expire: u32,
    /// RFC 2308: the negative-caching TTL.
    pub minimum: u32,
}

impl Soa {
    pub fn for_zone(zone: &Zone, negative_ttl: u32) -> Soa {
        Soa {
            mname: "localhost.".into(),
            rname: format!("hostmaster.{zone}."),
            refresh: 3600,
            retry: 900,
            expire: 604_800,
            minimum: negative_ttl,
        }
    }
}

/// Where the records came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The input file as given (absolute), or a description such as `rollback of serial 3`.
    pub path: String,
    /// sha256 of the input file's bytes (for a rollback: of the generation it restores).
    pub sha256: String,
}

/// The body of a generation file. Field order is the canonical order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Generation {
    pub format: u32,
    pub zone: String,
    pub serial: u32,
    /// RFC 3339, UTC, seconds.
    pub created: String,
    pub input: Input,
    /// TTL of every served record and of the SOA and NS.
    pub ttl: u32,
    pub soa: Soa,
    pub ns: Vec<String>,
    /// Sorted by name; names lowercase, fully qualified, without the trailing dot.
    pub records: Vec<Record>,
    /// The reverse zone's PTRs, sorted by address. Absent in generations sealed before reverse zones
    /// existed, so those files still re-encode to their exact bytes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ptr: Vec<Ptr>,
    pub not_served: Vec<NotServed>,
    pub skipped_hosts: Vec<SkippedHost>,
    /// sha256 over the served data only (see [`record_digest`]).
    pub record_digest: String,
}

/// A generation file: the body plus its self-digest over the canonical bytes of the body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sealed {
    pub generation: Generation,
    pub self_digest: String,
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(digest: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(64);
    for b in digest {
        let _ = write!(s, "{b:02x}");
    }
    s
}

pub fn sha256_of(bytes: &[u8]) -> String {
    sha256_hex(bytes)
}

/// The record digest covers exactly what a client can see: zone, TTLs, SOA/NS settings and every
/// name → address pair and every address → name PTR. Sources and comments are not served, so they do
/// not change it. Without PTRs the text is what it was before reverse zones, so old digests still hold.
pub fn record_digest(
    zone: &str,
    ttl: u32,
    soa: &Soa,
    ns: &[String],
    records: &[Record],
    ptr: &[Ptr],
) -> String {
    let mut h = Sha256::new();
    let mut text = format!(
        "pigsty-dns records v1\nzone {zone}\nttl {ttl}\nsoa {} {} {} {} {} {}\n",
        soa.mname, soa.rname, soa.refresh, soa.retry, soa.expire, soa.minimum
    )
    .into_bytes();
    for n in ns {
        text.extend_from_slice(b"ns ");
        text.extend_from_slice(n.as_bytes());
        text.push(b'\n');
    }
    // Streamed into the hash through one small buffer: no copy of the whole text.
    let mut flush = |text: &mut Vec<u8>, force: bool| {
        if force || text.len() > 60 * 1024 {
            h.update(&text[..]);
            text.clear();
        }
    };
    for r in records {
        text.extend_from_slice(b"a ");
        text.extend_from_slice(r.name.as_bytes());
        text.push(b' ');
        push_ipv4(&mut text, r.address);
        text.push(b'\n');
        flush(&mut text, false);
    }
    for p in ptr {
        text.extend_from_slice(b"ptr ");
        push_ipv4(&mut text, p.address);
        text.push(b' ');
        text.extend_from_slice(p.name.as_bytes());
        text.push(b'\n');
        flush(&mut text, false);
    }
    flush(&mut text, true);
    hex(&h.finalize())
}

/// `a.b.c.d` in decimal, as `Ipv4Addr`'s `Display` writes it, without the formatting machinery.
pub(crate) fn push_ipv4(out: &mut Vec<u8>, a: std::net::Ipv4Addr) {
    for (i, o) in a.octets().into_iter().enumerate() {
        if i > 0 {
            out.push(b'.');
        }
        if o >= 100 {
            out.push(b'0' + o / 100);
        }
        if o >= 10 {
            out.push(b'0' + o / 10 % 10);
        }
        out.push(b'0' + o % 10);
    }
}

impl Generation {
    /// Seals a validated record set. The serial is chosen by the store.
    pub fn seal(
        set: &RecordSet,
        ttl: u32,
        negative_ttl: u32,
        serial: u32,
        created: String,
        input: Input,
    ) -> Generation {
        Generation::seal_set(set.clone(), ttl, negative_ttl, serial, created, input)
    }

    /// [`Generation::seal`] of a set the caller is done with: its records move, not copied.
    pub fn seal_set(
        set: RecordSet,
        ttl: u32,
        negative_ttl: u32,
        serial: u32,
        created: String,
        input: Input,
    ) -> Generation {
        let soa = Soa::for_zone(&set.zone, negative_ttl);
        let ns = vec!["localhost.".to_string()];
        let digest = record_digest(set.zone.as_str(), ttl, &soa, &ns, &set.records, &set.ptr);
        Generation {
            format: FORMAT,
            zone: set.zone.to_string(),
            serial,
            created,
            input,
            ttl,
            soa,
            ns,
            records: set.records,
            ptr: set.ptr,
            not_served: set.not_served,
            skipped_hosts: set.skipped_hosts,
            record_digest: digest,
        }
    }

    /// The canonical file bytes in the generation's own format: format 1 as pretty JSON of [`Sealed`]
    /// with a final newline, anything else in the line format of this module's header. Deterministic
    /// because every collection in a generation is a sorted `Vec` and fields are written in a fixed order.
    pub fn encode(&self) -> Vec<u8> {
        self.encode_with_digest().0
    }

    /// The file bytes and the self-digest they carry, from one encoding.
    pub(crate) fn encode_with_digest(&self) -> (Vec<u8>, String) {
        if self.format == FORMAT_JSON {
            let digest = self.json_self_digest();
            let sealed = Sealed {
                generation: self.clone(),
                self_digest: digest.clone(),
            };
            (encode_sealed(&sealed), digest)
        } else {
            let mut out = Vec::with_capacity(256 + 64 * (self.records.len() + self.ptr.len()));
            lines::encode_body(self, &mut out);
            let digest = sha256_hex(&out);
            out.extend_from_slice(lines::DIGEST_KEY);
            out.extend_from_slice(digest.as_bytes());
            out.push(b'\n');
            (out, digest)
        }
    }

    pub fn self_digest(&self) -> String {
        if self.format == FORMAT_JSON {
            self.json_self_digest()
        } else {
            self.encode_with_digest().1
        }
    }

    /// Format 1's self-digest: sha256 of the compact JSON of the body.
    fn json_self_digest(&self) -> String {
        // Streamed into the hash: no second copy of a large generation in memory. serde_json cannot
        // fail on these plain types; a failed write would fail every later check anyway.
        let mut h = HashWriter(Sha256::new());
        let _ = serde_json::to_writer(&mut h, self);
        hex(&h.0.finalize())
    }

    /// Parses and fully checks a generation file: format, self-digest, exact canonical bytes, record
    /// digest, and every record against the same rules `load` applies. Returns why when it does not check out.
    pub fn decode(bytes: &[u8]) -> Result<Generation, String> {
        Generation::decode_with_digest(bytes).map(|(g, _)| g)
    }

    /// [`Generation::decode`], and the self-digest the file carries (checked), so a caller that names
    /// files by it need not encode again.
    pub(crate) fn decode_with_digest(bytes: &[u8]) -> Result<(Generation, String), String> {
        Generation::decode_checked(bytes, SourceLines::Keep)
    }

    /// [`Generation::decode_with_digest`], every check included, for a server: a format-2 record's
    /// sources are checked but not kept (they are not served; 100,000 fewer allocations a swap).
    pub(crate) fn decode_to_serve(bytes: &[u8]) -> Result<(Generation, String), String> {
        Generation::decode_checked(bytes, SourceLines::Check)
    }

    fn decode_checked(bytes: &[u8], sources: SourceLines) -> Result<(Generation, String), String> {
        let (g, digest) = if lines::is_json(bytes) {
            decode_json(bytes)?
        } else {
            lines::decode(bytes, true, sources)?
        };
        g.check()?;
        Ok((g, digest))
    }

    /// A generation file read only as `load`'s base for its unchanged check and its diff: the
    /// self-digest over the raw bytes, the layout, the header's canonical bytes and the record digest
    /// are checked, but not each record against `load`'s rules, and a format-2 record's sources are
    /// left empty (they are not served and no diff shows them). That is about a fifth of the cost of
    /// [`Generation::decode`] at 100,000 names. Never serve or restore what it returns.
    ///
    /// Why a forged file that passes it cannot make `load` store a wrong result: the stored
    /// generation is built from the input alone, and its serial from the file names. The only
    /// decision taken on this base is "unchanged", and the store confirms it with a full
    /// [`Generation::decode`] first. Such a file can at worst be the base of the printed diff.
    pub(crate) fn decode_diff_base(bytes: &[u8]) -> Result<(Generation, String), String> {
        if lines::is_json(bytes) {
            return Generation::decode_with_digest(bytes);
        }
        let (g, digest) = lines::decode(bytes, true, SourceLines::Skip)?;
        if g.computed_record_digest() != g.record_digest {
            return Err("fails its record digest".into());
        }
        Ok((g, digest))
    }

    fn computed_record_digest(&self) -> String {
        record_digest(
            &self.zone,
            self.ttl,
            &self.soa,
            &self.ns,
            &self.records,
            &self.ptr,
        )
    }

    /// Parses a file of either format without checking its digests, canonical form or contents: for tools
    /// that re-seal an edited file (the fuzz target, tests). Never use it to serve.
    pub fn parse_unverified(bytes: &[u8]) -> Result<Generation, String> {
        if lines::is_json(bytes) {
            serde_json::from_slice::<Sealed>(bytes)
                .map(|s| s.generation)
                .map_err(|e| format!("is not a generation file ({e})"))
        } else {
            lines::decode(bytes, false, SourceLines::Keep).map(|(g, _)| g)
        }
    }

    /// Re-validates the contents, so a file that was crafted with a matching digest still cannot serve
    /// a name that `load` would have refused.
    fn check(&self) -> Result<(), String> {
        let zone = Zone::parse(&self.zone).map_err(|e| format!("has an invalid zone: {e}"))?;
        if zone.as_str() != self.zone {
            return Err(format!(
                "has a zone {:?} that is not in canonical form",
                self.zone
            ));
        }
        if self.ttl > MAX_TTL || self.soa.minimum > MAX_TTL {
            return Err("has a TTL above one day".into());
        }
        crate::records::check_addresses(&self.records)?;
        let mut previous: Option<&str> = None;
        for r in &self.records {
            // Checked in place: a copy of each name (folded, then placed) cost more than the decode.
            if let Err(e) = name::check_host_name(&r.name) {
                return Err(format!("has an invalid record name: {e}"));
            }
            if !name::is_canonical_served(&r.name, &zone) {
                return Err(format!(
                    "has the record {:?}, which is not a canonical name in zone {zone}",
                    r.name
                ));
            }
            if previous.is_some_and(|p| p >= r.name.as_str()) {
                return Err(format!("has the record {:?} out of order or twice", r.name));
            }
            previous = Some(&r.name);
        }
        crate::records::check_ptr(&self.records, &self.ptr)?;
        if self.computed_record_digest() != self.record_digest {
            return Err("fails its record digest".into());
        }
        Ok(())
    }
}

/// Format 1: one pretty JSON document whose self-digest is over the compact JSON of the body.
fn decode_json(bytes: &[u8]) -> Result<(Generation, String), String> {
    count_strings(bytes)?;
    let sealed: Sealed =
        serde_json::from_slice(bytes).map_err(|e| format!("is not a generation file ({e})"))?;
    let g = sealed.generation;
    if g.format != FORMAT_JSON {
        return Err(format!(
            "has format {} in the JSON layout of format {FORMAT_JSON}; this pigsty-dns reads formats \
             {FORMAT_JSON} and {FORMAT}",
            g.format
        ));
    }
    if g.json_self_digest() != sealed.self_digest {
        return Err("fails its self-digest (the file was changed after it was sealed)".into());
    }
    let sealed = Sealed {
        generation: g,
        self_digest: sealed.self_digest,
    };
    if !is_canonical(&sealed, bytes) {
        return Err("is not in canonical form (the file was changed after it was sealed)".into());
    }
    Ok((sealed.generation, sealed.self_digest))
}

/// Refuses bytes holding more than [`MAX_STRINGS`] JSON strings, in one pass without allocating.
pub fn count_strings(bytes: &[u8]) -> Result<(), String> {
    json_strings(bytes).map(|_| ())
}

/// The JSON strings in `bytes`, refused above [`MAX_STRINGS`].
fn json_strings(bytes: &[u8]) -> Result<usize, String> {
    let (mut n, mut in_string, mut escaped) = (0usize, false, false);
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if b == b'"' {
            in_string = true;
            n += 1;
            if n > MAX_STRINGS {
                return Err(format!(
                    "holds more than {MAX_STRINGS} strings, the generation limit"
                ));
            }
        }
    }
    Ok(n)
}

impl Generation {
    /// The strings this generation's own encoding `bytes` holds, as the readers count them
    /// ([`MAX_STRINGS`] bounds it), without reading its lines again: a format-2 line holds the record's name and its sources, or the PTR's name.
    pub(crate) fn check_string_count(&self, bytes: &[u8]) -> Result<(), String> {
        if self.format == FORMAT_JSON {
            return count_strings(bytes);
        }
        let lines = self.records.len()
            + self.records.iter().map(|r| r.sources.len()).sum::<usize>()
            + self.ptr.len();
        if lines.saturating_add(lines::header_strings(bytes)?) > MAX_STRINGS {
            return Err(lines::too_many());
        }
        Ok(())
    }
}

/// Format 2's layout: header, lines, digest line.
mod lines {
    use std::net::Ipv4Addr;

    use serde::{Deserialize, Serialize};

    use super::{
        FORMAT, FORMAT_JSON, Generation, Input, MAX_STRINGS, NotServed, Ptr, Record, SkippedHost,
        Soa, count_strings, json_strings, push_ipv4, sha256_hex,
    };

    pub(super) const DIGEST_KEY: &[u8] = b"self_digest ";
    const RECORD: &str = "a ";
    const PTR: &str = "ptr ";
    /// The header ends at the first line that is a lone `}`: pretty JSON indents every nested close, and
    /// a JSON string never holds a raw newline.
    const HEADER_END: &[u8] = b"\n}\n";

    /// Everything of a generation but its records and PTRs, which follow as lines. Field order is the
    /// canonical order.
    #[derive(Serialize)]
    struct HeaderOut<'a> {
        format: u32,
        zone: &'a str,
        serial: u32,
        created: &'a str,
        input: &'a Input,
        ttl: u32,
        soa: &'a Soa,
        ns: &'a [String],
        record_lines: usize,
        ptr_lines: usize,
        sources: &'a [&'a str],
        not_served: &'a [NotServed],
        skipped_hosts: &'a [SkippedHost],
        record_digest: &'a str,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct HeaderIn {
        format: u32,
        zone: String,
        serial: u32,
        created: String,
        input: Input,
        ttl: u32,
        soa: Soa,
        ns: Vec<String>,
        record_lines: usize,
        ptr_lines: usize,
        sources: Vec<String>,
        not_served: Vec<NotServed>,
        skipped_hosts: Vec<SkippedHost>,
        record_digest: String,
    }

    /// What [`decode`] does with a record's source tokens.
    #[derive(Clone, Copy, PartialEq, Eq)]
    pub(crate) enum SourceLines {
        /// Checked and decoded.
        Keep,
        /// Checked as strictly as by `Keep`, then dropped: a server serves no source.
        Check,
        /// Neither read nor checked (the self-digest still covers them): for a diff base only.
        Skip,
    }

    /// Format 1 starts with its one key; a format-2 header never has that key.
    pub(super) fn is_json(bytes: &[u8]) -> bool {
        bytes.starts_with(b"{\n  \"generation\"")
    }

    fn header(g: &Generation, sources: &[&str], out: &mut Vec<u8>) {
        let h = HeaderOut {
            format: g.format,
            zone: &g.zone,
            serial: g.serial,
            created: &g.created,
            input: &g.input,
            ttl: g.ttl,
            soa: &g.soa,
            ns: &g.ns,
            record_lines: g.records.len(),
            ptr_lines: g.ptr.len(),
            sources,
            not_served: &g.not_served,
            skipped_hosts: &g.skipped_hosts,
            record_digest: &g.record_digest,
        };
        // serde_json cannot fail on these plain types.
        let _ = serde_json::to_writer_pretty(&mut *out, &h);
        out.push(b'\n');
    }

    /// A source as a table entry and, when it ends in a list index (`all.vars.vm_hosts[0].names[7]`),
    /// that index's digits: 100,000 names of one list then share one entry.
    fn split_source(s: &str) -> (&str, Option<&str>) {
        if let Some(open) = s.strip_suffix(']').and_then(|t| t.rfind('[')) {
            let (base, digits) = (&s[..open], &s[open + 1..s.len() - 1]);
            if !base.is_empty() && is_index(digits) {
                return (base, Some(digits));
            }
        }
        (s, None)
    }

    /// Decimal digits as a list index is written: no sign, no leading zero.
    fn is_index(d: &str) -> bool {
        !d.is_empty()
            && d.len() <= 10
            && d.bytes().all(|b| b.is_ascii_digit())
            && (d == "0" || !d.starts_with('0'))
    }

    /// A name relative to the zone, as a zone file writes it: `@` for the apex, the labels before the
    /// zone for a name in it, and the full name with a trailing dot for any other (which no checked
    /// generation holds; it is written so that decoding can refuse it by name).
    fn push_name(out: &mut Vec<u8>, name: &str, zone: &str) {
        if name == zone {
            out.push(b'@');
        } else if let Some(rel) = name
            .strip_suffix(zone)
            .and_then(|r| r.strip_suffix('.'))
            .filter(|r| !r.is_empty())
        {
            out.extend_from_slice(rel.as_bytes());
        } else {
            out.extend_from_slice(name.as_bytes());
            out.push(b'.');
        }
    }

    /// The full name of a name token, accepted only in the form [`push_name`] writes for a name in the zone.
    fn name(tok: Option<&str>, zone: &str) -> Result<String, String> {
        let tok = tok.ok_or("a name is missing")?;
        if tok == "@" {
            return Ok(zone.to_string());
        }
        if let Some(full) = tok.strip_suffix('.') {
            return Err(format!(
                "has the record {full:?}, which is not a canonical name in zone {zone}"
            ));
        }
        let mut full = String::with_capacity(tok.len() + 1 + zone.len());
        full.push_str(tok);
        full.push('.');
        full.push_str(zone);
        Ok(full)
    }

    /// The source table in order of first use, and each record's source tokens (`K` or `K[I]`).
    fn source_table(g: &Generation) -> Vec<&str> {
        let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        let mut table = Vec::new();
        for s in g.records.iter().flat_map(|r| &r.sources) {
            let (base, _) = split_source(s);
            index.entry(base).or_insert_with(|| {
                table.push(base);
                table.len() - 1
            });
        }
        table
    }

    /// Header and lines: every byte the self-digest covers.
    pub(super) fn encode_body(g: &Generation, out: &mut Vec<u8>) {
        let table = source_table(g);
        header(g, &table, out);
        let index: std::collections::HashMap<&str, usize> =
            table.iter().enumerate().map(|(i, s)| (*s, i)).collect();
        for r in &g.records {
            out.extend_from_slice(RECORD.as_bytes());
            push_name(out, &r.name, &g.zone);
            out.push(b' ');
            push_ipv4(out, r.address);
            for s in &r.sources {
                let (base, digits) = split_source(s);
                out.push(b' ');
                push_decimal(out, index[base]);
                if let Some(d) = digits {
                    out.push(b'[');
                    out.extend_from_slice(d.as_bytes());
                    out.push(b']');
                }
            }
            out.push(b'\n');
        }
        for p in &g.ptr {
            out.extend_from_slice(PTR.as_bytes());
            push_ipv4(out, p.address);
            out.push(b' ');
            push_name(out, &p.name, &g.zone);
            out.push(b'\n');
        }
    }

    /// A table index in decimal, without the formatting machinery.
    fn push_decimal(out: &mut Vec<u8>, n: usize) {
        let start = out.len();
        let mut n = n;
        loop {
            out.push(b'0' + (n % 10) as u8);
            n /= 10;
            if n == 0 {
                break;
            }
        }
        out[start..].reverse();
    }

    /// The tokens of a line, separated by single spaces.
    fn tokens(line: &str) -> impl Iterator<Item = Result<&str, String>> {
        let mut parts = line.split(' ');
        std::iter::from_fn(move || {
            let tok = parts.next()?;
            Some(if tok.is_empty() {
                Err("two spaces in a row, or a space at an end of the line".into())
            } else {
                Ok(tok)
            })
        })
    }

    /// Reads the `K` / `K[I]` source tokens of a record against the header's table, accepting only what
    /// [`encode_body`] writes: table entries in order of first use, each used, an index only where the
    /// entry would not itself be split.
    struct Sources<'t> {
        table: &'t [String],
        /// Entries referred to so far; the next new one must be this one.
        used: usize,
        /// Heap the decoded sources may still take (see [`source_budget`]).
        budget: usize,
    }

    /// Every reference to a table entry is a copy of it, so a short line could otherwise ask for a long
    /// entry thousands of times. The decoded sources may take at most 32 bytes of heap per byte of the
    /// file plus 1 MiB: several times what real sources need (inventory paths, at about 30 bytes a
    /// line at 100,000 names), within the verifier's bound of a small multiple of the file.
    pub(super) fn source_budget(file_len: usize) -> usize {
        file_len.saturating_mul(32).saturating_add(1 << 20)
    }

    impl<'t> Sources<'t> {
        fn read(&mut self, tok: &str) -> Result<String, String> {
            let (base, digits) = self.check(tok)?;
            Ok(match digits {
                None => base.clone(),
                Some(d) => {
                    let mut s = String::with_capacity(base.len() + d.len() + 2);
                    s.push_str(base);
                    s.push('[');
                    s.push_str(d);
                    s.push(']');
                    s
                }
            })
        }

        /// Every check of [`Sources::read`], budget included, without building the source.
        fn check<'k>(&mut self, tok: &'k str) -> Result<(&'t String, Option<&'k str>), String> {
            let bad = || format!("the source {tok:?} is not a table entry as it is written");
            let (k, digits) = match tok.strip_suffix(']').and_then(|t| t.split_once('[')) {
                Some((k, d)) if is_index(d) => (k, Some(d)),
                Some(_) => return Err(bad()),
                None => (tok, None),
            };
            if !is_index(k) {
                return Err(bad());
            }
            let k: usize = k.parse().map_err(|_| bad())?;
            if k > self.used || k >= self.table.len() {
                return Err(format!(
                    "the source {tok:?} refers past the table's entries in order of first use"
                ));
            }
            if k == self.used {
                self.used += 1;
            }
            let base = &self.table[k];
            let cost = base.len() + digits.map_or(0, |d| d.len() + 2) + size_of::<String>();
            self.budget = self.budget.checked_sub(cost).ok_or_else(|| {
                "its sources copy more text than a file of its size holds (a table entry referred to \
                 too often)"
                    .to_string()
            })?;
            if digits.is_none() && split_source(base).1.is_some() {
                return Err(format!("the source {base:?} is not split as it is written"));
            }
            Ok((base, digits))
        }
    }

    /// An address token, accepted only as `Ipv4Addr` writes it: four decimal octets, no leading zero.
    fn address(tok: Option<Result<&str, String>>) -> Result<Ipv4Addr, String> {
        let tok = tok.ok_or("an address is missing")??;
        let bad = || format!("{tok:?} is not an IPv4 address as it is written");
        let mut octets = [0u8; 4];
        let mut parts = tok.split('.');
        for o in &mut octets {
            let p = parts.next().ok_or_else(bad)?;
            if p.is_empty()
                || p.len() > 3
                || (p.len() > 1 && p.starts_with('0'))
                || !p.bytes().all(|b| b.is_ascii_digit())
            {
                return Err(bad());
            }
            *o = p.parse().map_err(|_| bad())?;
        }
        if parts.next().is_some() {
            return Err(bad());
        }
        Ok(octets.into())
    }

    fn not_a_file(why: &str) -> String {
        format!("is not a generation file ({why})")
    }

    /// A format-2 file cut into its parts.
    struct Parts<'a> {
        /// What the self-digest covers: header and lines.
        body: &'a [u8],
        head: &'a [u8],
        lines: &'a [u8],
        digest: &'a str,
    }

    /// Cuts a file into its header, its lines and its self-digest, or says why its layout is wrong.
    fn split(bytes: &[u8]) -> Result<Parts<'_>, String> {
        let Some(without_newline) = bytes.strip_suffix(b"\n") else {
            return Err(not_a_file("it does not end with a newline"));
        };
        let last = without_newline
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let (body, last_line) = bytes.split_at(last);
        let digest = last_line
            .strip_prefix(DIGEST_KEY)
            .and_then(|d| d.strip_suffix(b"\n"))
            .filter(|d| d.len() == 64 && d.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
            .and_then(|d| std::str::from_utf8(d).ok())
            .ok_or_else(|| not_a_file("its last line is not `self_digest <sha256>`"))?;
        let header_end = body
            .windows(HEADER_END.len())
            .position(|w| w == HEADER_END)
            .map(|i| i + HEADER_END.len())
            .ok_or_else(|| not_a_file("it has no JSON header"))?;
        let (head, lines) = body.split_at(header_end);
        Ok(Parts {
            body,
            head,
            lines,
            digest,
        })
    }

    /// Strings in the header plus names and sources in the lines, counted token by token: the test
    /// oracle for what the decoder counts as it reads and the writer counts from the generation.
    #[cfg(test)]
    pub(super) fn count(bytes: &[u8]) -> Result<usize, String> {
        let Parts { head, lines, .. } = split(bytes)?;
        let mut n = json_strings(head)?;
        for line in String::from_utf8_lossy(lines).split_terminator('\n') {
            // The record's name and every source, or the PTR's name: all tokens but the keyword and address.
            n += tokens(line).count().saturating_sub(2);
        }
        Ok(n)
    }

    /// The JSON strings of a format-2 file's header.
    pub(super) fn header_strings(bytes: &[u8]) -> Result<usize, String> {
        json_strings(split(bytes)?.head)
    }

    pub(super) fn too_many() -> String {
        format!("holds more than {MAX_STRINGS} strings, the generation limit")
    }

    /// Parses format 2. With `verify`, the self-digest is checked on the raw bytes before anything is
    /// parsed and the header must re-encode to its bytes. The lines are read strictly (single spaces,
    /// addresses and sources only in the form [`encode_body`] writes them), so what parses is canonical.
    /// `sources` says what becomes of a record's sources.
    pub(super) fn decode(
        bytes: &[u8],
        verify: bool,
        sources: SourceLines,
    ) -> Result<(Generation, String), String> {
        let with_sources = sources != SourceLines::Skip;
        let Parts {
            body,
            head,
            lines,
            digest,
        } = split(bytes)?;
        if verify && sha256_hex(body) != digest {
            return Err("fails its self-digest (the file was changed after it was sealed)".into());
        }
        count_strings(head)?;
        let h: HeaderIn = serde_json::from_slice(head).map_err(|e| not_a_file(&e.to_string()))?;
        if h.format != FORMAT {
            return Err(format!(
                "has format {}, this pigsty-dns reads formats {FORMAT_JSON} and {FORMAT}",
                h.format
            ));
        }
        let lines = std::str::from_utf8(lines).map_err(|_| not_a_file("a line is not UTF-8"))?;
        let first_line = head.iter().filter(|&&b| b == b'\n').count() + 1;
        // The header's counts size the vectors, bounded by what the bytes can hold.
        let mut records = Vec::with_capacity(h.record_lines.min(lines.len() / 16));
        let mut ptr = Vec::with_capacity(h.ptr_lines.min(lines.len() / 16));
        let mut strings = 0usize;
        // The encoder lists each source once; a repeated entry could only be written by hand.
        let mut entries = std::collections::HashSet::with_capacity(h.sources.len());
        if let Some(twice) = h.sources.iter().find(|s| !entries.insert(s.as_str())) {
            return Err(format!(
                "is not in canonical form (its header lists the source {twice:?} twice)"
            ));
        }
        let mut table = Sources {
            table: &h.sources,
            used: 0,
            budget: source_budget(bytes.len()),
        };
        for (i, line) in lines.split_terminator('\n').enumerate() {
            let at = |why: String| {
                format!(
                    "is not in canonical form (line {}: {why}; the file was changed after it was sealed)",
                    first_line + i
                )
            };
            if let Some(rest) = line.strip_prefix(RECORD) {
                if !ptr.is_empty() {
                    return Err(at("a record after the PTR lines".into()));
                }
                let mut t = tokens(rest);
                let name = name(t.next().transpose().map_err(&at)?, &h.zone).map_err(&at)?;
                let address = address(t.next()).map_err(&at)?;
                let sources = match sources {
                    SourceLines::Keep => t
                        .map(|tok| tok.and_then(|tok| table.read(tok)))
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(&at)?,
                    SourceLines::Check => {
                        let mut n = 0;
                        for tok in t {
                            table.check(tok.map_err(&at)?).map_err(&at)?;
                            n += 1;
                        }
                        strings += n;
                        Vec::new()
                    }
                    SourceLines::Skip => Vec::new(),
                };
                strings += 1 + sources.len();
                records.push(Record {
                    name,
                    address,
                    sources,
                });
            } else if let Some(rest) = line.strip_prefix(PTR) {
                let mut t = tokens(rest);
                let address = address(t.next()).map_err(&at)?;
                let name = name(t.next().transpose().map_err(&at)?, &h.zone).map_err(&at)?;
                if t.next().is_some() {
                    return Err(at("a PTR line has more than an address and a name".into()));
                }
                strings += 1;
                ptr.push(Ptr { address, name });
            } else {
                return Err(at("neither a record (`a `) nor a PTR (`ptr `) line".into()));
            }
            if strings > MAX_STRINGS {
                return Err(too_many());
            }
        }
        if with_sources && table.used != h.sources.len() {
            return Err(format!(
                "is not in canonical form (its header lists {} sources, its lines use {})",
                h.sources.len(),
                table.used
            ));
        }
        if records.len() != h.record_lines || ptr.len() != h.ptr_lines {
            return Err(format!(
                "is not in canonical form (its header counts {} records and {} PTRs, its lines hold {} and {})",
                h.record_lines,
                h.ptr_lines,
                records.len(),
                ptr.len()
            ));
        }
        let h_sources = h.sources;
        let g = Generation {
            format: h.format,
            zone: h.zone,
            serial: h.serial,
            created: h.created,
            input: h.input,
            ttl: h.ttl,
            soa: h.soa,
            ns: h.ns,
            records,
            ptr,
            not_served: h.not_served,
            skipped_hosts: h.skipped_hosts,
            record_digest: h.record_digest,
        };
        if verify {
            let mut again = Vec::with_capacity(head.len());
            let sources: Vec<&str> = h_sources.iter().map(String::as_str).collect();
            header(&g, &sources, &mut again);
            if again != head {
                return Err(
                    "is not in canonical form (its header; the file was changed after it was sealed)"
                        .into(),
                );
            }
        }
        Ok((g, digest.to_string()))
    }
}

/// sha256 as an `io::Write` sink.
struct HashWriter(Sha256);

impl std::io::Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Compares what is written with `expected`, byte by byte, without keeping a copy.
struct CompareWriter<'a> {
    expected: &'a [u8],
    at: usize,
    same: bool,
}

impl std::io::Write for CompareWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let end = self.at + buf.len();
        self.same = self.same && self.expected.get(self.at..end) == Some(buf);
        self.at = end;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Whether `bytes` are exactly the canonical encoding of `sealed` (pretty JSON and a final newline).
fn is_canonical(sealed: &Sealed, bytes: &[u8]) -> bool {
    let mut w = CompareWriter {
        expected: bytes,
        at: 0,
        same: true,
    };
    serde_json::to_writer_pretty(&mut w, sealed).is_ok()
        && w.same
        && bytes.get(w.at..) == Some(b"\n".as_slice())
}

fn encode_sealed(sealed: &Sealed) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(sealed).unwrap_or_default();
    out.push(b'\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Generation {
        let zone = Zone::parse("pigsty.test").unwrap();
        let rec = |name: &str, a: [u8; 4]| Record {
            name: name.into(),
            address: a.into(),
            sources: vec!["t".into()],
        };
        let set = RecordSet {
            zone,
            records: vec![
                rec("a.b.pigsty.test", [10, 10, 10, 11]),
                rec("meta.pigsty.test", [10, 10, 10, 10]),
            ],
            ptr: vec![],
            not_served: vec![],
            skipped_hosts: vec![],
        };
        let input = Input {
            path: "/x".into(),
            sha256: "0".repeat(64),
        };
        Generation::seal(&set, 30, 5, 7, "2026-12-01T00:00:00Z".into(), input)
    }

    /// Re-seals a modified generation so its digests match: only the content checks can refuse it.
    fn forged(edit: impl FnOnce(&mut Generation)) -> Result<Generation, String> {
        let mut g = sample();
        edit(&mut g);
        g.record_digest = record_digest(&g.zone, g.ttl, &g.soa, &g.ns, &g.records, &g.ptr);
        Generation::decode(&g.encode())
    }

    #[test]
    fn decode_round_trips_and_rechecks_contents_behind_valid_digests() {
        let g = sample();
        assert_eq!(Generation::decode(&g.encode()).unwrap(), g);
        assert!(
            forged(|g| g.records[0].address = [8, 8, 8, 8].into())
                .unwrap_err()
                .contains("outside")
        );
        assert!(
            forged(|g| g.records[1].address = [10, 10, 10, 3].into())
                .unwrap_err()
                .contains("outside")
        );
        assert!(
            forged(|g| g.records[0].name = "x.other.test".into())
                .unwrap_err()
                .contains("not a canonical name")
        );
        assert!(
            forged(|g| g.records[0].name = "A.b.pigsty.test".into())
                .unwrap_err()
                .contains("not a canonical name")
        );
        assert!(
            forged(|g| g.records.swap(0, 1))
                .unwrap_err()
                .contains("out of order")
        );
        assert!(forged(|g| g.ttl = 86_401).unwrap_err().contains("TTL"));
        let mut bytes = g.encode();
        let at = bytes.len() - 5;
        bytes[at] ^= 1;
        assert!(Generation::decode(&bytes).is_err());
    }

    /// A format-2 body with a self-digest line computed over it, as a forger with sha256sum would write.
    fn resealed(body: &str) -> Vec<u8> {
        format!("{body}self_digest {}\n", sha256_of(body.as_bytes())).into_bytes()
    }

    fn body_of(g: &Generation) -> String {
        let text = String::from_utf8(g.encode()).unwrap();
        let cut = text.rfind("self_digest ").unwrap();
        text[..cut].to_string()
    }

    #[test]
    fn format_2_is_lines_under_a_header_and_its_digest_is_over_the_raw_bytes() {
        let g = sample();
        assert_eq!(g.format, FORMAT);
        let bytes = g.encode();
        let text = std::str::from_utf8(&bytes).unwrap();
        assert!(
            text.contains("\"sources\": [\n    \"t\"\n  ],\n")
                && text.contains("\na a.b 10.10.10.11 0\na meta 10.10.10.10 0\nself_digest ")
        );
        let body = body_of(&g);
        assert_eq!(
            resealed(&body),
            bytes,
            "the digest line is sha256 of the bytes above it"
        );
        assert_eq!(g.self_digest(), sha256_of(body.as_bytes()));
        let (back, digest) = Generation::decode_with_digest(&bytes).unwrap();
        assert_eq!((back, digest), (g.clone(), g.self_digest()));

        // Any flipped byte is caught, whether it breaks the layout or only the digest.
        for at in 0..bytes.len() {
            let mut b = bytes.clone();
            b[at] ^= 0x20;
            assert!(
                Generation::decode(&b).is_err(),
                "byte {at} flipped was accepted"
            );
        }
        // Truncated anywhere.
        for len in 0..bytes.len() {
            assert!(
                Generation::decode(&bytes[..len]).is_err(),
                "truncated to {len}"
            );
        }
    }

    #[test]
    fn format_2_forged_behind_a_recomputed_self_digest_is_refused() {
        let g = sample();
        let body = body_of(&g);
        let refused = |body: String, why: &str| {
            let e = Generation::decode(&resealed(&body)).unwrap_err();
            assert!(e.contains(why), "{e} (wanted {why:?}) for\n{body}");
            // The server's read, which does not keep the sources, refuses it for the same reason.
            let bytes = resealed(&body);
            assert_eq!(Generation::decode_to_serve(&bytes).unwrap_err(), e);
        };
        let (served, _) = Generation::decode_to_serve(&g.encode()).unwrap();
        assert!(served.records.iter().all(|r| r.sources.is_empty()));
        assert_eq!(served.record_digest, g.record_digest);
        // Lines swapped: each is canonical, the order is not.
        let a = "a a.b 10.10.10.11 0\n";
        let m = "a meta 10.10.10.10 0\n";
        refused(
            body.replace(&format!("{a}{m}"), &format!("{m}{a}")),
            "out of order",
        );
        // An address changed without the record digest: only the record digest can tell.
        refused(
            body.replace("10.10.10.11 0", "10.10.10.12 0"),
            "record digest",
        );
        // Not the encoder's bytes: a double space, a leading zero, a source written another way, a name
        // written in full, pretty spacing.
        refused(body.replace("10.10.10.11 0", "10.10.10.11  0"), "line");
        refused(body.replace("10.10.10.11 0", "10.10.10.011 0"), "line");
        refused(body.replace("10.10.10.11 0", "10.10.10.11 00"), "line");
        refused(body.replace("10.10.10.11 0", "10.10.10.11 t"), "line");
        refused(body.replace("10.10.10.11 0", "10.10.10.11 1"), "first use");
        refused(
            body.replace("a a.b ", "a a.b.pigsty.test. "),
            "not a canonical name",
        );
        // Written in full without the dot it is another name, a.b.pigsty.test.pigsty.test.
        refused(
            body.replace("a a.b ", "a a.b.pigsty.test "),
            "record digest",
        );
        // The source table: an entry unused, listed twice, or one that the encoder would have split.
        refused(
            body.replace("\"t\"\n", "\"t\",\n    \"u\"\n"),
            "lists 2 sources",
        );
        refused(body.replace("\"t\"\n", "\"t\",\n    \"t\"\n"), "twice");
        refused(body.replace("\"t\"\n", "\"t[1]\"\n"), "not split");
        refused(body.replace("\"ttl\": 30", "\"ttl\":30"), "canonical form");
        // A line dropped (the header's count says so), an unknown line, a record after the PTRs.
        refused(body.replace(a, ""), "header counts");
        refused(body.replace(a, &format!("{a}x y\n")), "neither a record");
        refused(
            body.replace(m, "ptr 10.10.10.11 a.b.pigsty.test\n") + m,
            "after the PTR",
        );
        // A format this build does not know, and a hand-made header field.
        refused(
            body.replace("\"format\": 2", "\"format\": 3"),
            "has format 3",
        );
        refused(
            body.replace("\"ttl\": 30,", "\"ttl\": 30,\n  \"extra\": 1,"),
            "not a generation file",
        );
        // The digest line itself: missing, short, upper case.
        let e = Generation::decode(body.as_bytes()).unwrap_err();
        assert!(e.contains("self_digest"), "{e}");
        let upper = format!(
            "{body}self_digest {}\n",
            sha256_of(body.as_bytes()).to_uppercase()
        );
        assert!(Generation::decode(upper.as_bytes()).is_err());
    }

    #[test]
    fn any_source_the_apex_and_ptr_lines_round_trip() {
        let mut g = sample();
        g.records[0].sources = vec![
            "a b".into(),
            "\"q\"".into(),
            String::new(),
            "tab\there".into(),
            "é".into(),
            "x[3]".into(),
            "x[3][4]".into(),
            "x".into(),
            "[5]".into(),
            "y[07]".into(),
            "z[]".into(),
        ];
        g.records.push(Record {
            name: "pigsty.test".into(),
            address: [10, 10, 10, 11].into(),
            sources: vec!["x[3][5]".into()],
        });
        g.ptr = vec![
            Ptr {
                address: [10, 10, 10, 10].into(),
                name: "meta.pigsty.test".into(),
            },
            Ptr {
                address: [10, 10, 10, 11].into(),
                name: "a.b.pigsty.test".into(),
            },
        ];
        g.record_digest = record_digest(&g.zone, g.ttl, &g.soa, &g.ns, &g.records, &g.ptr);
        let bytes = g.encode();
        let text = std::str::from_utf8(&bytes).unwrap();
        assert!(
            text.contains("\nptr 10.10.10.10 meta\nptr 10.10.10.11 a.b\nself_digest "),
            "{text}"
        );
        assert!(
            text.contains(" 10.10.10.11 0 1 2 3 4 5[3] 6[4] 5 7 8 9\n"),
            "{text}"
        );
        assert!(text.contains("\na @ 10.10.10.11 6[5]\n"), "{text}");
        // The writer's count from the generation is the readers' count from the lines.
        let from_lines = lines::count(&bytes).unwrap();
        let sources: usize = g.records.iter().map(|r| r.sources.len()).sum();
        let from_g =
            lines::header_strings(&bytes).unwrap() + g.records.len() + sources + g.ptr.len();
        assert_eq!(from_lines, from_g);
        assert!(g.check_string_count(&bytes).is_ok());
        assert_eq!(Generation::decode(&bytes).unwrap(), g);
        assert_eq!(Generation::parse_unverified(&bytes).unwrap(), g);
    }

    /// One long table entry referred to by thousands of two-byte tokens would copy it thousands of
    /// times: refused by the source budget before the copies are made.
    #[test]
    fn a_diff_base_checks_both_digests_and_the_layout_but_not_the_rules() {
        let g = sample();
        let (base, digest) = Generation::decode_diff_base(&g.encode()).unwrap();
        assert_eq!(digest, g.self_digest());
        assert_eq!(
            (&base.records[0].name, base.records[0].address),
            (&g.records[0].name, g.records[0].address)
        );
        assert!(base.records.iter().all(|r| r.sources.is_empty()));
        // A name `load` refuses, behind both digests recomputed: a diff base, never served.
        let mut bad = sample();
        bad.records[0].name = "A.b.pigsty.test".into();
        bad.record_digest = bad.computed_record_digest();
        assert!(Generation::decode(&bad.encode()).is_err());
        assert!(Generation::decode_diff_base(&bad.encode()).is_ok());
        // What only the self-digest, the layout or the record digest can tell is refused all the same.
        let body = body_of(&g);
        let refused = |bytes: &[u8], why: &str| {
            let e = Generation::decode_diff_base(bytes).unwrap_err();
            assert!(e.contains(why), "{e} (wanted {why:?})");
        };
        refused(
            &String::from_utf8(g.encode())
                .unwrap()
                .replace("10.10.10.11 0", "10.10.10.12 0")
                .into_bytes(),
            "self-digest",
        );
        refused(
            &resealed(&body.replace("10.10.10.11 0", "10.10.10.12 0")),
            "record digest",
        );
        refused(
            &resealed(&body.replace("10.10.10.11 0", "10.10.10.011 0")),
            "line",
        );
        refused(
            &resealed(&body.replace("a a.b 10.10.10.11 0\n", "")),
            "header counts",
        );
        refused(
            &resealed(&body.replace("\"ttl\": 30", "\"ttl\":30")),
            "canonical form",
        );
    }

    #[test]
    fn a_source_table_entry_referred_to_too_often_is_refused() {
        let mut g = sample();
        let long = "s".repeat(20_000);
        let many = |n: usize| {
            let mut g = g.clone();
            g.records[0].sources = vec![long.clone(); n];
            g.encode()
        };
        // A few copies fit; 5,000 copies of 20 KB from a file of about 30 KB do not.
        assert!(Generation::parse_unverified(&many(4)).is_ok());
        let e = Generation::parse_unverified(&many(5_000)).unwrap_err();
        assert!(e.contains("copy more text"), "{e}");
        g.records[0].sources = vec!["all.vars.vm_hosts[0].names[1]".into(); 1000];
        assert!(Generation::parse_unverified(&g.encode()).is_ok());
    }

    /// Generations sealed before format 2 are read, re-encode to their exact bytes, and keep their digest.
    #[test]
    fn format_1_files_still_decode_and_re_encode_byte_for_byte() {
        let mut g = sample();
        g.format = FORMAT_JSON;
        let bytes = g.encode();
        assert!(bytes.starts_with(b"{\n  \"generation\": {\n    \"format\": 1,"));
        let (back, digest) = Generation::decode_with_digest(&bytes).unwrap();
        assert_eq!(back, g);
        assert_eq!(back.encode(), bytes);
        assert_eq!(digest, back.self_digest());
        let mut b = bytes.clone();
        let at = b.len() - 5;
        b[at] ^= 1;
        assert!(Generation::decode(&b).is_err());
        // A format-1 layout that claims format 2 is refused.
        let text = String::from_utf8(bytes)
            .unwrap()
            .replace("\"format\": 1", "\"format\": 2");
        assert!(
            Generation::decode(text.as_bytes())
                .unwrap_err()
                .contains("format 2")
        );
    }
}
