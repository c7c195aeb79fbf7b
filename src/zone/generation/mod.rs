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
//! A generation of several zones lists them after `zone` (its first) as `"zones": ["pigsty.test",
//! "pigsty"]`, and the set is in the record digest; one of one zone has no `zones` key, so it keeps the
//! bytes and digests of the releases that served one zone. Names of the first zone are relative to it
//! as in a zone file (`@` is the apex), a name of another zone is written in full with a trailing dot
//! (`a i.pigsty. 10.10.10.10 0`); a source is an entry of the
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

use crate::dns::name::Zone;
use crate::input::records::{NotServed, Ptr, Record, RecordSet, SkippedHost};
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
/// The apex's one NS, as `load` writes it.
pub const APEX_NS: &str = "localhost.";

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
    /// The first served zone, where a single label goes.
    pub zone: String,
    /// Every served zone in order (the first is `zone`) when there are several; empty for one zone, so
    /// a one-zone generation keeps the bytes and digests of the releases that served one zone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zones: Vec<String>,
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

/// What `load` needs of the previous generation for its "unchanged" check and its diff (see
/// [`Generation::decode_diff_base`]): its serial and record digest, its served names with their
/// addresses in order, and its PTRs. The names are kept end to end in one String.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiffBase {
    pub serial: u32,
    pub record_digest: String,
    names: String,
    /// Per record, where its name ends in `names`, and its address.
    records: Vec<(usize, std::net::Ipv4Addr)>,
    pub ptr: Vec<Ptr>,
}

impl DiffBase {
    /// The records' names and addresses, sorted by name as the generation holds them.
    pub fn records(&self) -> impl Iterator<Item = (&str, std::net::Ipv4Addr)> + '_ {
        let mut start = 0;
        self.records.iter().map(move |&(end, address)| {
            let name = &self.names[start..end];
            start = end;
            (name, address)
        })
    }

    fn push_record(&mut self, address: std::net::Ipv4Addr) {
        self.records.push((self.names.len(), address));
    }
}

impl From<&Generation> for DiffBase {
    fn from(g: &Generation) -> DiffBase {
        let mut base = DiffBase {
            serial: g.serial,
            record_digest: g.record_digest.clone(),
            names: String::with_capacity(g.records.iter().map(|r| r.name.len()).sum()),
            records: Vec::with_capacity(g.records.len()),
            ptr: g.ptr.clone(),
        };
        for r in &g.records {
            base.names.push_str(&r.name);
            base.push_record(r.address);
        }
        base
    }
}

/// What a generation file's header says once its self-digest holds: its serial and the record digest
/// it claims, not recomputed ([`Generation::decode_claim`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderClaim {
    pub serial: u32,
    pub record_digest: String,
}

/// The digest the generation files carry, under the name the integration tests use.
pub use crate::digest::sha256_hex as sha256_of;
use crate::digest::{hex, sha256_hex};

/// The record digest covers exactly what a client can see: zone, TTLs, SOA/NS settings and every
/// name → address pair and every address → name PTR. Sources and comments are not served, so they do
/// not change it. Without PTRs the text is what it was before reverse zones, so old digests still hold.
/// A generation of one zone; [`record_digest_of_zones`] for any.
pub fn record_digest(
    zone: &str,
    ttl: u32,
    soa: &Soa,
    ns: &[String],
    records: &[Record],
    ptr: &[Ptr],
) -> String {
    record_digest_of_zones(zone, &[], ttl, soa, ns, records, ptr)
}

/// [`record_digest`] with the zone set (`zones` as [`Generation::zones`] holds it): several zones add
/// a `zones` line after the `zone` line; one zone keeps the text, so its digest, of before.
pub fn record_digest_of_zones(
    zone: &str,
    zones: &[String],
    ttl: u32,
    soa: &Soa,
    ns: &[String],
    records: &[Record],
    ptr: &[Ptr],
) -> String {
    let mut d = RecordDigest::new(zone, zones, ttl, soa, ns);
    for r in records {
        d.record(&r.name, r.address);
    }
    for p in ptr {
        d.ptr(p.address, &p.name);
    }
    d.finish()
}

