//! What a new generation changes against the one before it, as `load` prints it.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use serde::Serialize;

use super::{Ptr, Record};

/// What changes between two sorted record lists (and their PTR lists), as a client would see it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Diff {
    pub added: Vec<Change>,
    pub removed: Vec<Change>,
    pub changed: Vec<Change>,
    /// PTRs added, removed or pointed elsewhere, by address; absent from the JSON when none changed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ptr: Vec<PtrChange>,
}

/// One address whose PTR appears (`old` absent), goes (`new` absent) or changes its target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PtrChange {
    pub address: Ipv4Addr,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<Ipv4Addr>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<Ipv4Addr>,
}

impl Diff {
    pub fn between(old: &[Record], new: &[Record]) -> Diff {
        Diff::of(
            old.iter().map(|r| (r.name.as_str(), r.address)),
            new.iter().map(|r| (r.name.as_str(), r.address)),
        )
    }

    /// [`Diff::between`] of two name-sorted lists of (name, address), however they are held.
    pub fn of<'o, 'n>(
        old: impl IntoIterator<Item = (&'o str, Ipv4Addr)>,
        new: impl IntoIterator<Item = (&'n str, Ipv4Addr)>,
    ) -> Diff {
        use std::cmp::Ordering;
        let mut d = Diff::default();
        let (mut old, mut new) = (old.into_iter().peekable(), new.into_iter().peekable());
        loop {
            let order = match (old.peek(), new.peek()) {
                (Some(o), Some(n)) => o.0.cmp(n.0),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => return d,
            };
            match order {
                Ordering::Less => {
                    if let Some((name, address)) = old.next() {
                        d.removed.push(Change {
                            name: name.to_string(),
                            old: Some(address),
                            new: None,
                        });
                    }
                }
                Ordering::Greater => {
                    if let Some((name, address)) = new.next() {
                        d.added.push(Change {
                            name: name.to_string(),
                            old: None,
                            new: Some(address),
                        });
                    }
                }
                Ordering::Equal => {
                    if let (Some((_, o)), Some((name, n))) = (old.next(), new.next())
                        && o != n
                    {
                        d.changed.push(Change {
                            name: name.to_string(),
                            old: Some(o),
                            new: Some(n),
                        });
                    }
                }
            }
        }
    }

    /// Adds the PTR changes between two address-sorted PTR lists.
    pub fn with_ptr(mut self, old: &[Ptr], new: &[Ptr]) -> Diff {
        let old: BTreeMap<Ipv4Addr, &str> = old.iter().map(|p| (p.address, &*p.name)).collect();
        let new: BTreeMap<Ipv4Addr, &str> = new.iter().map(|p| (p.address, &*p.name)).collect();
        let addresses: std::collections::BTreeSet<Ipv4Addr> =
            old.keys().chain(new.keys()).copied().collect();
        for address in addresses {
            let (o, n) = (old.get(&address).copied(), new.get(&address).copied());
            if o != n {
                self.ptr.push(PtrChange {
                    address,
                    old: o.map(String::from),
                    new: n.map(String::from),
                });
            }
        }
        self
    }

    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.changed.is_empty()
            && self.ptr.is_empty()
    }
}
