//! Format 2's layout: header, lines, digest line; the writer, and the parts every reader shares. The
//! readers (a whole generation, a claim, a diff base) are in `lines/decode.rs`.

use crate::output::text::quote;
use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use super::{
    FORMAT, FORMAT_JSON, Generation, Input, MAX_STRINGS, NotServed, SkippedHost, Soa,
    count_strings, json_strings, push_ipv4, sha256_hex,
};

mod decode;
pub(super) use decode::{decode, decode_claim, decode_diff_base, decode_digesting};

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
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    zones: &'a [String],
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
    #[serde(default)]
    zones: Vec<String>,
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
    write_header(
        &HeaderOut {
            format: g.format,
            zone: &g.zone,
            zones: &g.zones,
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
        },
        out,
    );
}

fn write_header(h: &HeaderOut<'_>, out: &mut Vec<u8>) {
    // serde_json cannot fail on these plain types.
    let _ = serde_json::to_writer_pretty(&mut *out, h);
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

/// The zones a generation's names are written against: the first zone's names relative to it, the
/// other zones' in full.
#[derive(Clone, Copy)]
pub(super) struct Origin<'a> {
    zone: &'a str,
    /// Every served zone when there are several (the first is `zone` in a checked file), else empty.
    zones: &'a [String],
}

impl<'a> Origin<'a> {
    pub(super) fn new(zone: &'a str, zones: &'a [String]) -> Origin<'a> {
        Origin { zone, zones }
    }

    /// Whether a full name is in one of the other zones, the only names written in full.
    fn in_other_zone(&self, full: &str) -> bool {
        self.zones
            .iter()
            .any(|z| z != self.zone && crate::dns::name::in_zone(full, z))
    }
}

