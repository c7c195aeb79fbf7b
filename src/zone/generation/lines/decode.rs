//! The readers of format 2: a whole generation (its sources kept, checked or skipped), what its
//! sealed header claims, and `load`'s diff base. Each reads the lines strictly, so what parses is
//! canonical.

use super::super::{DiffBase, Generation, HeaderClaim, MAX_STRINGS, Ptr, Record, RecordDigest};
use super::{
    HeaderIn, Origin, PTR, Parts, RECORD, SourceLines, Sources, address, at_line, counts_match,
    header_parts, header_reencodes, lines_of, name, not_a_file, push_full_name, source_budget,
    sources_listed_once, tokens, too_many,
};

/// Parses format 2. With `verify`, the self-digest is checked on the raw bytes before anything is
/// parsed and the header must re-encode to its bytes. The lines are read strictly (single spaces,
/// addresses and sources only in the form [`encode_body`] writes them), so what parses is canonical.
/// `sources` says what becomes of a record's sources.
pub(in crate::zone::generation) fn decode(
    bytes: &[u8],
    verify: bool,
    sources: SourceLines,
) -> Result<(Generation, String), String> {
    decode_lines(bytes, verify, sources, false).map(|(g, digest, _)| (g, digest))
}

/// [`decode`] with the self-digest checked, and the record digest of what the lines hold, computed as
/// they are read (see [`RecordDigest`]): the same as [`super::record_digest`] of the result.
pub(in crate::zone::generation) fn decode_digesting(
    bytes: &[u8],
    sources: SourceLines,
) -> Result<(Generation, String, String), String> {
    decode_lines(bytes, true, sources, true)
        .map(|(g, digest, records)| (g, digest, records.unwrap_or_default()))
}

