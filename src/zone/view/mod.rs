//! The read-only view the server answers from: one per generation, or the empty zone before the first.
//! It holds the name index and the apex records already in wire form. Like NSD, which builds its SOA,
//! negative SOA and NS RRsets when a zone loads and never per query, the view encodes them once, when it
//! is built, and refuses a generation whose apex cannot be encoded; the query path only copies bytes.

use std::net::Ipv4Addr;

use crate::defaults;
use crate::dns::name::{Zone, Zones, in_zone, in_zone_bytes};
use crate::dns::wire::{self, PTR_QNAME, TYPE_A, TYPE_NS, TYPE_SOA};
use crate::zone::generation::{Generation, Soa};
use crate::zone::reverse::ReverseView;
pub use crate::zone::view_error::ZoneViewError;

/// What a name is in the served zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Node {
    /// The name has an A record (the apex may have one too).
    Address(Ipv4Addr),
    /// The name exists but holds no A: the apex without one, or an empty non-terminal (RFC 8020).
    Empty,
}

/// The records the answers carry, in wire form, built once per view.
#[derive(Debug, Clone)]
struct Encoded {
    /// An A record up to its address: owner (pointer to the question), type, class, TTL, RDLENGTH 4.
    a_head: [u8; 12],
    /// The apex SOA as an answer: owner is the question (which is the apex), TTL the zone's.
    soa_answer: Box<[u8]>,
    /// The apex NS RRset as an answer, owners pointing at the question.
    ns_answer: Box<[u8]>,
    ns_count: u16,
    /// The SOA of a negative answer after its owner (a pointer to the apex inside the question, which
    /// the encoder writes): type, class, the negative TTL, RDLENGTH and rdata.
    negative_soa: Box<[u8]>,
}

/// The read-only view the server answers from: one per generation, or an empty zone (serial 0).
#[derive(Debug, Clone)]
pub struct ZoneView {
    zones: Zones,
    serial: u32,
    ttl: u32,
    negative_ttl: u32,
    record_digest: Option<String>,
    records: usize,
    /// Every served name, every empty non-terminal and the apex, lowercase, without the trailing dot.
    names: Index,
    /// Each zone's apex records, in the order of `zones`.
    encoded: Vec<Encoded>,
    /// The reverse zone of the same generation, so one swap replaces both zones.
    reverse: Option<ReverseView>,
}

impl ZoneView {
    /// The zones with no generation yet: each apex's SOA (serial 0) and NS, NXDOMAIN below it. Fails
    /// only for a zone so long that its SOA RNAME (`hostmaster.<zone>.`) is over 255 octets.
    pub fn empty(zones: impl Into<Zones>) -> Result<ZoneView, ZoneViewError> {
        let zones = zones.into();
        let bytes = zones.iter().map(|z| z.as_str().len()).sum();
        let mut names = Index::with_capacity(zones.len(), bytes);
        let mut encoded = Vec::with_capacity(zones.len());
        for z in &zones {
            names.insert(z.as_str(), Node::Empty, true);
            let soa = Soa::for_zone(z, defaults::NEGATIVE_TTL);
            encoded.push(encode(0, defaults::TTL, &soa, &["localhost.".to_string()])?);
        }
        let soa = Soa::for_zone(zones.first(), defaults::NEGATIVE_TTL);
        Ok(ZoneView {
            zones,
            serial: 0,
            ttl: defaults::TTL,
            negative_ttl: negative_ttl(defaults::TTL, &soa),
            record_digest: None,
            records: 0,
            names,
            encoded,
            reverse: None,
        })
    }

    /// Builds the lookup index of a checked generation, including every empty non-terminal, and encodes
    /// its apex records; refuses a generation whose SOA or NS cannot be encoded. It serves the zones
    /// the generation was sealed with.
    pub fn from_generation(g: &Generation) -> Result<ZoneView, ZoneViewError> {
        let zones = g.served_zones().map_err(ZoneViewError::Zone)?;
        ZoneView::from_generation_in(g, &zones)
    }

