//! The hosts-file items of `route status` (issue 23), in both lists: what answers before the zone is
//! there whether or not a route is installed, and also where no adapter fits the host.

use super::{Item, Route, Unrouted};
use crate::defaults::ZONE;
use crate::route::context::Ctx;
use crate::route::hosts::Summary;
use crate::route::hosts_view::{View, live_answers};
use crate::route::{journal, plan};

/// No route: compared with the default zone, for the adapter an install would use.
pub fn unrouted(ctx: &mut Ctx<'_>, u: &Unrouted) -> Vec<Item> {
    let adapter = u.detected.as_ref().ok().map(|(a, _)| *a);
    let live = live_answers(ctx, ZONE);
    View::read(ctx, ZONE, adapter, live.as_ref().map_err(Clone::clone)).items()
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
        _ => (
            ZONE.to_string(),
            plan::choose(&ctx.facts, &super::served_zones(ctx))
                .ok()
                .map(|(a, _)| a),
        ),
    };
    let live = live_answers(ctx, &zone);
    View::read(ctx, &zone, adapter, live.as_ref().map_err(Clone::clone)).summary
}
