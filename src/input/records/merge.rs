//! The mentions of a record set (every name as written, at one place) sorted once into the merge order,
//! the rules that need that order (a repeat in one list, a name on two addresses, the name budget), and
//! the merge of each name's mentions into one record. [`super::RecordSet::from_inventory`] makes the
//! mentions; the sort is what building 100,000 names spends most on, so its key is kept compact here.

use std::net::Ipv4Addr;

use super::{NotServed, Record};
use crate::defaults::MAX_SERVED_NAMES;
use crate::dns::name::Zones;
use crate::input::inventory::InputError;
use crate::input::problems::MAX_LISTED;

/// A mention that belongs to no list whose repeats are refused (a node name).
pub(super) const NO_GROUP: usize = usize::MAX;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Node,
    Alias,
    VmName,
}

/// The name as written, for the message about a repeat.
enum Raw<'a> {
    /// In the inventory (a host's names).
    Input(&'a str),
    /// The key is the name itself (lowercase already), plus the zone for a single label.
    Key,
    /// A copy, for a `vm_hosts` name with upper case.
    Copy(String),
}

/// One name as written at one place, with the key it lands under (the served FQDN, or the folded name
/// itself when outside the zone). Its position in input order is its index among the mentions (and
/// its source's among the sources).
pub(super) struct Mention<'a> {
    pub(super) key: String,
    raw: Raw<'a>,
    pub(super) address: Ipv4Addr,
    /// The list (a host's aliases, a vm_hosts entry) in which the same name twice is an error.
    group: usize,
    pub(super) kind: Kind,
    pub(super) served: bool,
    /// Whether the key is the input name plus the zone: with `key`, this tells two folded names apart.
    single_label: bool,
}

impl<'a> Mention<'a> {
    /// A host's name, left in the inventory.
    pub(super) fn borrowed(
        name: &'a str,
        address: Ipv4Addr,
        group: usize,
        kind: Kind,
        zone: &Zones,
    ) -> Self {
        let (key, served) = zone.fold_and_place(name);
        Mention {
            key,
            raw: Raw::Input(name),
            address,
            group,
            kind,
            served,
            single_label: !name.contains('.'),
        }
    }

    /// A `vm_hosts` name, whose string becomes the key (one allocation less per name).
    pub(super) fn owned(name: String, address: Ipv4Addr, group: usize, zone: &Zones) -> Self {
        let single_label = !name.contains('.');
        let raw = if name.bytes().any(|b| b.is_ascii_uppercase()) {
            Raw::Copy(name.clone())
        } else {
            Raw::Key
        };
        let (key, served) = zone.fold_and_place_owned(name);
        Mention {
            key,
            raw,
            address,
            group,
            kind: Kind::VmName,
            served,
            single_label,
        }
    }

    fn raw(&self, zone: &Zones) -> &str {
        match &self.raw {
            Raw::Input(s) => s,
            Raw::Copy(s) => s,
            Raw::Key if self.single_label => self
                .key
                .get(..self.key.len() - zone.first().as_str().len() - 1)
                .unwrap_or_default(),
            Raw::Key => &self.key,
        }
    }

    /// What to do about a repeat.
    fn next(&self) -> &'static str {
        match self.kind {
            Kind::Node => "",
            Kind::Alias => "list each alias once",
            Kind::VmName => "list each name once per entry",
        }
    }
}

/// A mention in the merge order (key, group, single label, input position), compared mostly without
/// reading the key: `prefix` is its first 16 bytes big-endian, zero padded. Keys hold no NUL, so two
/// prefixes that differ order as their keys do; equal ones mean equal keys up to 16 bytes, and only
/// then is the rest read. The sort of the keys themselves was a third of building 100,000 names.
#[derive(Clone, Copy)]
struct Sorted {
    /// Two u64 rather than a u128: 24 bytes an entry instead of 32 (a u128 is 16-aligned).
    prefix: [u64; 2],
    /// group (32 bits), single label (1), position (31), in that order of precedence.
    tie: u64,
}

