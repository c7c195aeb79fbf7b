//! AXFR (RFC 5936): the whole zone of one generation — SOA, NS, every A or PTR, SOA again.

use std::sync::Arc;

use hickory_proto::rr::Record;

use super::zone_records::{self, Which};
use crate::zone::generation::Generation;

/// The records of a full transfer, in order; `None` when `which` is not served by `g`.
pub(super) fn records(
    g: Arc<Generation>,
    which: &Which,
) -> Option<Box<dyn Iterator<Item = Option<Record>> + Send>> {
    let apex = zone_records::name(&zone_records::apex(&g, which)?)?;
    let soa = zone_records::soa(&g, which, &apex)?;
    let body = zone_records::body(g, which.clone(), apex);
    Some(Box::new(
        std::iter::once(Some(soa.clone()))
            .chain(body)
            .chain(std::iter::once(Some(soa))),
    ))
}