/// A name relative to the first zone, as a zone file writes it: `@` for the apex, the labels before the
/// zone for a name in it, and the full name with a trailing dot for any other (a name of another
/// served zone; a checked generation holds no other, and decoding refuses it by name).
fn push_name(out: &mut Vec<u8>, name: &str, origin: &Origin<'_>) {
    let zone = origin.zone;
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

/// The full name of a name token, accepted only in the form [`push_name`] writes for a served name.
fn name(tok: Option<&str>, origin: &Origin<'_>) -> Result<String, String> {
    let mut full = String::new();
    push_full_name(tok, origin, &mut full)?;
    Ok(full)
}

/// Header and lines: every byte the self-digest covers.
///
/// The lines are written first, to a buffer of their own, and the source table is built as they are
/// (in order of first use, as the header lists it): each record's name and sources are then read
/// once. At 100,000 names they are scattered over the heap, and a second pass to build the table
/// first cost more in cache misses than copying the lines behind the header does.
pub(super) fn encode_body(g: &Generation, out: &mut Vec<u8>) {
    let origin = Origin::new(&g.zone, &g.zones);
    let mut lines = Vec::with_capacity(64 * (g.records.len() + g.ptr.len()));
    let mut table: Vec<&str> = Vec::new();
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for r in &g.records {
        lines.extend_from_slice(RECORD.as_bytes());
        push_name(&mut lines, &r.name, &origin);
        lines.push(b' ');
        push_ipv4(&mut lines, r.address);
        for s in &r.sources {
            let (base, digits) = split_source(s);
            let k = *index.entry(base).or_insert_with(|| {
                table.push(base);
                table.len() - 1
            });
            lines.push(b' ');
            push_decimal(&mut lines, k);
            if let Some(d) = digits {
                lines.push(b'[');
                lines.extend_from_slice(d.as_bytes());
                lines.push(b']');
            }
        }
        lines.push(b'\n');
    }
    for p in &g.ptr {
        lines.extend_from_slice(PTR.as_bytes());
        push_ipv4(&mut lines, p.address);
        lines.push(b' ');
        push_name(&mut lines, &p.name, &origin);
        lines.push(b'\n');
    }
    header(g, &table, out);
    out.extend_from_slice(&lines);
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

/// The tokens of a line, separated by single spaces. Cut at bytes: `str::split`'s searcher cost more
/// than the few bytes of each token at 100,000 lines, and a space is one byte, so every cut is at a
/// char boundary.
fn tokens(line: &str) -> impl Iterator<Item = Result<&str, String>> {
    let mut rest = Some(line);
    std::iter::from_fn(move || {
        let s = rest?;
        let tok = match s.bytes().position(|b| b == b' ') {
            Some(i) => {
                rest = Some(&s[i + 1..]);
                &s[..i]
            }
            None => {
                rest = None;
                s
            }
        };
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
        let bad = || {
            format!(
                "the source {} is not a table entry as it is written",
                quote(tok)
            )
        };
        let open = |t: &'k str| {
            let i = t.bytes().position(|b| b == b'[')?;
            Some((&t[..i], &t[i + 1..]))
        };
        let (k, digits) = match tok.strip_suffix(']').and_then(open) {
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
                "the source {} refers past the table's entries in order of first use",
                quote(tok)
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
            return Err(format!(
                "the source {} is not split as it is written",
                quote(base)
            ));
        }
        Ok((base, digits))
    }
}

/// An address token, accepted only as `Ipv4Addr` writes it: four decimal octets, no leading zero.
fn address(tok: Option<Result<&str, String>>) -> Result<Ipv4Addr, String> {
    let tok = tok.ok_or("an address is missing")??;
    ipv4(tok.as_bytes())
        .ok_or_else(|| format!("{} is not an IPv4 address as it is written", quote(tok)))
}

/// [`address`] over the bytes in one pass: 1-3 digits an octet, no leading zero, at most 255, dots
/// between, nothing after.
fn ipv4(b: &[u8]) -> Option<Ipv4Addr> {
    let mut octets = [0u8; 4];
    let mut i = 0;
    for (n, o) in octets.iter_mut().enumerate() {
        if n > 0 {
            if b.get(i) != Some(&b'.') {
                return None;
            }
            i += 1;
        }
        let start = i;
        let mut v = 0u32;
        while i < b.len() && i - start < 3 && b[i].is_ascii_digit() {
            v = v * 10 + u32::from(b[i] - b'0');
            i += 1;
        }
        if i == start || (i - start > 1 && b[start] == b'0') {
            return None;
        }
        *o = u8::try_from(v).ok()?;
    }
    (i == b.len()).then(|| octets.into())
}

/// The lines of `s`, as `split_terminator('\n')` gives them, cut at bytes (see [`tokens`]).
fn lines_of(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (line, next) = match rest.bytes().position(|b| b == b'\n') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, ""),
        };
        rest = next;
        Some(line)
    })
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

/// A format-2 file's parts and header, with `verify` once its self-digest over the raw bytes holds:
/// nothing of the lines is read.
fn header_parts(bytes: &[u8], verify: bool) -> Result<(Parts<'_>, HeaderIn), String> {
    let parts = split(bytes)?;
    if verify && sha256_hex(parts.body) != parts.digest {
        return Err("fails its self-digest (the file was changed after it was sealed)".into());
    }
    count_strings(parts.head)?;
    let h: HeaderIn = serde_json::from_slice(parts.head).map_err(|e| not_a_file(&e.to_string()))?;
    if h.format != FORMAT {
        return Err(format!(
            "has format {}, this pigsty-dns reads formats {FORMAT_JSON} and {FORMAT}",
            h.format
        ));
    }
    Ok((parts, h))
}

/// The encoder lists each source once; a repeated entry could only be written by hand.
fn sources_listed_once(h: &HeaderIn) -> Result<(), String> {
    let mut entries = std::collections::HashSet::with_capacity(h.sources.len());
    match h.sources.iter().find(|s| !entries.insert(s.as_str())) {
        Some(twice) => Err(format!(
            "is not in canonical form (its header lists the source {} twice)",
            quote(twice)
        )),
        None => Ok(()),
    }
}

/// Why line `n` of a file is not canonical.
fn at_line(n: usize, why: &str) -> String {
    format!("is not in canonical form (line {n}: {why}; the file was changed after it was sealed)")
}

