//! Zone transfer to real secondaries (Knot, NSD, BIND): AXFR (RFC 5936) of the forward and the reverse
//! zone from the live generation, IXFR (RFC 1995) from the stored history, for the loopback clients
//! `serve --allow-transfer` names. Transfers are not query answers: the server loops route a transfer
//! request from an allowed client here before the query rules ([`crate::serve::answer`]) see it; everyone
//! else's AXFR/IXFR still reaches those rules and is REFUSED.
//!
//! - [`acl`]: who may transfer (loopback only).
//! - [`source`]: the stored generation a transfer reads (the live view's, checked by digest).
//! - [`zone_records`]: a zone of a generation as records, in transfer order.
//! - [`axfr`], [`ixfr`]: what each kind of transfer sends.
//! - [`messages`]: packing the records into response messages, one at a time.
//! - [`notify`]: NOTIFY to the `--notify` secondaries on every swap.
//! - [`tsig`]: `--tsig-key`, checking requests and signing responses.

pub mod acl;
mod axfr;
mod ixfr;
pub mod messages;
pub mod notify;
pub mod source;
pub mod tsig;
pub mod zone_records;

use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};

use hickory_proto::op::{Message, MessageType, OpCode, ResponseCode};
use hickory_proto::rr::{DNSClass, RData, RecordType};

pub use acl::Acl;
use messages::{Head, Messages};
use source::Source;
pub use zone_records::Which;

use crate::dns::transport::Transport;
use crate::dns::wire::{HEADER_LEN, TYPE_AXFR, TYPE_IXFR, TYPE_SOA, u16_at};
pub use crate::store::status_file::TransferCountersSnapshot;
use crate::zone::view::ZoneView;

/// Transfers done, by how they were answered (read by tests and the status file).
#[derive(Debug, Default)]
pub struct TransferCounters {
    pub axfr: AtomicU64,
    pub ixfr: AtomicU64,
    /// IXFR requests answered with a full zone: the client's serial is no longer (or never was) stored.
    pub ixfr_as_axfr: AtomicU64,
    /// IXFR requests answered with the single SOA: the client is current, or asked over UDP.
    pub ixfr_current: AtomicU64,
    /// Signed SOA queries (a keyed secondary's refresh check), answered signed.
    pub signed_soa: AtomicU64,
    /// Refused with NOTAUTH under `--tsig-key`, by TSIG outcome.
    pub tsig_unsigned: AtomicU64,
    pub tsig_badkey: AtomicU64,
    pub tsig_badsig: AtomicU64,
    pub tsig_badtime: AtomicU64,
    /// Transfers that could not be served (no generation, a file that does not check out).
    pub failed: AtomicU64,
}

impl TransferCounters {
    pub fn snapshot(&self) -> TransferCountersSnapshot {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        TransferCountersSnapshot {
            axfr: g(&self.axfr),
            ixfr: g(&self.ixfr),
            ixfr_as_axfr: g(&self.ixfr_as_axfr),
            ixfr_current: g(&self.ixfr_current),
            signed_soa: g(&self.signed_soa),
            tsig_unsigned: g(&self.tsig_unsigned),
            tsig_badkey: g(&self.tsig_badkey),
            tsig_badsig: g(&self.tsig_badsig),
            tsig_badtime: g(&self.tsig_badtime),
            failed: g(&self.failed),
        }
    }

    fn refused(&self, error: Option<&tsig::TsigError>) -> &AtomicU64 {
        match error {
            None => &self.tsig_unsigned,
            Some(tsig::TsigError::BadKey) => &self.tsig_badkey,
            Some(tsig::TsigError::BadTime) => &self.tsig_badtime,
            Some(_) => &self.tsig_badsig,
        }
    }
}

