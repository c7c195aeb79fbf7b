//! The text both `check` and `load`/`rollback` print: what is served (name, address, sources), the
//! reverse zone's PTRs, what is not served and why, and the outcome of a store with its diff (PTRs
//! included) against the previous generation.

use std::fmt::Write as _;
use std::net::Ipv4Addr;
use std::path::Path;
use std::rc::Rc;

use serde_json::json;

use crate::input::inventory::Category;
use crate::input::records::{self, Diff, NotServed, Ptr, Record, SkippedHost};
use crate::output::{FORMAT, Object, Report};
use crate::store::Outcome;
use crate::zone::generation::{DiffBase, Generation};

/// The served / not served / not managed lines.
pub fn served(
    set_records: &[Record],
    not_served: &[NotServed],
    skipped: &[SkippedHost],
    out: &mut String,
) {
    let width = set_records
        .iter()
        .map(|r| r.name.len())
        .chain(not_served.iter().map(|n| n.name.len()))
        .max()
        .unwrap_or(0);
    let _ = writeln!(out, "served ({}):", set_records.len());
    // `"  {name:width$}  {address:15}  {sources}"`, written without the formatting machinery: it is
    // one line per served name.
    out.reserve(set_records.len() * (width + 64));
    for r in set_records {
        out.push_str("  ");
        pad(out, &r.name, width);
        out.push_str("  ");
        push_address(out, Some(r.address), 15);
        out.push_str("  ");
        for (i, s) in r.sources.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(&crate::output::text::shown_bytes(
                s.as_bytes(),
                crate::output::text::MESSAGE_BYTES,
            ));
        }
        out.push('\n');
    }
    if !not_served.is_empty() {
        let _ = writeln!(out, "not served ({}):", not_served.len());
        for n in not_served {
            let _ = writeln!(
                out,
                "  {:width$}  {:15}  {} ({})",
                n.name,
                n.address.to_string(),
                n.reason,
                crate::output::text::shown_message(&n.sources.join(", "))
            );
        }
    }
    for s in skipped {
        let _ = writeln!(
            out,
            "not managed: host {} (vm_skip: true at {})",
            s.address,
            crate::output::text::shown_message(&s.source)
        );
    }
}

/// `text` left-aligned in `width` characters, as `{:width$}` writes it.
fn pad(out: &mut String, text: &str, width: usize) {
    out.push_str(text);
    for _ in text.chars().count()..width {
        out.push(' ');
    }
}

/// `a` left-aligned in `width` characters (nothing for `None`), as `{:width$}` writes its
/// `to_string()`, without that String: check and load write one per name.
fn push_address(out: &mut String, a: Option<Ipv4Addr>, width: usize) {
    let start = out.len();
    if let Some(a) = a {
        for (i, o) in a.octets().into_iter().enumerate() {
            if i > 0 {
                out.push('.');
            }
            if o >= 100 {
                out.push(char::from(b'0' + o / 100));
            }
            if o >= 10 {
                out.push(char::from(b'0' + o / 10 % 10));
            }
            out.push(char::from(b'0' + o % 10));
        }
    }
    for _ in out.len() - start..width {
        out.push(' ');
    }
}

/// The reverse zone's lines: its name and one `address  name` line per PTR.
pub fn reverse(records: &[Record], ptr: &[Ptr], out: &mut String) {
    let Some(zone) = records::reverse_zone(records).filter(|_| !ptr.is_empty()) else {
        return;
    };
    let _ = writeln!(out, "reverse zone {zone} ({} PTR):", ptr.len());
    out.reserve(ptr.len() * 48);
    for p in ptr {
        out.push_str("  ");
        push_address(out, Some(p.address), 15);
        out.push_str("  ");
        out.push_str(&p.name);
        out.push('\n');
    }
}

/// The report of a load or rollback, and the generation that was stored (if any).
pub fn outcome(outcome: Outcome, root: &Path) -> (Report, Option<Rc<Generation>>) {
    let state_dir = root.display().to_string();
    let (result, generation, previous, path) = match outcome {
        Outcome::Unchanged { serial } => {
            let json = json!({"format": FORMAT, "result": "unchanged", "serial": serial, "state_dir": state_dir});
            return (
                Report::new(format!("unchanged (serial {serial})\n"), json),
                None,
            );
        }
        Outcome::WouldStore {
            generation,
            previous,
        } => ("dry-run", generation, previous, None),
        Outcome::Stored {
            generation,
            path,
            previous,
        } => ("stored", generation, previous, Some(path)),
    };
    let diff = Diff::of(
        previous.iter().flat_map(DiffBase::records),
        generation
            .records
            .iter()
            .map(|r| (r.name.as_str(), r.address)),
    )
    .with_ptr(
        previous.as_ref().map(|p| p.ptr.as_slice()).unwrap_or(&[]),
        &generation.ptr,
    );
    let out = outcome_text(&diff, &generation, path.as_deref());
    let generation = Rc::new(generation);
    let stored = path.is_some().then(|| generation.clone());
    let json = OutcomeJson {
        result,
        previous: previous.map(|p| (p.serial, p.record_digest)),
        path: path.map(|p| p.display().to_string()),
        state_dir,
        diff,
        generation,
    };
    // Built only for --json: at 100,000 names the diff alone is tens of megabytes of JSON.
    (Report::lazy_object(out, json, outcome_json), stored)
}

