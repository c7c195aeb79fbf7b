//! The `route status` items while no journal is there: which adapter an install would use, other
//! resolvers for the zone (macOS), and pigsty-dns files a lost journal left behind.

use super::{Item, claimants_item, item, served_zones};
use crate::error::AppError;
use crate::route::adapter::{self, AdapterName, Family};
use crate::route::context::Ctx;
use crate::route::installed::orphans;
use crate::route::journal;
use crate::route::plan;

/// What the items without a route share: the adapter detection picks (or why none fits).
pub struct Unrouted {
    pub detected: Result<(AdapterName, String), AppError>,
    /// What an install would route: the daemon's zones, else the defaults.
    pub zones: Vec<String>,
}

impl Unrouted {
    pub fn new(ctx: &Ctx<'_>) -> Unrouted {
        let zones = served_zones(ctx);
        Unrouted {
            detected: plan::choose(&ctx.facts, &zones),
            zones: zones.iter().map(|z| z.to_string()).collect(),
        }
    }
}

/// The adapter an install would use, and why.
pub fn adapter(_: &mut Ctx<'_>, u: &Unrouted) -> Vec<Item> {
    vec![match &u.detected {
        Ok((a, why)) => item(
            "adapter",
            true,
            format!(
                "no route installed; install would use {} ({why})",
                a.as_str()
            ),
            "pigsty-dns route install --dry-run",
        ),
        Err(e) => item("adapter", false, e.message.clone(), e.next.clone()),
    }]
}

/// macOS: another resolver that claims the zone would make an install refuse.
pub fn other_resolvers(ctx: &mut Ctx<'_>, u: &Unrouted) -> Vec<Item> {
    match u.detected {
        Ok((a, _)) if adapter::family(a) == Family::Mdns => vec![claimants_item(ctx, &u.zones)],
        _ => vec![],
    }
}

/// No journal: fine, unless pigsty-dns files are in place without it.
pub fn journal(ctx: &mut Ctx<'_>, _: &Unrouted) -> Vec<Item> {
    let orphans = orphans(&ctx.root);
    vec![if orphans.is_empty() {
        item(
            "journal",
            true,
            format!(
                "no journal at {}",
                journal::path(&ctx.journal_dir).display()
            ),
            "nothing to do",
        )
    } else {
        item(
            "journal",
            false,
            format!(
                "no journal, but pigsty-dns files exist: {}",
                orphans
                    .iter()
                    .map(|(p, _)| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "pigsty-dns route uninstall removes the unchanged ones",
        )
    }]
}

#[cfg(test)]
mod tests {
    use super::super::testing::{up, with_ctx};
    use super::*;
    use crate::sys::Os;
    use crate::sys::runner::ScriptedRunner;

    fn items(os: Os, list: &[crate::route::status::UnroutedItem]) -> Vec<Item> {
        let root = tempfile::tempdir().unwrap();
        let mut r = ScriptedRunner::new();
        with_ctx(root.path(), os, &mut r, up, |ctx| {
            let u = Unrouted::new(ctx);
            list.iter().flat_map(|f| f(ctx, &u)).collect()
        })
    }

    #[test]
    fn an_os_without_a_route_fails_the_adapter_item_with_the_manual_way() {
        let v = items(Os::Other, &[adapter]);
        assert!(!v[0].ok);
        assert!(v[0].verdict.starts_with("unsupported:"), "{v:?}");
        assert!(v[0].next.contains("by hand"), "{v:?}");
    }

    #[test]
    fn other_resolvers_are_a_macos_item() {
        assert!(items(Os::Linux, &[other_resolvers]).is_empty());
        let v = items(Os::Macos, &[other_resolvers]);
        assert_eq!(v[0].item, "other resolvers");
        assert!(v[0].ok, "{v:?}");
    }

    #[test]
    fn no_journal_and_no_files_is_nothing_to_do() {
        let v = items(Os::Linux, &[journal]);
        assert!(v[0].ok && v[0].next == "nothing to do", "{v:?}");
        assert!(v[0].verdict.starts_with("no journal at "), "{v:?}");
    }
}