fn decode_lines(
    bytes: &[u8],
    verify: bool,
    sources: SourceLines,
    digesting: bool,
) -> Result<(Generation, String, Option<String>), String> {
    let with_sources = sources != SourceLines::Skip;
    let (
        Parts {
            head,
            lines,
            digest,
            ..
        },
        h,
    ) = header_parts(bytes, verify)?;
    let lines = std::str::from_utf8(lines).map_err(|_| not_a_file("a line is not UTF-8"))?;
    let first_line = head.iter().filter(|&&b| b == b'\n').count() + 1;
    // The header's counts size the vectors, bounded by what the bytes can hold.
    let mut records = Vec::with_capacity(h.record_lines.min(lines.len() / 16));
    let mut ptr = Vec::with_capacity(h.ptr_lines.min(lines.len() / 16));
    let mut strings = 0usize;
    sources_listed_once(&h)?;
    let mut table = Sources {
        table: &h.sources,
        used: 0,
        budget: source_budget(bytes.len()),
    };
    let origin = Origin::new(&h.zone, &h.zones);
    let mut text = digesting.then(|| RecordDigest::new(&h.zone, &h.zones, h.ttl, &h.soa, &h.ns));
    for (i, line) in lines_of(lines).enumerate() {
        let at = |why: String| at_line(first_line + i, &why);
        if let Some(rest) = line.strip_prefix(RECORD) {
            if !ptr.is_empty() {
                return Err(at("a record after the PTR lines".into()));
            }
            let r = record_line(rest, &origin, sources, &mut table, &mut strings).map_err(&at)?;
            if let Some(text) = &mut text {
                text.record(&r.name, r.address);
            }
            records.push(r);
        } else if let Some(rest) = line.strip_prefix(PTR) {
            let p = ptr_line(rest, &origin).map_err(&at)?;
            if let Some(text) = &mut text {
                text.ptr(p.address, &p.name);
            }
            strings += 1;
            ptr.push(p);
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
    counts_match(&h, records.len(), ptr.len())?;
    // The counts match, so the header re-encodes from `h` as from the generation it becomes.
    if verify {
        header_reencodes(&h, head)?;
    }
    let g = generation(h, records, ptr);
    Ok((g, digest.to_string(), text.map(RecordDigest::finish)))
}

/// One record line past its keyword: its name, its address, and its sources as `mode` says (each
/// source counted in `strings`, the name too).
fn record_line(
    rest: &str,
    zone: &Origin<'_>,
    mode: SourceLines,
    table: &mut Sources<'_>,
    strings: &mut usize,
) -> Result<Record, String> {
    let mut t = tokens(rest);
    let name = name(t.next().transpose()?, zone)?;
    let address = address(t.next())?;
    let sources = match mode {
        SourceLines::Keep => t
            .map(|tok| tok.and_then(|tok| table.read(tok)))
            .collect::<Result<Vec<_>, _>>()?,
        SourceLines::Check => {
            for tok in t {
                table.check(tok?)?;
                *strings += 1;
            }
            Vec::new()
        }
        SourceLines::Skip => Vec::new(),
    };
    *strings += 1 + sources.len();
    Ok(Record {
        name,
        address,
        sources,
    })
}

/// One PTR line past its keyword: an address and a name, nothing more.
fn ptr_line(rest: &str, zone: &Origin<'_>) -> Result<Ptr, String> {
    let mut t = tokens(rest);
    let address = address(t.next())?;
    let name = name(t.next().transpose()?, zone)?;
    if t.next().is_some() {
        return Err("a PTR line has more than an address and a name".into());
    }
    Ok(Ptr { address, name })
}

/// The generation a checked header and its lines make.
fn generation(h: HeaderIn, records: Vec<Record>, ptr: Vec<Ptr>) -> Generation {
    Generation {
        format: h.format,
        zone: h.zone,
        zones: h.zones,
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
    }
}

/// What a format-2 file's sealed header claims ([`Generation::decode_claim`]).
pub(in crate::zone::generation) fn decode_claim(
    bytes: &[u8],
) -> Result<(HeaderClaim, String), String> {
    let (parts, h) = header_parts(bytes, true)?;
    let claim = HeaderClaim {
        serial: h.serial,
        record_digest: h.record_digest,
    };
    Ok((claim, parts.digest.to_string()))
}

/// Reads a format-2 file as `load`'s diff base ([`Generation::decode_diff_base`]): it accepts exactly
/// the files that [`decode`] with `verify` and [`SourceLines::Skip`] accepts and whose record digest
/// holds, and keeps only what the diff and the "unchanged" check read.
pub(in crate::zone::generation) fn decode_diff_base(
    bytes: &[u8],
) -> Result<(DiffBase, String), String> {
    let (
        Parts {
            head,
            lines,
            digest,
            ..
        },
        h,
    ) = header_parts(bytes, true)?;
    let lines = std::str::from_utf8(lines).map_err(|_| not_a_file("a line is not UTF-8"))?;
    let first_line = head.iter().filter(|&&b| b == b'\n').count() + 1;
    sources_listed_once(&h)?;
    let mut base = DiffBase {
        serial: h.serial,
        record_digest: String::new(),
        names: String::with_capacity(lines.len()),
        records: Vec::with_capacity(h.record_lines.min(lines.len() / 16)),
        ptr: Vec::with_capacity(h.ptr_lines.min(lines.len() / 16)),
    };
    let origin = Origin::new(&h.zone, &h.zones);
    let mut digest_of = RecordDigest::new(&h.zone, &h.zones, h.ttl, &h.soa, &h.ns);
    let mut strings = 0usize;
    for (i, line) in lines_of(lines).enumerate() {
        let at = |why: String| at_line(first_line + i, &why);
        if let Some(rest) = line.strip_prefix(RECORD) {
            if !base.ptr.is_empty() {
                return Err(at("a record after the PTR lines".into()));
            }
            // As `decode` reads a record's name and address; the sources after them are not read.
            let mut t = tokens(rest);
            let start = base.names.len();
            push_full_name(t.next().transpose().map_err(&at)?, &origin, &mut base.names)
                .map_err(&at)?;
            let address = address(t.next()).map_err(&at)?;
            base.push_record(address);
            digest_of.record(&base.names[start..], address);
        } else if let Some(rest) = line.strip_prefix(PTR) {
            base.ptr.push(ptr_line(rest, &origin).map_err(&at)?);
        } else {
            return Err(at("neither a record (`a `) nor a PTR (`ptr `) line".into()));
        }
        strings += 1;
        if strings > MAX_STRINGS {
            return Err(too_many());
        }
    }
    counts_match(&h, base.records.len(), base.ptr.len())?;
    header_reencodes(&h, head)?;
    for p in &base.ptr {
        digest_of.ptr(p.address, &p.name);
    }
    if digest_of.finish() != h.record_digest {
        return Err("fails its record digest".into());
    }
    base.record_digest = h.record_digest;
    Ok((base, digest.to_string()))
}