    /// [`ZoneView::from_generation`] serving `served`, which holds the generation's zones (checked by
    /// the caller) and maybe more: a zone the generation does not know has its apex and nothing else.
    pub fn from_generation_in(g: &Generation, served: &Zones) -> Result<ZoneView, ZoneViewError> {
        let zones = served.clone();
        let mut encoded = Vec::with_capacity(zones.len());
        for z in &zones {
            // Every apex's SOA is the one load writes for its zone (the generation's is the first's),
            // with the generation's timers and serial.
            let soa = Soa {
                rname: format!("hostmaster.{z}."),
                ..g.soa.clone()
            };
            encoded.push(encode(g.serial, g.ttl, &soa, &g.ns)?);
        }
        let apexes: usize = zones.iter().map(|z| z.as_str().len()).sum();
        let bytes = apexes + g.records.iter().map(|r| r.name.len()).sum::<usize>();
        let mut names = Index::with_capacity(g.records.len() + zones.len(), bytes);
        for z in &zones {
            names.insert(z.as_str(), Node::Empty, true);
        }
        // A generation of zones this server does not serve (a default load under a one-zone unit):
        // their names are left out of the index, so the view holds and counts what it answers.
        let all_served = g
            .zone_list()
            .iter()
            .all(|z| zones.iter().any(|s| s.as_str() == *z));
        insert_records(&mut names, g, &zones, all_served);
        for r in &g.records {
            empty_non_terminals(&mut names, &r.name, &zones);
        }
        names.shrink();
        let records = names.addresses();
        Ok(ZoneView {
            zones,
            serial: g.serial,
            ttl: g.ttl,
            negative_ttl: negative_ttl(g.ttl, &g.soa),
            record_digest: Some(g.record_digest.clone()),
            records,
            names,
            encoded,
            reverse: ReverseView::from_generation(g)?,
        })
    }

    /// The first zone, where a single label goes.
    pub fn zone(&self) -> &Zone {
        self.zones.first()
    }

    /// Every served forward zone.
    pub fn zones(&self) -> &Zones {
        &self.zones
    }

    /// The index (in [`ZoneView::zones`]) of the forward zone a lowercase wire-text name is at or
    /// under.
    pub(crate) fn zone_index(&self, name: &[u8]) -> Option<usize> {
        self.zones
            .iter()
            .position(|z| in_zone_bytes(name, z.as_str().as_bytes()))
    }

    pub fn serial(&self) -> u32 {
        self.serial
    }

    /// TTL of every served record and of the SOA and NS.
    pub fn ttl(&self) -> u32 {
        self.ttl
    }

    /// TTL of the SOA in negative answers: min(SOA TTL, SOA MINIMUM) (RFC 2308 §5).
    pub fn negative_ttl(&self) -> u32 {
        self.negative_ttl
    }

    pub fn record_digest(&self) -> Option<&str> {
        self.record_digest.as_deref()
    }

    /// Names with an address.
    pub fn record_count(&self) -> usize {
        self.records
    }

    /// The reverse zone (`None` for the empty zone and for generations without PTRs).
    pub fn reverse(&self) -> Option<&ReverseView> {
        self.reverse.as_ref()
    }

    /// Looks up a lowercase name without the trailing dot. `None` is NXDOMAIN.
    pub fn lookup(&self, name: &str) -> Option<Node> {
        self.names.get(name.as_bytes())
    }

    /// An A record up to its 4 address bytes, owned by the question name (the same in every zone).
    pub(crate) fn a_head(&self) -> &[u8; 12] {
        &self.encoded[0].a_head
    }

    /// Zone `i`'s apex SOA record, owned by the question name.
    pub(crate) fn soa_answer(&self, i: usize) -> &[u8] {
        &self.encoded[i].soa_answer
    }

    /// Zone `i`'s apex NS records, owned by the question name, and how many there are.
    pub(crate) fn ns_answer(&self, i: usize) -> (&[u8], u16) {
        (&self.encoded[i].ns_answer, self.encoded[i].ns_count)
    }

