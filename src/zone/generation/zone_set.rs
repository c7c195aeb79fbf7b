//! The zone set a generation was sealed with: `zone` alone (a generation of one zone, as every release
//! before zone sets wrote it), or `zones` in order, the first `zone`.

use super::Generation;
use crate::dns::name::{Zone, Zones};

impl Generation {
    /// Every zone this generation serves, the first first, unchecked (see [`Generation::served_zones`]).
    pub fn zone_list(&self) -> Vec<&str> {
        if self.zones.is_empty() {
            vec![self.zone.as_str()]
        } else {
            self.zones.iter().map(String::as_str).collect()
        }
    }

    /// The zones this generation serves, checked as `--zone` is ([`Zones::parse`]) and in canonical
    /// form: `zone` alone, or `zones` (at least two, the first `zone`).
    pub fn served_zones(&self) -> Result<Zones, String> {
        let canonical = |raw: &str| -> Result<Zone, String> {
            let z = Zone::parse(raw).map_err(|e| format!("has an invalid zone: {e}"))?;
            if z.as_str() != raw {
                return Err(format!(
                    "has a zone {} that is not in canonical form",
                    crate::output::text::quote(raw)
                ));
            }
            Ok(z)
        };
        let first = canonical(&self.zone)?;
        if self.zones.is_empty() {
            return Ok(Zones::one(first));
        }
        for z in &self.zones {
            canonical(z)?;
        }
        let zones =
            Zones::parse(&self.zones).map_err(|e| format!("has an invalid zone set: {e}"))?;
        if zones.len() < 2 || zones.first() != &first {
            return Err(format!(
                "has the zone set [{}], which is not written as load writes it for zone {first}",
                self.zones
                    .iter()
                    .take(4)
                    .map(|z| crate::output::text::quote(z))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(zones)
    }
}