/// The transfer side of a running server.
#[derive(Debug)]
pub struct Transfers {
    acl: Acl,
    source: Source,
    key: Option<tsig::Key>,
    pub counters: TransferCounters,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Axfr,
    /// The serial in the request's authority SOA (`None`: none given, a FORMERR).
    Ixfr(Option<u32>),
    /// A TSIG-signed SOA query at the apex: a keyed secondary checking for a new serial expects
    /// a signed answer (RFC 8945 §5.3), which the query rules cannot give.
    Soa,
}

/// A transfer request from an allowed client, for one of our zones.
#[derive(Debug, Clone)]
pub struct Request {
    pub head: Head,
    pub kind: Kind,
    pub which: Which,
    pub peer: IpAddr,
    pub transport: Transport,
    /// With `--tsig-key`: how the request's signature checked out.
    pub tsig: Option<tsig::Checked>,
}

impl Transfers {
    pub fn new(acl: Acl, state_dir: &std::path::Path, key: Option<tsig::Key>) -> Transfers {
        Transfers {
            acl,
            source: Source::new(state_dir),
            key,
            counters: TransferCounters::default(),
        }
    }

    /// A transfer request this module answers: AXFR (TCP only; RFC 5936 §4.2 defines none over UDP)
    /// or IXFR, from an allowed client, in class IN, for the forward or the reverse zone of `view`.
    /// Anything else is `None` and goes to the query rules. Cheap for ordinary queries: the QTYPE is
    /// read from the raw bytes before anything is decoded.
    pub fn request(
        &self,
        peer: IpAddr,
        msg: &[u8],
        view: &ZoneView,
        transport: Transport,
    ) -> Option<Request> {
        let qtype = raw_qtype(msg)?;
        let signed_soa =
            qtype == TYPE_SOA && self.key.is_some() && u16_at(msg, 10).is_some_and(|ar| ar > 0);
        let wanted =
            qtype == TYPE_IXFR || (qtype == TYPE_AXFR && transport == Transport::Tcp) || signed_soa;
        if !wanted || !self.acl.allows(peer) {
            return None;
        }
        let m = Message::from_vec(msg).ok()?;
        if m.metadata.message_type != MessageType::Query
            || m.metadata.op_code != OpCode::Query
            || m.queries.len() != 1
        {
            return None;
        }
        // With a key, an unsigned transfer is NOTAUTH here; an unsigned SOA query is an ordinary query.
        let tsig = match &self.key {
            Some(_) if m.signature.is_none() && qtype == TYPE_SOA => return None,
            Some(key) => Some(key.check(msg, &m)),
            None => None,
        };
        let q = &m.queries[0];
        if q.query_class() != DNSClass::IN {
            return None;
        }
        let asked = q.name().to_lowercase().to_ascii();
        let asked = asked.trim_end_matches('.');
        let which = if let Some(z) = view.zones().iter().find(|z| z.as_str() == asked) {
            Which::Forward(z.as_str().into())
        } else if view.reverse().is_some_and(|r| r.zone() == asked) {
            Which::Reverse
        } else {
            return None;
        };
        let kind = if q.query_type() == RecordType::AXFR {
            Kind::Axfr
        } else if q.query_type() == RecordType::SOA {
            Kind::Soa
        } else {
            Kind::Ixfr(m.authorities.iter().find_map(|r| match &r.data {
                RData::SOA(s) => Some(s.serial),
                _ => None,
            }))
        };
        Some(Request {
            head: Head {
                id: m.metadata.id,
                rd: m.metadata.recursion_desired,
                query: q.clone(),
            },
            kind,
            which,
            peer,
            transport,
            tsig,
        })
    }