/// What the JSON of a load or rollback is made of.
struct OutcomeJson {
    result: &'static str,
    generation: Rc<Generation>,
    /// Serial and record digest.
    previous: Option<(u32, String)>,
    state_dir: String,
    path: Option<String>,
    diff: Diff,
}

fn outcome_json(o: &OutcomeJson) -> Object<'_> {
    let g = &*o.generation;
    Object::new()
        .field("format", FORMAT)
        .field("result", o.result)
        .field("serial", g.serial)
        .field("previous_serial", o.previous.as_ref().map(|p| p.0))
        .field("previous_record_digest", o.previous.as_ref().map(|p| &p.1))
        .field("record_digest", &g.record_digest)
        .field("state_dir", &o.state_dir)
        .field("path", &o.path)
        .field("diff", sorted::Diff(&o.diff, &g.records))
        .field("served", g.records.len())
        .field(
            "reverse_zone",
            records::reverse_zone(&g.records).filter(|_| !g.ptr.is_empty()),
        )
        .field("ptr", &g.ptr)
        .field("not_served", sorted::not_served(&g.not_served))
}

/// The records' JSON with the keys of every object in sorted order, as these reports have always
/// written them (they were once built as `serde_json::Value`, whose map sorts). `Ptr`, `SkippedHost`
/// and `Input` have their fields in sorted order already and serialize as they are.
pub mod sorted {
    use std::net::Ipv4Addr;

    use serde::{Serialize, Serializer};

    use crate::input::inventory::Category;
    use crate::input::records::{self, Change, NotServed, PtrChange, Record};

    /// A slice written as a JSON array of `f(item)`.
    pub struct Seq<'a, T, U> {
        items: &'a [T],
        f: fn(&'a T) -> U,
    }

    impl<T, U: Serialize> Serialize for Seq<'_, T, U> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(self.items.iter().map(self.f))
        }
    }

    #[derive(Serialize)]
    pub struct RecordJson<'a> {
        address: Ipv4Addr,
        category: &'static str,
        name: &'a str,
        sources: &'a [String],
    }

    pub fn records(r: &[Record]) -> Seq<'_, Record, RecordJson<'_>> {
        Seq {
            items: r,
            f: |r| RecordJson {
                address: r.address,
                category: Category::of_sources(&r.sources).as_str(),
                name: &r.name,
                sources: &r.sources,
            },
        }
    }

    #[derive(Serialize)]
    pub struct NotServedJson<'a> {
        address: Ipv4Addr,
        category: &'static str,
        name: &'a str,
        reason: &'a str,
        sources: &'a [String],
    }

    pub fn not_served(n: &[NotServed]) -> Seq<'_, NotServed, NotServedJson<'_>> {
        Seq {
            items: n,
            f: |n| NotServedJson {
                address: n.address,
                category: Category::of_sources(&n.sources).as_str(),
                name: &n.name,
                reason: &n.reason,
                sources: &n.sources,
            },
        }
    }

    /// A change as the text diff shows it: an added or changed name with the category of its new
    /// record when that record names one (a host-access view's), a removed name without (the diff
    /// base keeps no sources).
    #[derive(Serialize)]
    pub struct ChangeJson<'a> {
        #[serde(skip_serializing_if = "Option::is_none")]
        category: Option<&'static str>,
        name: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        new: Option<Ipv4Addr>,
        #[serde(skip_serializing_if = "Option::is_none")]
        old: Option<Ipv4Addr>,
    }

    /// Changes written as a JSON array of [`ChangeJson`], each new record's category looked up in
    /// the generation's `records`.
    pub struct Changes<'a> {
        items: &'a [Change],
        records: &'a [Record],
    }

    impl Serialize for Changes<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(self.items.iter().map(|c| {
                ChangeJson {
                    category: c
                        .new
                        .and_then(|_| super::category_of(self.records, &c.name))
                        .map(Category::as_str),
                    name: &c.name,
                    new: c.new,
                    old: c.old,
                }
            }))
        }
    }

    #[derive(Serialize)]
    pub struct PtrChangeJson<'a> {
        address: Ipv4Addr,
        #[serde(skip_serializing_if = "Option::is_none")]
        new: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        old: Option<&'a str>,
    }

    /// A [`records::Diff`] with its keys (and its changes' keys) sorted; `ptr` absent when empty.
    /// The records are the new generation's, which name each change's category.
    pub struct Diff<'a>(pub &'a records::Diff, pub &'a [Record]);

    impl Serialize for Diff<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            #[derive(Serialize)]
            struct DiffJson<'a> {
                added: Changes<'a>,
                changed: Changes<'a>,
                #[serde(skip_serializing_if = "Option::is_none")]
                ptr: Option<Seq<'a, PtrChange, PtrChangeJson<'a>>>,
                removed: Changes<'a>,
            }
            let (d, records) = (self.0, self.1);
            let changes = |items| Changes { items, records };
            DiffJson {
                added: changes(&d.added),
                changed: changes(&d.changed),
                ptr: (!d.ptr.is_empty()).then_some(Seq {
                    items: &d.ptr,
                    f: |p| PtrChangeJson {
                        address: p.address,
                        new: p.new.as_deref(),
                        old: p.old.as_deref(),
                    },
                }),
                removed: changes(&d.removed),
            }
            .serialize(s)
        }
    }
}

