//! The set of served forward zones: which zone a name belongs to, and which sets are refused.

use std::fmt;

use super::{NameError, Placement, Zone, in_zone, scan_ldh};

/// The served forward zones in the order given (by default `pigsty.test`, then `pigsty`): the first is
/// where a single label goes, a dotted name belongs to the zone it is at or under. Never empty; no zone
/// is at or under another, so every served name has exactly one zone.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Zones(Vec<Zone>);

impl Zones {
    /// Parses and checks a zone set as given (`--zone`, repeated, or its environment variable's list).
    pub fn parse<S: AsRef<str>>(raw: &[S]) -> Result<Zones, NameError> {
        let mut zones: Vec<Zone> = Vec::with_capacity(raw.len());
        for r in raw {
            let z = parse_one(r.as_ref())?;
            if let Some(other) = zones
                .iter()
                .find(|o| in_zone(z.as_str(), o.as_str()) || in_zone(o.as_str(), z.as_str()))
            {
                let why = if other == &z {
                    "is given twice".to_string()
                } else {
                    format!(
                        "overlaps the served zone {other}: a name under both would have two zones; serve one of them"
                    )
                };
                return Err(NameError {
                    name: z.0,
                    reason: why,
                });
            }
            zones.push(z);
        }
        if zones.is_empty() {
            return Err(NameError {
                name: String::new(),
                reason: "names no zone; give at least one".into(),
            });
        }
        Ok(Zones(zones))
    }

    /// A set of one zone already checked by [`Zone::parse`] (tests, and a generation written by a release
    /// that served one zone).
    pub fn one(zone: Zone) -> Zones {
        Zones(vec![zone])
    }

    /// Where a single label goes.
    pub fn first(&self) -> &Zone {
        &self.0[0]
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Zone> {
        self.0.iter()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Never true; here for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The served zone a folded name is the apex of or under, if any.
    pub fn zone_of(&self, name: &str) -> Option<&Zone> {
        self.0.iter().find(|z| in_zone(name, z.as_str()))
    }

    /// Maps a folded name into the set: a single label `meta` becomes `meta.<first zone>`, a name at or
    /// under one of the zones is served as it is, any other dotted name is outside the served zones.
    pub fn place(&self, name: &str) -> Placement {
        if !name.contains('.') {
            return Placement::Served(format!("{name}.{}", self.first()));
        }
        match self.zone_of(name) {
            Some(_) => Placement::Served(name.to_string()),
            None => Placement::OutsideZone,
        }
    }

    /// Where a valid input name lands, built in one allocation: the key the record set sorts it by (the
    /// served FQDN, or the folded name itself when outside the zones) and whether it is served. The
    /// same as [`super::fold_host_name`] then [`Zones::place`], for the 100,000 names of a large input.
    pub fn fold_and_place(&self, valid: &str) -> (String, bool) {
        if !valid.contains('.') {
            let z = self.first().as_str();
            let mut key = String::with_capacity(valid.len() + 1 + z.len());
            key.push_str(valid);
            key.make_ascii_lowercase();
            key.push('.');
            key.push_str(z);
            return (key, true);
        }
        let folded = valid.to_ascii_lowercase();
        let served = self.zone_of(&folded).is_some();
        (folded, served)
    }

    /// [`Zones::fold_and_place`] that turns the name's own string into its key: lowercased in place,
    /// and for a single label the first zone appended (most often within the allocation's slack, so no
    /// copy either).
    pub fn fold_and_place_owned(&self, mut valid: String) -> (String, bool) {
        valid.make_ascii_lowercase();
        if !valid.contains('.') {
            let z = self.first().as_str();
            valid.reserve_exact(1 + z.len());
            valid.push('.');
            valid.push_str(z);
            return (valid, true);
        }
        let served = self.zone_of(&valid).is_some();
        (valid, served)
    }

    /// Whether `name` is already a served name in canonical form (valid, lowercase, at or under one of
    /// the zones): what `fold_host_name` then `place` would give back unchanged, without allocating.
    pub fn is_canonical_served(&self, name: &str) -> bool {
        // One pass: valid and lowercase together (a server checks 100,000 names a swap with it).
        scan_ldh(name.as_bytes(), true) && self.zone_of(name).is_some()
    }
}

impl From<Zone> for Zones {
    fn from(zone: Zone) -> Zones {
        Zones::one(zone)
    }
}

impl<'a> IntoIterator for &'a Zones {
    type Item = &'a Zone;
    type IntoIter = std::slice::Iter<'a, Zone>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// The zones joined as a user reads them: `pigsty.test, pigsty`.
impl fmt::Display for Zones {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, z) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(z.as_str())?;
        }
        Ok(())
    }
}