    /// The response messages to `req`, read from the generation `view` serves. Blocking (it reads the
    /// state dir): call it off the async threads.
    pub fn respond(&self, req: &Request, view: &ZoneView) -> Messages {
        let session = || {
            self.key
                .as_ref()
                .zip(req.tsig.as_ref())
                .and_then(|(k, c)| k.session(c))
        };
        let error = |rcode| {
            let m = messages::response(&req.head, rcode, true);
            Messages::one(m).signed(session())
        };
        if matches!(req.tsig, Some(tsig::Checked::FormErr)) {
            // RFC 8945 §5.2.2.1; counted with the bad signatures.
            tracing::warn!(peer = %req.peer, zone = %req.head.query.name(), "transfer refused: TSIG MAC length (FORMERR)");
            self.counters.tsig_badsig.fetch_add(1, Ordering::Relaxed);
            return error(ResponseCode::FormErr);
        }
        if let Some(refusal) = req.tsig.as_ref().and_then(tsig::Checked::refusal) {
            let why = refusal.map_or("unsigned".to_string(), |e| format!("{e:?}"));
            tracing::warn!(peer = %req.peer, zone = %req.head.query.name(), "transfer refused: TSIG {why}");
            self.counters
                .refused(refusal)
                .fetch_add(1, Ordering::Relaxed);
            return error(ResponseCode::NotAuth);
        }
        if req.kind == Kind::Ixfr(None) {
            return error(ResponseCode::FormErr);
        }
        let g = match self.source.live(view.serial(), view.record_digest()) {
            Ok(g) => g,
            Err(e) => {
                tracing::warn!(peer = %req.peer, "transfer not served: {e}");
                self.counters.failed.fetch_add(1, Ordering::Relaxed);
                return error(ResponseCode::ServFail);
            }
        };
        let plan = match req.kind {
            Kind::Ixfr(Some(client)) => {
                ixfr::plan(&self.source, &g, &req.which, client, req.transport)
            }
            Kind::Soa => ixfr::Plan::Current,
            _ => ixfr::Plan::Axfr,
        };
        let counter = match plan {
            ixfr::Plan::Axfr if matches!(req.kind, Kind::Ixfr(_)) => &self.counters.ixfr_as_axfr,
            ixfr::Plan::Axfr => &self.counters.axfr,
            ixfr::Plan::Current if req.kind == Kind::Soa => &self.counters.signed_soa,
            ixfr::Plan::Current => &self.counters.ixfr_current,
            ixfr::Plan::Diff(_) => &self.counters.ixfr,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        // A refresh check is not a transfer: not logged at info.
        if req.kind != Kind::Soa {
            tracing::info!(
                peer = %req.peer,
                zone = %req.head.query.name(),
                request = ?req.kind,
                serial = g.serial,
                answer = plan.label(),
                "zone transfer"
            );
        }
        let records = match plan {
            ixfr::Plan::Current => ixfr::current(&g, &req.which),
            ixfr::Plan::Diff(list) => Some(Box::new(list.into_iter().map(Some)) as _),
            ixfr::Plan::Axfr => axfr::records(g, &req.which),
        };
        match records {
            Some(r) => Messages::new(req.head.clone(), r).signed(session()),
            None => error(ResponseCode::ServFail),
        }
    }
}

impl Transfers {
    /// An IXFR over UDP, answered into `out` (the single current SOA, or an error).
    pub fn respond_udp(
        &self,
        req: &Request,
        view: &ZoneView,
        out: &mut Vec<u8>,
    ) -> Option<crate::serve::answer::Summary> {
        let m = self.respond(req, view).next_message()?.ok()?;
        *out = m.to_vec().ok()?;
        Some(crate::serve::answer::Summary {
            rcode: m.metadata.response_code,
            truncated: false,
        })
    }
}

/// The QTYPE of a query with one question whose name is uncompressed (as every transfer client sends
/// it); `None` for anything else.
fn raw_qtype(msg: &[u8]) -> Option<u16> {
    if msg.len() < HEADER_LEN || msg[2] & 0xF8 != 0 || u16_at(msg, 4)? != 1 {
        return None;
    }
    let mut p = HEADER_LEN;
    loop {
        let len = usize::from(*msg.get(p)?);
        if len == 0 {
            return u16_at(msg, p + 1);
        }
        if len & 0xC0 != 0 {
            return None;
        }
        p += 1 + len;
    }
}
