//! A sealed generation: the records of one successful `load`, with its canonical encoding and its two
//! digests. A generation is immutable; a change is a new generation.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::name::{self, Zone};
use crate::records::{NotServed, Ptr, Record, RecordSet, SkippedHost};

/// Version of the on-disk generation format; a reader refuses any other.
pub const FORMAT: u32 = 1;
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
    let d = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in d {
        s.push_str(&format!("{b:02x}"));
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
    let mut text = format!(
        "pigsty-dns records v1\nzone {zone}\nttl {ttl}\nsoa {} {} {} {} {} {}\n",
        soa.mname, soa.rname, soa.refresh, soa.retry, soa.expire, soa.minimum
    );
    for n in ns {
        text.push_str(&format!("ns {n}\n"));
    }
    for r in records {
        text.push_str(&format!("a {} {}\n", r.name, r.address));
    }
    for p in ptr {
        text.push_str(&format!("ptr {} {}\n", p.address, p.name));
    }
    sha256_hex(text.as_bytes())
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
            records: set.records.clone(),
            ptr: set.ptr.clone(),
            not_served: set.not_served.clone(),
            skipped_hosts: set.skipped_hosts.clone(),
            record_digest: digest,
        }
    }

    /// The canonical file bytes: pretty JSON of [`Sealed`] with a final newline. Deterministic because
    /// every collection in a generation is a sorted `Vec` and struct fields serialize in declaration order.
    pub fn encode(&self) -> Vec<u8> {
        let sealed = Sealed {
            generation: self.clone(),
            self_digest: self.self_digest(),
        };
        encode_sealed(&sealed)
    }

    pub fn self_digest(&self) -> String {
        // Streamed into the hash: no second copy of a large generation in memory. serde_json cannot
        // fail on these plain types; a failed write would fail every later check anyway.
        let mut h = HashWriter(Sha256::new());
        let _ = serde_json::to_writer(&mut h, self);
        let mut s = String::with_capacity(64);
        for b in h.0.finalize() {
            s.push_str(&format!("{b:02x}"));
        }
        s
    }

    /// Parses and fully checks a generation file: format, exact canonical bytes, self-digest, record
    /// digest, and every record against the same rules `load` applies. Returns why when it does not check out.
    pub fn decode(bytes: &[u8]) -> Result<Generation, String> {
        count_strings(bytes)?;
        let sealed: Sealed =
            serde_json::from_slice(bytes).map_err(|e| format!("is not a generation file ({e})"))?;
        let g = sealed.generation;
        if g.format != FORMAT {
            return Err(format!(
                "has format {}, this pigsty-dns reads format {FORMAT}",
                g.format
            ));
        }
        if g.self_digest() != sealed.self_digest {
            return Err("fails its self-digest (the file was changed after it was sealed)".into());
        }
        let sealed = Sealed {
            generation: g,
            self_digest: sealed.self_digest,
        };
        if !is_canonical(&sealed, bytes) {
            return Err(
                "is not in canonical form (the file was changed after it was sealed)".into(),
            );
        }
        sealed.generation.check()?;
        Ok(sealed.generation)
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
            let folded = name::fold_host_name(&r.name)
                .map_err(|e| format!("has an invalid record name: {e}"))?;
            if folded != r.name
                || name::place(&r.name, &zone) != name::Placement::Served(r.name.clone())
            {
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
        if record_digest(
            &self.zone,
            self.ttl,
            &self.soa,
            &self.ns,
            &self.records,
            &self.ptr,
        ) != self.record_digest
        {
            return Err("fails its record digest".into());
        }
        Ok(())
    }
}

/// Refuses bytes holding more than [`MAX_STRINGS`] JSON strings, in one pass without allocating.
pub fn count_strings(bytes: &[u8]) -> Result<(), String> {
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
    Ok(())
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
}