/// [`record_digest`] fed a record at a time, for a reader that has no `Record`s to give it.
struct RecordDigest {
    h: Sha256,
    text: Vec<u8>,
}

impl RecordDigest {
    fn new(zone: &str, zones: &[String], ttl: u32, soa: &Soa, ns: &[String]) -> RecordDigest {
        let mut text = format!("pigsty-dns records v1\nzone {zone}\n").into_bytes();
        if !zones.is_empty() {
            text.extend_from_slice(format!("zones {}\n", zones.join(" ")).as_bytes());
        }
        text.extend_from_slice(
            format!(
                "ttl {ttl}\nsoa {} {} {} {} {} {}\n",
                soa.mname, soa.rname, soa.refresh, soa.retry, soa.expire, soa.minimum
            )
            .as_bytes(),
        );
        for n in ns {
            text.extend_from_slice(b"ns ");
            text.extend_from_slice(n.as_bytes());
            text.push(b'\n');
        }
        RecordDigest {
            h: Sha256::new(),
            text,
        }
    }

    fn record(&mut self, name: &str, address: std::net::Ipv4Addr) {
        self.text.extend_from_slice(b"a ");
        self.text.extend_from_slice(name.as_bytes());
        self.text.push(b' ');
        push_ipv4(&mut self.text, address);
        self.text.push(b'\n');
        self.flush();
    }

    fn ptr(&mut self, address: std::net::Ipv4Addr, name: &str) {
        self.text.extend_from_slice(b"ptr ");
        push_ipv4(&mut self.text, address);
        self.text.push(b' ');
        self.text.extend_from_slice(name.as_bytes());
        self.text.push(b'\n');
        self.flush();
    }

    /// Streamed into the hash through one small buffer: no copy of the whole text.
    fn flush(&mut self) {
        if self.text.len() > 60 * 1024 {
            self.h.update(&self.text);
            self.text.clear();
        }
    }

    fn finish(mut self) -> String {
        self.h.update(&self.text);
        hex(&self.h.finalize())
    }
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
        let first = set.zones.first();
        let soa = Soa::for_zone(first, negative_ttl);
        let ns = vec![APEX_NS.to_string()];
        let zones: Vec<String> = if set.zones.len() > 1 {
            set.zones.iter().map(Zone::to_string).collect()
        } else {
            Vec::new()
        };
        let digest = record_digest_of_zones(
            first.as_str(),
            &zones,
            ttl,
            &soa,
            &ns,
            &set.records,
            &set.ptr,
        );
        Generation {
            format: FORMAT,
            zone: first.to_string(),
            zones,
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
        let (g, digest, records) = if lines::is_json(bytes) {
            let (g, digest) = decode_json(bytes)?;
            (g, digest, None)
        } else {
            // The record digest is hashed as the lines are read, not from the records afterwards.
            let (g, digest, records) = lines::decode_digesting(bytes, sources)?;
            (g, digest, Some(records))
        };
        g.check(records)?;
        Ok((g, digest))
    }

    /// A generation file read only as `load`'s base for its unchanged check and its diff: the
    /// self-digest over the raw bytes, the layout, the header's canonical bytes and the record digest
    /// are checked, but not each record against `load`'s rules, and a format-2 record's sources are
    /// not read (they are not served and no diff shows them). It keeps the names in one buffer, not
    /// a String per record. Never serve or restore what it describes.
    ///
    /// Why a forged file that passes it cannot make `load` store a wrong result: the stored
    /// generation is built from the input alone, and its serial from the file names. The only
    /// decision taken on this base is "unchanged", and the store confirms it with a full
    /// [`Generation::decode`] first. Such a file can at worst be the base of the printed diff.
    pub(crate) fn decode_diff_base(bytes: &[u8]) -> Result<(DiffBase, String), String> {
        if lines::is_json(bytes) {
            return Generation::decode_with_digest(bytes).map(|(g, d)| (DiffBase::from(&g), d));
        }
        lines::decode_diff_base(bytes)
    }