/// One zone of a set: a valid name, and not one whose answers belong to someone else.
fn parse_one(raw: &str) -> Result<Zone, NameError> {
    let refuse = |reason: &str| NameError {
        name: raw.to_string(),
        reason: reason.to_string(),
    };
    if raw.is_empty() || raw == "." {
        return Err(refuse(
            "is the root zone: serving it would answer every name on the host; give a private zone such as pigsty.test",
        ));
    }
    let z = Zone::parse(raw)?;
    if in_zone(z.as_str(), "local") {
        return Err(refuse(
            "is under local, which is mDNS's (RFC 6762): the OS never sends it to a unicast server; give another zone",
        ));
    }
    if in_zone(z.as_str(), "arpa") {
        return Err(refuse(
            "is under arpa: the reverse zone is derived from the served addresses, not given; give a forward zone",
        ));
    }
    Ok(z)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zones(raw: &[&str]) -> Zones {
        Zones::parse(raw).unwrap()
    }

    #[test]
    fn a_single_label_goes_to_the_first_zone_and_a_dotted_name_to_its_own() {
        let z = zones(&["pigsty.test", "pigsty"]);
        assert_eq!(
            z.place("meta"),
            Placement::Served("meta.pigsty.test".into())
        );
        assert_eq!(z.place("i.pigsty"), Placement::Served("i.pigsty".into()));
        assert_eq!(
            z.place("pg-meta.pigsty.test"),
            Placement::Served("pg-meta.pigsty.test".into())
        );
        // A single label is a host name, even one spelled like a zone.
        assert_eq!(
            z.place("pigsty"),
            Placement::Served("pigsty.pigsty.test".into())
        );
        assert_eq!(z.place("www.pigsty.cc"), Placement::OutsideZone);
        assert_eq!(z.zone_of("a.b.pigsty").map(Zone::as_str), Some("pigsty"));
        assert_eq!(z.zone_of("xpigsty"), None);
        let other = zones(&["pigsty", "pigsty.test"]);
        assert_eq!(other.place("meta"), Placement::Served("meta.pigsty".into()));
        assert_eq!(z.to_string(), "pigsty.test, pigsty");
    }

    #[test]
    fn the_set_forms_agree_with_place() {
        let z = zones(&["pigsty.test", "pigsty"]);
        for n in ["Meta", "I.Pigsty", "a.pigsty.TEST", "pigsty.cc", "x"] {
            let folded = n.to_ascii_lowercase();
            let want = match z.place(&folded) {
                Placement::Served(s) => (s, true),
                Placement::OutsideZone => (folded.clone(), false),
            };
            assert_eq!(z.fold_and_place(n), want, "{n}");
            assert_eq!(z.fold_and_place_owned(n.to_string()), want, "{n}");
            assert_eq!(
                z.is_canonical_served(&folded),
                want.1 && folded == want.0,
                "{n}"
            );
        }
        assert!(
            !z.is_canonical_served("I.pigsty"),
            "upper case is not canonical"
        );
    }

    #[test]
    fn refused_sets_name_the_zone_and_why() {
        for (raw, name, says) in [
            (&["local"][..], "local", "mDNS"),
            (&["pigsty.local"][..], "pigsty.local", "mDNS"),
            (&["10.in-addr.arpa"][..], "10.in-addr.arpa", "arpa"),
            (&["arpa"][..], "arpa", "arpa"),
            (&["."][..], ".", "root zone"),
            (&[""][..], "", "root zone"),
            (
                &["pigsty", "a.pigsty"][..],
                "a.pigsty",
                "overlaps the served zone pigsty",
            ),
            (
                &["a.pigsty", "pigsty"][..],
                "pigsty",
                "overlaps the served zone a.pigsty",
            ),
            (&["pigsty", "PIGSTY."][..], "pigsty", "given twice"),
            (&["bad_zone"][..], "bad_zone", ""),
        ] {
            let e = Zones::parse(raw).unwrap_err();
            assert_eq!(e.name, name, "{raw:?}");
            assert!(e.reason.contains(says), "{raw:?}: {}", e.reason);
        }
        let none: [&str; 0] = [];
        assert!(Zones::parse(&none).unwrap_err().reason.contains("no zone"));
        // Near misses are fine: not under local or arpa, not nested.
        zones(&[
            "localhost.test",
            "arpa-lab",
            "pigsty",
            "pigsty.test",
            "xpigsty",
        ]);
    }
}
