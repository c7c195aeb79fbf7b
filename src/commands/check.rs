//! `pigsty-dns check FILE`.

use std::fmt::Write as _;
use std::path::Path;

use super::report;
use crate::defaults;
use crate::dns::name::Zones;
use crate::error::AppError;
use crate::input::inventory::Reading;
use crate::input::records;
use crate::input::{self, ViewInfo};
use crate::output::{FORMAT, Object, Report};
use crate::zone::generation::Generation;

/// `check FILE`: validate only; print what would be served and what not. Writes nothing.
/// `zones`: the served [`Zones`], or one [`crate::dns::name::Zone`].
pub fn run(
    path: &Path,
    zones: &(impl Clone + Into<Zones>),
    reading: Reading,
) -> Result<Report, AppError> {
    let zone: Zones = zones.clone().into();
    let (set, input, info) = input::read_as(path, &zone, &reading)?;
    let g = Generation::seal_set(
        set,
        defaults::TTL,
        defaults::NEGATIVE_TTL,
        0,
        String::new(),
        input,
    );
    let shown_path = crate::output::text::path(path);
    let mut out = format!(
        "{}: valid for {} {}\n",
        crate::output::text::shown_message(&shown_path),
        if zone.len() > 1 { "zones" } else { "zone" },
        zone
    );
    let _ = writeln!(out, "view: {}", info.view.as_str());
    for n in &info.notes {
        // Notes quote inventory values (a nodename, a group): shown inert like every source.
        let _ = writeln!(out, "note: {}", crate::output::text::shown_message(n));
    }
    report::served(&g.records, &g.not_served, &g.skipped_hosts, &mut out);
    report::reverse(&g.records, &g.ptr, &mut out);
    let _ = writeln!(out, "record digest {}", g.record_digest);
    // Built only for --json: at 100,000 names it is tens of megabytes.
    Ok(Report::lazy_object(out, (g, info), check_json_view))
}

/// The check's JSON with the view it was read as and its notes.
fn check_json_view((g, info): &(Generation, ViewInfo)) -> Object<'_> {
    check_json(g)
        .field("view", info.view.as_str())
        .field("notes", &info.notes)
}

fn check_json(g: &Generation) -> Object<'_> {
    Object::new()
        .field("format", FORMAT)
        .field("valid", true)
        .field("zone", &g.zone)
        .field("zones", g.zone_list())
        .field("input", &g.input)
        .field("record_digest", &g.record_digest)
        .field("served", report::sorted::records(&g.records))
        .field("reverse_zone", records::reverse_zone(&g.records))
        .field("ptr", &g.ptr)
        .field("not_served", report::sorted::not_served(&g.not_served))
        .field("skipped_hosts", &g.skipped_hosts)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Each record with the category its sources name, as the JSON gained it (issue 31).
    fn categorised(mut v: serde_json::Value) -> serde_json::Value {
        for r in v.as_array_mut().unwrap() {
            let sources: Vec<String> = serde_json::from_value(r["sources"].clone()).unwrap();
            r["category"] = crate::input::inventory::Category::of_sources(&sources)
                .as_str()
                .into();
        }
        v
    }

    #[test]
    fn check_json_is_byte_identical_to_the_value_built_one() {
        for n in [0, 1, 7, 3_000] {
            let g = report::tests::sample(n, 7, 5, 0);
            // As it was built before `Object`: a `serde_json::Value`, pretty-printed.
            let want = crate::output::to_json(&json!({
                "format": FORMAT,
                "valid": true,
                "zone": g.zone,
                "zones": g.zone_list(),
                "input": g.input,
                "record_digest": g.record_digest,
                "served": categorised(serde_json::to_value(&g.records).unwrap()),
                "reverse_zone": records::reverse_zone(&g.records),
                "ptr": g.ptr,
                "not_served": categorised(serde_json::to_value(&g.not_served).unwrap()),
                "skipped_hosts": g.skipped_hosts,
            }));
            // Rendered for a terminal: DEL and C1 in the sample's sources as `\u007f` (text::json_inert).
            let want = crate::output::text::json_inert(want);
            assert_eq!(Report::lazy_object("", g, check_json).render(true), want);
        }
    }
}