    /// Only the self-digest over the raw bytes, the layout and the header of a file, for `load` to
    /// tell before it writes whether its new generation can be unchanged: a hash and a small parse,
    /// nothing of the lines. A format-1 file is read as its diff base.
    pub(crate) fn decode_claim(bytes: &[u8]) -> Result<(HeaderClaim, String), String> {
        if lines::is_json(bytes) {
            return Generation::decode_diff_base(bytes).map(|(b, d)| {
                let claim = HeaderClaim {
                    serial: b.serial,
                    record_digest: b.record_digest,
                };
                (claim, d)
            });
        }
        lines::decode_claim(bytes)
    }

    fn computed_record_digest(&self) -> String {
        record_digest_of_zones(
            &self.zone,
            &self.zones,
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
    /// a name that `load` would have refused. `records` is the record digest of the contents when the
    /// caller has it already (it is computed here otherwise), compared last as always.
    fn check(&self, records: Option<String>) -> Result<(), String> {
        let zones = self.served_zones()?;
        let zone = zones.first().clone();
        if self.ttl == 0 || self.ttl > MAX_TTL || self.soa.minimum > MAX_TTL {
            return Err("has a TTL of 0 or above one day".into());
        }
        self.check_apex(&zone)?;
        crate::input::records::check_addresses(&self.records)?;
        let mut previous: Option<&str> = None;
        for r in &self.records {
            // Checked in place: a copy of each name (folded, then placed) cost more than the decode.
            // A canonical served name is a valid host name, so one pass settles the names that pass;
            // for any other, the host-name rules say first what is wrong with it.
            if !zones.is_canonical_served(&r.name) {
                if let Err(e) = crate::dns::name::check_host_name(&r.name) {
                    return Err(format!("has an invalid record name: {e}"));
                }
                return Err(format!(
                    "has the record {}, which is not a canonical name in the zones {zones}",
                    crate::output::text::quote(&r.name)
                ));
            }
            if previous.is_some_and(|p| p >= r.name.as_str()) {
                return Err(format!(
                    "has the record {} out of order or twice",
                    crate::output::text::quote(&r.name)
                ));
            }
            previous = Some(&r.name);
        }
        crate::input::records::check_ptr(&self.records, &self.ptr)?;
        let computed = records.unwrap_or_else(|| self.computed_record_digest());
        if computed != self.record_digest {
            return Err("fails its record digest".into());
        }
        Ok(())
    }
}

impl Generation {
    /// The apex's SOA and NS are exactly what `load` derives for the zone ([`Soa::for_zone`] with
    /// its negative TTL, NS `localhost.`): no other primary, contact or NS is served or transferred,
    /// and the timers are load's (refresh 1 h, retry 15 min, expire 1 week, inside RFC 1912 §2.2's
    /// ranges), so `history`, `serve` and transfers give a forged apex one verdict.
    fn check_apex(&self, zone: &Zone) -> Result<(), String> {
        let want = Soa::for_zone(zone, self.soa.minimum);
        if self.soa != want {
            let s = &self.soa;
            return Err(format!(
                "has the SOA {} {} {} {} {}, and load writes {} {} {} {} {} for zone {zone}",
                crate::output::text::quote(&s.mname),
                crate::output::text::quote(&s.rname),
                s.refresh,
                s.retry,
                s.expire,
                crate::output::text::quote(&want.mname),
                crate::output::text::quote(&want.rname),
                want.refresh,
                want.retry,
                want.expire,
            ));
        }
        if self.ns.len() != 1 || self.ns[0] != APEX_NS {
            let listed: Vec<String> = self
                .ns
                .iter()
                .take(4)
                .map(|n| crate::output::text::quote(n))
                .collect();
            return Err(format!(
                "has the NS set [{}] ({} names), and load writes [{APEX_NS:?}]",
                listed.join(", "),
                self.ns.len()
            ));
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
mod lines;
/// The zone set a generation serves.
mod zone_set;

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
mod tests;