const POS_BITS: u32 = 31;

impl Sorted {
    fn of(m: &Mention<'_>, pos: usize) -> Sorted {
        let mut head = [0u8; 16];
        let n = m.key.len().min(16);
        head[..n].copy_from_slice(&m.key.as_bytes()[..n]);
        let [a, b] =
            [&head[..8], &head[8..]].map(|h| u64::from_be_bytes(h.try_into().unwrap_or_default()));
        // NO_GROUP sorts last, as usize::MAX did.
        let group = u32::try_from(m.group).unwrap_or(u32::MAX);
        Sorted {
            prefix: [a, b],
            tie: (u64::from(group) << 32) | (u64::from(m.single_label) << POS_BITS) | pos as u64,
        }
    }

    fn pos(self) -> usize {
        (self.tie & ((1 << POS_BITS) - 1)) as usize
    }

    /// The key past the prefix.
    fn rest<'k>(self, keys: &'k [Mention<'_>]) -> &'k [u8] {
        keys[self.pos()]
            .key
            .as_bytes()
            .get(16..)
            .unwrap_or_default()
    }

    fn same_key(self, other: Sorted, keys: &[Mention<'_>]) -> bool {
        self.prefix == other.prefix && self.rest(keys) == other.rest(keys)
    }
}

/// Sorts the mentions into the merge order and applies the rules that need it: the same name twice in
/// one list, a name on two addresses (with the first source of that name), more than twice
/// [`MAX_SERVED_NAMES`] names. Those found and `bad` (the names that failed their own checks, each at
/// the position it would have had) are the errors, in input order, as a pass name by name finds them.
/// Returns the merge order and where each name's mentions start in it.
pub(super) fn check(
    mentions: &[Mention<'_>],
    sources: &[String],
    zone: &Zones,
    bad: Found,
) -> Result<Order, (Vec<InputError>, usize)> {
    let order = Order::of(mentions);
    let mut first = bad;
    let mut firsts = Vec::with_capacity(order.starts.len());
    for run in order.runs() {
        firsts.push(check_run(run, mentions, sources, zone, &mut first));
    }
    if firsts.len() > MAX_SERVED_NAMES * 2 {
        let (_, &mut pos, _) = firsts.select_nth_unstable(MAX_SERVED_NAMES * 2);
        let at = &sources[pos];
        first.report(pos, || {
            InputError::new(
                at,
                format!("is past {} names", MAX_SERVED_NAMES * 2),
                "serve fewer names",
            )
        });
    }
    if first.kept.is_empty() {
        return Ok(order);
    }
    Err(first.in_order())
}

/// The rules within one name's run of mentions (in merge order): the same name twice in one list, the
/// name on a second address. Returns the input position of the name's first mention.
fn check_run(
    run: &[Sorted],
    mentions: &[Mention<'_>],
    sources: &[String],
    zone: &Zones,
    first: &mut Found,
) -> usize {
    let head_pos = run.iter().map(|s| s.pos()).min().unwrap_or(run[0].pos());
    let head = &mentions[head_pos];
    for (i, s) in run.iter().enumerate() {
        let m = &mentions[s.pos()];
        if i > 0 {
            let before = &mentions[run[i - 1].pos()];
            if m.group != NO_GROUP
                && (before.group, before.single_label) == (m.group, m.single_label)
            {
                let prev = &sources[run[i - 1].pos()];
                first.report(s.pos(), || {
                    InputError::new(
                        &sources[s.pos()],
                        format!("{:?} repeats {prev}", m.raw(zone)),
                        m.next(),
                    )
                });
                continue;
            }
        }
        if m.address != head.address {
            let key = &m.key;
            first.report(s.pos(), || {
                InputError::new(
                    &sources[s.pos()],
                    format!(
                        "name {key:?} maps to both {} ({}) and {} ({})",
                        head.address,
                        sources[head_pos],
                        m.address,
                        sources[s.pos()]
                    ),
                    "give each name one address: remove or rename one of the two",
                )
            });
        }
    }
    head_pos
}

/// The errors reported, each at the input position of its mention: the first [`MAX_LISTED`] in input
/// order are kept (each built only while it is among them), the rest counted, so a file of 100,000
/// clashing names holds 20 messages, not 100,000. At one position, the one reported first comes first
/// (a bad name before the mention that took its position).
#[derive(Default)]
pub(super) struct Found {
    kept: Vec<((usize, u64), InputError)>,
    reported: u64,
    more: usize,
}

impl Found {
    pub(super) fn report(&mut self, pos: usize, e: impl FnOnce() -> InputError) {
        let key = (pos, self.reported);
        self.reported += 1;
        if self.kept.len() < MAX_LISTED {
            self.kept.push((key, e()));
            return;
        }
        self.more += 1;
        if let Some(last) = self.kept.iter_mut().max_by_key(|(k, _)| *k)
            && key < last.0
        {
            *last = (key, e());
        }
    }

    /// The kept errors in input order, and how many more were reported.
    fn in_order(mut self) -> (Vec<InputError>, usize) {
        self.kept.sort_by_key(|(k, _)| *k);
        (self.kept.into_iter().map(|(_, e)| e).collect(), self.more)
    }
}

/// The merge order of the mentions and where each name's run starts in it.
pub(super) struct Order {
    sorted: Vec<Sorted>,
    starts: Vec<usize>,
}

impl Order {
    fn of(mentions: &[Mention<'_>]) -> Order {
        assert!(
            mentions.len() < 1 << POS_BITS,
            "far more mentions than a 4 MiB input holds"
        );
        let mut sorted: Vec<Sorted> = mentions
            .iter()
            .enumerate()
            .map(|(pos, m)| Sorted::of(m, pos))
            .collect();
        // Repeats within one list are neighbours in this order; input order breaks the remaining ties.
        sorted.sort_unstable_by(|a, b| {
            a.prefix
                .cmp(&b.prefix)
                .then_with(|| a.rest(mentions).cmp(b.rest(mentions)))
                .then(a.tie.cmp(&b.tie))
        });
        let mut starts = Vec::new();
        for (i, s) in sorted.iter().enumerate() {
            if i == 0 || !sorted[i - 1].same_key(*s, mentions) {
                starts.push(i);
            }
        }
        Order { sorted, starts }
    }

    /// Each name's run of mentions, in key order.
    fn runs(&self) -> impl Iterator<Item = &[Sorted]> {
        self.starts.iter().enumerate().map(|(g, &start)| {
            let end = self.starts.get(g + 1).copied().unwrap_or(self.sorted.len());
            &self.sorted[start..end]
        })
    }
}

/// Merges the checked mentions into records (same name, same address), in key order; `mentions` and
/// `sources` are indexed by input position, and their keys and sources move into the records.
pub(super) fn merge(
    mentions: &mut [Mention<'_>],
    mut sources: Vec<String>,
    order: &Order,
) -> (Vec<Record>, Vec<NotServed>) {
    let Order { sorted, starts } = order;
    let mut records = Vec::with_capacity(starts.len());
    let mut not_served = Vec::new();
    for (g, &start) in starts.iter().enumerate() {
        let end = starts.get(g + 1).copied().unwrap_or(sorted.len());
        let group = &sorted[start..end];
        let mut names: Vec<String> = group
            .iter()
            .map(|s| std::mem::take(&mut sources[s.pos()]))
            .collect();
        names.sort();
        names.dedup();
        let m = &mut mentions[group[0].pos()];
        let address = m.address;
        if m.served {
            records.push(Record {
                name: std::mem::take(&mut m.key),
                address,
                sources: names,
            });
        } else {
            not_served.push(NotServed {
                name: std::mem::take(&mut m.key),
                address,
                reason: "outside the served zones".to_string(),
                sources: names,
            });
        }
    }
    (records, not_served)
}