/// The category the new record of a changed or added name names, looked up in the generation's
/// name-sorted records; `None` for a projection's record (its sources carry none), so its diff stays
/// as it was, in text and JSON.
fn category_of(records: &[Record], name: &str) -> Option<Category> {
    let i = records
        .binary_search_by(|r| r.name.as_str().cmp(name))
        .ok()?;
    Category::tagged_of(&records[i].sources)
}

/// The diff lines of a load or rollback, then [`closing_text`].
fn outcome_text(diff: &Diff, generation: &Generation, path: Option<&Path>) -> String {
    let mut out = String::new();
    // A host-access view's record names its category after the change (a projection's sources carry
    // none, and its lines stay as they were).
    let category = |out: &mut String, name: &str| {
        if let Some(c) = category_of(&generation.records, name) {
            out.push_str(" (");
            out.push_str(c.as_str());
            out.push(')');
        }
    };
    // One line per change, written without the formatting machinery: a first load at 100,000 names
    // adds them all.
    let line = |out: &mut String, sign: &str, c: &records::Change, address: Option<Ipv4Addr>| {
        out.push_str(sign);
        out.push_str(&c.name);
        out.push(' ');
        push_address(out, address, 0);
        if c.new.is_some() {
            category(out, &c.name);
        }
        out.push('\n');
    };
    out.reserve((diff.added.len() + diff.removed.len() + diff.changed.len()) * 48);
    for c in &diff.added {
        line(&mut out, "+ ", c, c.new);
    }
    for c in &diff.removed {
        line(&mut out, "- ", c, c.old);
    }
    for c in &diff.changed {
        out.push_str("~ ");
        out.push_str(&c.name);
        out.push(' ');
        push_address(&mut out, c.old, 0);
        out.push_str(" -> ");
        push_address(&mut out, c.new, 0);
        category(&mut out, &c.name);
        out.push('\n');
    }
    for p in &diff.ptr {
        let _ = match (&p.old, &p.new) {
            (None, Some(n)) => writeln!(out, "+ PTR {} {n}", p.address),
            (Some(o), None) => writeln!(out, "- PTR {} {o}", p.address),
            (Some(o), Some(n)) => writeln!(out, "~ PTR {} {o} -> {n}", p.address),
            (None, None) => Ok(()),
        };
    }
    if diff.is_empty() {
        let _ = writeln!(out, "no name changes (zone settings changed)");
    }
    closing_text(&mut out, generation, path);
    out
}

/// The not-served lines and the closing line of a load or rollback.
fn closing_text(out: &mut String, generation: &Generation, path: Option<&Path>) {
    for n in &generation.not_served {
        let _ = write!(out, "not served: {} {} ({})", n.name, n.address, n.reason);
        if let Some(c) = Category::tagged_of(&n.sources) {
            let _ = write!(out, " ({})", c.as_str());
        }
        out.push('\n');
    }
    let served = generation.records.len();
    match path {
        None => {
            let _ = writeln!(
                out,
                "dry run: would store serial {} ({served} names served)",
                generation.serial
            );
        }
        Some(p) => {
            let _ = writeln!(
                out,
                "stored serial {} ({served} names served, record digest {}) in {}",
                generation.serial,
                &generation.record_digest[..16],
                p.display()
            );
        }
    }
}

#[cfg(test)]
pub(super) mod tests;