    /// Zone `i`'s negative-answer SOA without its owner: the caller writes a pointer to the apex first.
    pub(crate) fn negative_soa_after_owner(&self, i: usize) -> &[u8] {
        &self.encoded[i].negative_soa
    }
}

/// The name index: every name back to back in one arena, one small fixed-size entry per name, and an
/// open-addressing table of entry numbers. Built without an allocation per name (100,000 names are three
/// allocations), and a lookup is one hash and, at a load of at most a half, about one probe.
#[derive(Debug, Clone, Default)]
struct Index {
    arena: Vec<u8>,
    entries: Vec<Entry>,
    /// Entry number + 1 per slot, 0 for a free slot; the length is a power of two.
    slots: Vec<u32>,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    start: u32,
    /// A DNS name is at most 253 octets in text.
    len: u8,
    /// `None` for an empty non-terminal or the apex without an A.
    address: Option<Ipv4Addr>,
}

/// FxHash's mix over 8-byte words: the names are ours (the table's contents are not chosen by a
/// client), so a keyed hash buys nothing a query could exploit.
fn hash(name: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mix = |h: u64, w: [u8; 8]| (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    let mut h = name.len() as u64;
    // Whole words read as they are; only the last, short one is copied out (a copy per word was a
    // `memcpy` call, and its load waited for the copy's bytes).
    let mut words = name.chunks_exact(8);
    for w in &mut words {
        h = mix(h, w.try_into().unwrap_or_default());
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        let mut w = [0u8; 8];
        w[..tail.len()].copy_from_slice(tail);
        h = mix(h, w);
    }
    h
}

/// The home slot of a hash in a table of `len` (a power of two) slots: its top bits. The low bits of
/// a product depend only on the low bits of its factors, so with FxHash they hardly depend on the
/// first words of a name: zone names that differ early (`host-1.pigsty.test`, `host-2.…`, their last
/// word the same `test`) crowded into runs (a mean probe of 7 slots, 120 at most, at 100,000 names;
/// 0.3 and 18 with the top bits).
fn home(h: u64, len: usize) -> usize {
    (h >> (64 - len.trailing_zeros())) as usize
}

/// Records placed per batch in [`ZoneView::from_generation`]: enough cache misses in flight to hide most
/// of their latency, few enough that the batch's slots stay cached until they are written.
const WARM_BATCH: usize = 32;

impl Index {
    fn with_capacity(names: usize, bytes: usize) -> Index {
        Index {
            arena: Vec::with_capacity(bytes),
            entries: Vec::with_capacity(names),
            slots: vec![0; (names * 2).next_power_of_two().max(4)],
        }
    }

    fn name(&self, e: &Entry) -> &[u8] {
        &self.arena[e.start as usize..e.start as usize + usize::from(e.len)]
    }

    /// The slot holding `name` (of hash `h`), or the free slot where it would go.
    fn slot(&self, name: &[u8], h: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = home(h, self.slots.len());
        loop {
            match self.slots[i] {
                0 => return i,
                n if self.name(&self.entries[n as usize - 1]) == name => return i,
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// The first free slot on the probe run of hash `h`.
    fn free_slot(&self, h: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = home(h, self.slots.len());
        while self.slots[i] != 0 {
            i = (i + 1) & mask;
        }
        i
    }

    /// Reads the home slots of `hashes` in one go, so that the cache misses of a batch of inserts
    /// overlap; what is read does not matter.
    fn warm(&self, hashes: &[u64]) {
        let mut any = 0;
        for &h in hashes {
            any |= self.slots[home(h, self.slots.len())];
        }
        std::hint::black_box(any);
    }

    fn get(&self, name: &[u8]) -> Option<Node> {
        match self.slots[self.slot(name, hash(name))] {
            0 => None,
            n => Some(match self.entries[n as usize - 1].address {
                Some(a) => Node::Address(a),
                None => Node::Empty,
            }),
        }
    }

    /// Adds `name`; an existing one is replaced only with `replace`. Whether the name was new. A name
    /// over 255 octets (never in a checked generation) is not indexed, so it is never found.
    fn insert(&mut self, name: &str, node: Node, replace: bool) -> bool {
        self.insert_hashed(name, hash(name.as_bytes()), node, replace, false)
    }

    /// [`Index::insert`] of a name of hash `h`; with `new`, the caller knows `name` is not in the index
    /// yet, and its slot is the first free one on its probe run (where [`Index::slot`] would find it),
    /// found without comparing names.
    fn insert_hashed(&mut self, name: &str, h: u64, node: Node, replace: bool, new: bool) -> bool {
        let (Ok(len), Ok(start)) = (u8::try_from(name.len()), u32::try_from(self.arena.len()))
        else {
            return false;
        };
        let address = match node {
            Node::Address(a) => Some(a),
            Node::Empty => None,
        };
        let i = if new {
            self.free_slot(h)
        } else {
            self.slot(name.as_bytes(), h)
        };
        if self.slots[i] != 0 {
            if replace {
                self.entries[self.slots[i] as usize - 1].address = address;
            }
            return false;
        }
        self.arena.extend_from_slice(name.as_bytes());
        self.entries.push(Entry {
            start,
            len,
            address,
        });
        self.slots[i] = self.entries.len() as u32;
        if self.entries.len() * 2 > self.slots.len() {
            self.rehash(self.slots.len() * 2);
        }
        true
    }

    fn rehash(&mut self, size: usize) {
        self.slots = vec![0; size];
        for n in 0..self.entries.len() {
            let name = self.name(&self.entries[n]);
            let i = self.slot(name, hash(name));
            self.slots[i] = n as u32 + 1;
        }
    }

    /// Gives back the room reserved for empty non-terminals that did not occur.
    fn shrink(&mut self) {
        self.arena.shrink_to_fit();
        self.entries.shrink_to_fit();
    }

    fn addresses(&self) -> usize {
        self.entries.iter().filter(|e| e.address.is_some()).count()
    }
}

/// Places a checked generation's records in the index.
///
/// A checked generation's records are sorted, distinct and below an apex, so each is new and is
/// placed without name compares along its probe run (`memcmp` and `Index::slot` were 42% of a
/// swap's samples at 100,000 names). Any other order still goes through the comparing insert.
/// In batches: the home slots of a batch are read first, so their cache misses (a random slot of a
/// 1 MiB table each; that load was two thirds of the inserts' samples) overlap instead of coming one
/// insert after another.
fn insert_records(names: &mut Index, g: &Generation, zones: &Zones, all_served: bool) {
    let mut highest = "";
    for batch in g.records.chunks(WARM_BATCH) {
        let mut hashes = [0u64; WARM_BATCH];
        for (h, r) in hashes.iter_mut().zip(batch) {
            *h = hash(r.name.as_bytes());
        }
        names.warm(&hashes[..batch.len()]);
        for (r, &h) in batch.iter().zip(&hashes) {
            if !all_served && !zones.iter().any(|z| in_zone(&r.name, z.as_str())) {
                continue;
            }
            // One compare a record: a name above the highest so far is the new highest.
            let new = r.name.as_str() > highest;
            if new {
                highest = r.name.as_str();
            }
            let new = new && !zones.iter().any(|z| r.name == z.as_str());
            names.insert_hashed(&r.name, h, Node::Address(r.address), true, new);
        }
    }
}

/// Indexes the empty non-terminals above `name`: walks up from its parent to its zone's apex and
/// stops early once a known node is met.
fn empty_non_terminals(names: &mut Index, name: &str, zones: &Zones) {
    let Some(zone) = zones.iter().find(|z| in_zone(name, z.as_str())) else {
        return;
    };
    let zone_suffix_len = zone.as_str().len();
    let mut rest = name;
    while rest.len() > zone_suffix_len {
        // Cut at the byte: `split_once`'s searcher cost more than these short labels.
        let Some(dot) = rest.bytes().position(|b| b == b'.') else {
            break;
        };
        let parent = &rest[dot + 1..];
        // The apex is in the index already: no probe for it (one per record directly below it).
        if parent.len() <= zone_suffix_len || !names.insert(parent, Node::Empty, false) {
            break;
        }
        rest = parent;
    }
}

fn negative_ttl(ttl: u32, soa: &Soa) -> u32 {
    ttl.min(soa.minimum)
}

fn name_rdata(out: &mut Vec<u8>, field: &'static str, name: &str) -> Result<(), ZoneViewError> {
    wire::push_name(out, name).ok_or_else(|| ZoneViewError::Name {
        field,
        name: name.to_string(),
    })
}

fn encode(serial: u32, ttl: u32, soa: &Soa, ns: &[String]) -> Result<Encoded, ZoneViewError> {
    let mut soa_rdata = Vec::with_capacity(64);
    name_rdata(&mut soa_rdata, "SOA MNAME", &soa.mname)?;
    name_rdata(&mut soa_rdata, "SOA RNAME", &soa.rname)?;
    for v in [serial, soa.refresh, soa.retry, soa.expire, soa.minimum] {
        wire::push_u32(&mut soa_rdata, v);
    }

    let mut soa_answer = PTR_QNAME.to_vec();
    wire::push_rr_after_owner(&mut soa_answer, TYPE_SOA, ttl, &soa_rdata);
    let mut negative_soa = Vec::with_capacity(10 + soa_rdata.len());
    wire::push_rr_after_owner(
        &mut negative_soa,
        TYPE_SOA,
        negative_ttl(ttl, soa),
        &soa_rdata,
    );

    let ns_count = u16::try_from(ns.len()).map_err(|_| ZoneViewError::TooManyNs(ns.len()))?;
    let mut ns_answer = Vec::new();
    let mut rdata = Vec::with_capacity(32);
    for name in ns {
        rdata.clear();
        name_rdata(&mut rdata, "NS name", name)?;
        ns_answer.extend_from_slice(&PTR_QNAME);
        wire::push_rr_after_owner(&mut ns_answer, TYPE_NS, ttl, &rdata);
    }

    // A whole A record with a placeholder address, of which the answers take all but the address.
    let mut a_record = PTR_QNAME.to_vec();
    wire::push_rr_after_owner(&mut a_record, TYPE_A, ttl, &[0; 4]);
    let mut a_head = [0u8; 12];
    a_head.copy_from_slice(&a_record[..12]);

    Ok(Encoded {
        a_head,
        soa_answer: soa_answer.into_boxed_slice(),
        ns_answer: ns_answer.into_boxed_slice(),
        ns_count,
        negative_soa: negative_soa.into_boxed_slice(),
    })
}

/// One way for tests (the crate's and, through the `test-support` feature, the integration tests) to
/// build a generation and its view.
#[cfg(any(test, feature = "test-support"))]
pub mod fixtures {
    use std::net::Ipv4Addr;

    use super::ZoneView;
    use crate::dns::name::{Zone, Zones};
    use crate::input::records::{Ptr, Record, RecordSet};
    use crate::zone::generation::{Generation, Input};

    pub const TTL: u32 = 30;
    pub const NEG: u32 = 5;

    /// A generation of `records` in pigsty.test with the given serial and TTLs.
    pub fn generation(records: &[(&str, [u8; 4])], serial: u32, ttl: u32, neg: u32) -> Generation {
        let set = RecordSet {
            zones: Zone::parse("pigsty.test").unwrap().into(),
            records: records
                .iter()
                .map(|(n, a)| Record {
                    name: n.to_string(),
                    address: Ipv4Addr::from(*a),
                    sources: vec!["test".into()],
                })
                .collect(),
            ptr: vec![],
            not_served: vec![],
            skipped_hosts: vec![],
        };
        let input = Input {
            path: "test".into(),
            sha256: String::new(),
        };
        Generation::seal(&set, ttl, neg, serial, "2026-01-01T00:00:00Z".into(), input)
    }

    /// A generation of two zones, `pigsty.test` first and `pigsty`: `meta.pigsty.test`, `i.pigsty` and
    /// `a.b.pigsty` (so `b.pigsty` is an empty non-terminal), with their PTRs, TTLs [`TTL`]/[`NEG`].
    pub fn two_zones(serial: u32) -> Generation {
        let rec = |name: &str, a: [u8; 4]| Record {
            name: name.into(),
            address: a.into(),
            sources: vec!["t".into()],
        };
        let set = RecordSet {
            zones: Zones::parse(&["pigsty.test", "pigsty"]).unwrap(),
            records: vec![
                rec("a.b.pigsty", [10, 10, 10, 12]),
                rec("i.pigsty", [10, 10, 10, 10]),
                rec("meta.pigsty.test", [10, 10, 10, 10]),
            ],
            ptr: vec![
                Ptr {
                    address: [10, 10, 10, 10].into(),
                    name: "meta.pigsty.test".into(),
                },
                Ptr {
                    address: [10, 10, 10, 12].into(),
                    name: "a.b.pigsty".into(),
                },
            ],
            not_served: vec![],
            skipped_hosts: vec![],
        };
        let input = Input {
            path: "/x".into(),
            sha256: "0".repeat(64),
        };
        Generation::seal(&set, TTL, NEG, serial, "2026-12-01T00:00:00Z".into(), input)
    }

    pub fn view_with(records: &[(&str, [u8; 4])], serial: u32) -> ZoneView {
        ZoneView::from_generation(&generation(records, serial, TTL, NEG)).unwrap()
    }

    /// meta.pigsty.test and a.b.pigsty.test (so b.pigsty.test is an empty non-terminal), serial 7.
    pub fn view() -> ZoneView {
        view_with(
            &[
                ("a.b.pigsty.test", [10, 10, 10, 11]),
                ("meta.pigsty.test", [10, 10, 10, 10]),
            ],
            7,
        )
    }

    /// Views built the way `load` builds them, from a `host-names.yml` text (so the PTRs follow the real
    /// canonical-name rule), for the crate's tests and, through `test-support`, the integration tests.
    pub mod reverse {
        use super::super::ZoneView;
        use super::{NEG, TTL};
        use crate::dns::name::Zone;
        use crate::input::inventory;
        use crate::input::records::RecordSet;
        use crate::zone::generation::{Generation, Input};

        /// meta (10.10.10.10, with the alias `pg-meta`), a vm_hosts entry at .11 whose first name is
        /// outside the zone (`x.other`, then `b.pigsty.test`, `a.pigsty.test`), and a vm_hosts entry at
        /// .12 with only outside names (no PTR).
        pub const YAML: &str = "all:
      children:
        meta:
          hosts:
            10.10.10.10: { nodename: meta, vm_alias: [pg-meta] }
      vars:
        vm_hosts:
          - { address: 10.10.10.11, names: [x.other, b.pigsty.test, a.pigsty.test] }
          - { address: 10.10.10.12, names: [i.pigsty] }
    ";

        pub fn generation_from(yaml: &str, serial: u32) -> Generation {
            let inv = inventory::parse(yaml).expect("the fixture parses");
            let set = RecordSet::build(&inv, &Zone::parse("pigsty.test").unwrap())
                .expect("the fixture builds");
            let input = Input {
                path: "test".into(),
                sha256: String::new(),
            };
            Generation::seal(&set, TTL, NEG, serial, "2026-01-01T00:00:00Z".into(), input)
        }

        pub fn view_from(yaml: &str, serial: u32) -> ZoneView {
            ZoneView::from_generation(&generation_from(yaml, serial)).expect("the view builds")
        }

        /// [`YAML`] at serial 9.
        pub fn view() -> ZoneView {
            view_from(YAML, 9)
        }
    }
}

#[cfg(test)]
mod tests;