fn counts_match(h: &HeaderIn, records: usize, ptr: usize) -> Result<(), String> {
    if records != h.record_lines || ptr != h.ptr_lines {
        return Err(format!(
            "is not in canonical form (its header counts {} records and {} PTRs, its lines hold {records} and {ptr})",
            h.record_lines, h.ptr_lines
        ));
    }
    Ok(())
}

/// The header's bytes are exactly what the encoder writes for it.
fn header_reencodes(h: &HeaderIn, head: &[u8]) -> Result<(), String> {
    let mut again = Vec::with_capacity(head.len());
    let sources: Vec<&str> = h.sources.iter().map(String::as_str).collect();
    write_header(
        &HeaderOut {
            format: h.format,
            zone: &h.zone,
            zones: &h.zones,
            serial: h.serial,
            created: &h.created,
            input: &h.input,
            ttl: h.ttl,
            soa: &h.soa,
            ns: &h.ns,
            record_lines: h.record_lines,
            ptr_lines: h.ptr_lines,
            sources: &sources,
            not_served: &h.not_served,
            skipped_hosts: &h.skipped_hosts,
            record_digest: &h.record_digest,
        },
        &mut again,
    );
    if again != head {
        return Err(
            "is not in canonical form (its header; the file was changed after it was sealed)"
                .into(),
        );
    }
    Ok(())
}

/// [`name`] appended to `out`: the same tokens accepted, the same full name.
fn push_full_name(tok: Option<&str>, origin: &Origin<'_>, out: &mut String) -> Result<(), String> {
    let zone = origin.zone;
    let tok = tok.ok_or("a name is missing")?;
    if tok == "@" {
        out.push_str(zone);
        return Ok(());
    }
    if let Some(full) = tok.strip_suffix('.') {
        if origin.in_other_zone(full) {
            out.push_str(full);
            return Ok(());
        }
        return Err(format!(
            "has the record {full_q}, which is not a canonical name in zone {zone}",
            full_q = quote(full)
        ));
    }
    out.reserve(tok.len() + 1 + zone.len());
    out.push_str(tok);
    out.push('.');
    out.push_str(zone);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte-level readers accept exactly what their `str` definitions do.
    #[test]
    fn byte_cuts_agree_with_their_definitions() {
        let mut cases: Vec<String> = [
            "",
            ".",
            "1.2.3.4",
            "10.10.10.11",
            "0.0.0.0",
            "255.255.255.255",
            "256.1.1.1",
            "1.2.3.256",
            "01.2.3.4",
            "1.2.3.04",
            "1.2.3.00",
            "1.2.3",
            "1.2.3.4.",
            ".1.2.3.4",
            "1..2.3",
            "1.2.3.4 ",
            "1.2.3.+4",
            "1.2.3.-4",
            "1234.1.1.1",
            "1.2.3.4a",
            "a.b.c.d",
            "999.1.1.1",
            "1.2.3.4.5",
            "10.10.10.1\u{e9}",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for o in 0..=300u32 {
            cases.push(format!("10.10.10.{o}"));
            cases.push(format!("10.10.10.0{o}"));
        }
        for c in &cases {
            let canonical = c.parse::<Ipv4Addr>().ok().filter(|a| a.to_string() == *c);
            assert_eq!(ipv4(c.as_bytes()), canonical, "{c:?}");
        }
        for s in ["", "a", "a b", "a  b", " a", "a ", "a b c", "é b"] {
            let want: Vec<_> = s.split(' ').map(|t| (!t.is_empty()).then_some(t)).collect();
            let got: Vec<_> = tokens(s).map(|t| t.ok()).collect();
            assert_eq!(got, want, "{s:?}");
        }
        for s in ["", "\n", "a", "a\n", "a\nb", "a\nb\n", "a\n\nb\n", "\n\n"] {
            let want: Vec<_> = s.split_terminator('\n').collect();
            assert_eq!(lines_of(s).collect::<Vec<_>>(), want, "{s:?}");
        }
    }
}
