//! The hosts-file items of `route status` (issue 23), in both lists: what answers before the zone is
//! there whether or not a route is installed, and also where no adapter fits the host.

use super::{Item, Route, Unrouted};
use crate::route::context::Ctx;
use crate::route::hosts::Summary;
use crate::route::hosts_view::{View, live_answers};
use crate::route::{journal, plan};

/// No route: compared with the zones an install would route (the daemon's, else the defaults), for
/// the adapter it would use.
pub fn unrouted(ctx: &mut Ctx<'_>, u: &Unrouted) -> Vec<Item> {
    let adapter = u.detected.as_ref().ok().map(|(a, _)| *a);
    let zone = u.zones[0].clone();
    let live = live_answers(ctx, &zone);
    View::read(ctx, &zone, adapter, live.as_ref().map_err(Clone::clone)).items()
}

/// An installed route: compared with its zone, for its adapter.
pub fn routed(ctx: &mut Ctx<'_>, r: &mut Route) -> Vec<Item> {
    let zone = r.journal.zone.clone();
    let live = live_answers(ctx, &zone);
    View::read(
        ctx,
        &zone,
        Some(r.journal.adapter),
        live.as_ref().map_err(Clone::clone),
    )
    .items()
}

/// The hosts file's part of `route status --json` (the fields of [`Summary`]), for the journal's
/// route, else for the adapter an install would use.
pub fn summary(ctx: &Ctx<'_>) -> Summary {
    let (zone, adapter) = match journal::read(&ctx.journal_dir) {
        Ok(Some(j)) => (j.zone, Some(j.adapter)),
        _ => {
            let zones = super::served_zones(ctx);
            (
                zones.first().to_string(),
                plan::choose(&ctx.facts, &zones).ok().map(|(a, _)| a),
            )
        }
    };
    let live = live_answers(ctx, &zone);
    View::read(ctx, &zone, adapter, live.as_ref().map_err(Clone::clone)).summary
}
