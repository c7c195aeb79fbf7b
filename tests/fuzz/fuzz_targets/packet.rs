//! The answering core over arbitrary bytes, over both transports, with an oracle.
//!
//! Each input is one message. It is answered over UDP and TCP with the production limits and again with
//! limits taken from its ID (our EDNS payload = the ID; a test cap of 12 + 2 × ID[1] bytes when ID[0] is
//! odd), from the zone ID[1] & 3 picks (0, 1: zones/pigsty.test.yml; 2: zones/ha.yml; 3: the empty zone).
//! Checked, against hickory-proto as an independent decoder of both the query and the response:
//! - no answer at all to a message under 12 bytes or with QR=1, an answer to every other;
//! - every response decodes with hickory-proto; QR=1, Z=0, RA=0, AD=0; the ID and opcode echoed; RD and
//!   CD echoed except in NOTIMP;
//! - a response question is the query's first question byte for byte (case kept, uncompressed), as
//!   hickory reads it; NOERROR, NXDOMAIN and REFUSED always carry it;
//! - UDP size within the limit: 512 without an OPT, min(max(512, client payload), our payload) with one
//!   (exact when hickory reads the query's OPT, bounds otherwise); TCP within 65,535 and never TC;
//! - TC consistent with the size: TC=0 means the UDP response is the TCP one byte for byte; TC=1 means
//!   the TCP one is over the limit and the UDP one has no answer or authority records, the same rcode,
//!   question and OPT;
//! - the answer agrees with the zone and the answering rules, computed independently: REFUSED exactly
//!   for what is not ours, NXDOMAIN exactly for names that do not exist, otherwise exactly the RRset the
//!   rules name (SOA and NS at the apex, the A where there is one, for ANY one RRset as RFC 8482 lets,
//!   the SOA at the apex, else the A) or NODATA with the SOA, with the zone's address, serial and TTLs;
//!   the same in the reverse zone of a sample, with the PTR where the forward zone has the A.

#![no_main]

use std::net::Ipv4Addr;

use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::{Name, RData, RecordType};
use hickory_proto::serialize::binary::{BinDecodable, BinDecoder};
use libfuzzer_sys::fuzz_target;
use pigsty_dns::dns::transport::Transport;
use pigsty_dns::serve::answer::{Answered, Limits, answer};
use pigsty_dns_fuzz::zones::{self, Served};

const MIN_UDP: usize = 512;
const TYPE_NS: u16 = 2;
const TYPE_SOA: u16 = 6;
const TYPE_A: u16 = 1;
const TYPE_PTR: u16 = 12;
const TYPE_IXFR: u16 = 251;
const TYPE_AXFR: u16 = 252;
const TYPE_ANY: u16 = 255;

fuzz_target!(|data: &[u8]| run(data));

/// The query as hickory-proto (or, for its first name, a plain RFC 1035 reader) reads it, independently
/// of our parser.
struct Independent {
    /// The first question re-encoded uncompressed: what an echo must be, byte for byte.
    question_wire: Option<Vec<u8>>,
    labels: Vec<Vec<u8>>,
    qtype: u16,
    qclass: u16,
    /// The whole message decoded: its OPT's payload (hickory clamps it to ≥ 512) and DO bit.
    edns: Option<Option<(u16, bool)>>,
}

impl Independent {
    fn of(q: &[u8]) -> Independent {
        let mut ind = Independent {
            question_wire: None,
            labels: Vec::new(),
            qtype: 0,
            qclass: 0,
            edns: Message::from_vec(q)
                .ok()
                .map(|m| m.edns.map(|e| (e.max_payload(), e.flags().dnssec_ok))),
        };
        let qdcount = q.get(4..6).map_or(0, |b| u16::from_be_bytes([b[0], b[1]]));
        if qdcount == 0 {
            return ind;
        }
        let Some((labels, end)) = hickory_name(q).or_else(|| rfc1035_name(q)) else {
            return ind;
        };
        let (Some(t), Some(c)) = (q.get(end..end + 2), q.get(end + 2..end + 4)) else {
            return ind;
        };
        let mut wire = Vec::new();
        for label in &labels {
            wire.push(label.len() as u8);
            wire.extend_from_slice(label);
        }
        wire.push(0);
        ind.labels = labels;
        ind.qtype = u16::from_be_bytes([t[0], t[1]]);
        ind.qclass = u16::from_be_bytes([c[0], c[1]]);
        wire.extend_from_slice(&ind.qtype.to_be_bytes());
        wire.extend_from_slice(&ind.qclass.to_be_bytes());
        ind.question_wire = Some(wire);
        ind
    }

    /// Lowercase presentation form without the trailing dot, when no label holds a dot (a label with a
    /// dot can never be a served name).
    fn lower(&self) -> Option<String> {
        if self.labels.iter().any(|l| l.contains(&b'.')) {
            return None;
        }
        let parts: Vec<String> = self
            .labels
            .iter()
            .map(|l| String::from_utf8_lossy(&l.to_ascii_lowercase()).into_owned())
            .collect();
        Some(parts.join("."))
    }

    fn in_zone(&self, zone: &str) -> bool {
        let zl: Vec<&[u8]> = zone.split('.').map(str::as_bytes).collect();
        self.labels.len() >= zl.len()
            && self.labels[self.labels.len() - zl.len()..]
                .iter()
                .zip(&zl)
                .all(|(a, b)| a.eq_ignore_ascii_case(b))
    }
}

/// The first question's name as hickory-proto reads it, and the offset after it.
fn hickory_name(q: &[u8]) -> Option<(Vec<Vec<u8>>, usize)> {
    let mut d = BinDecoder::new(q);
    d.read_slice(12).ok()?;
    let name = Name::read(&mut d).ok()?;
    Some((name.iter().map(<[u8]>::to_vec).collect(), d.index()))
}

/// The same by the plain RFC 1035 rule, a pointer to any offset before itself. hickory also wants what a
/// pointer leads to to end before the name's earlier part (a pointer into the header reads header bytes
/// that run past it), which Knot and our parser do not; for such queries the echo is checked against
/// this reader instead.
fn rfc1035_name(q: &[u8]) -> Option<(Vec<Vec<u8>>, usize)> {
    let (mut pos, mut end, mut total, mut hops) = (12usize, None, 1usize, 0);
    let mut labels = Vec::new();
    loop {
        let len = *q.get(pos)?;
        match len >> 6 {
            0 if len == 0 => return Some((labels, end.unwrap_or(pos + 1))),
            0 => {
                let l = usize::from(len);
                labels.push(q.get(pos + 1..pos + 1 + l)?.to_vec());
                total += 1 + l;
                if total > 255 {
                    return None;
                }
                pos += 1 + l;
            }
            3 => {
                let target = usize::from(u16_at(q.get(..pos + 2)?, pos) & 0x3FFF);
                hops += 1;
                if target >= pos || hops > 255 {
                    return None;
                }
                end.get_or_insert(pos + 2);
                pos = target;
            }
            _ => return None,
        }
    }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn counts(r: &[u8]) -> [u16; 4] {
    [u16_at(r, 4), u16_at(r, 6), u16_at(r, 8), u16_at(r, 10)]
}

fn tc(r: &[u8]) -> bool {
    r[2] & 0x02 != 0
}

fn varied(id: [u8; 2]) -> Limits {
    Limits {
        udp_max_payload: u16::from_be_bytes(id),
        udp_cap: (id[0] & 1 == 1).then(|| 12 + 2 * usize::from(id[1])),
    }
}

fn run(q: &[u8]) {
    let id = [*q.first().unwrap_or(&0), *q.get(1).unwrap_or(&0)];
    let served: &Served = match id[1] & 3 {
        0 | 1 => &zones::META,
        2 => &zones::HA,
        _ => &zones::EMPTY,
    };
    let is_query = q.len() >= 12 && q[2] & 0x80 == 0;
    let ind = is_query.then(|| Independent::of(q));
    for limits in [Limits::default(), varied(id)] {
        let tcp = answer(&served.view, q, Transport::Tcp, &limits);
        let udp = answer(&served.view, q, Transport::Udp, &limits);
        let Some(ind) = &ind else {
            assert!(
                tcp.is_none() && udp.is_none(),
                "answered a response or a short message"
            );
            continue;
        };
        let tcp = tcp.expect("a query is answered over TCP");
        let udp = udp.expect("a query is answered over UDP");
        common(q, &tcp, ind, served, &limits);
        common(q, &udp, ind, served, &limits);
        let (t, u) = (&tcp.bytes, &udp.bytes);

        assert!(t.len() <= 65_535, "TCP response over 65535 bytes");
        assert!(!tc(t) && !tcp.truncated, "TC over TCP");

        let has_opt = counts(u)[3] == 1;
        let own = usize::from(limits.udp_max_payload).max(MIN_UDP);
        let (mut lo, mut hi) = match (has_opt, ind.edns) {
            (false, _) => (MIN_UDP, MIN_UDP),
            (true, Some(Some((payload, _)))) => {
                let l = usize::from(payload).max(MIN_UDP).min(own);
                (l, l)
            }
            (true, _) => (MIN_UDP, own),
        };
        if let Some(cap) = limits.udp_cap {
            lo = lo.min(cap);
            hi = hi.min(cap);
        }
        assert_eq!(tc(u), udp.truncated, "TC bit and summary disagree");
        if tc(u) {
            assert!(
                t.len() > lo,
                "TC=1 but the full response ({}) fits {lo}",
                t.len()
            );
            let (uc, tcn) = (counts(u), counts(t));
            assert_eq!(
                (uc[1], uc[2]),
                (0, 0),
                "a truncated response carries records"
            );
            assert_eq!(
                (uc[0], uc[3]),
                (tcn[0], tcn[3]),
                "truncation changed question or OPT"
            );
            assert_eq!(u[3] & 0x0F, t[3] & 0x0F, "truncation changed the rcode");
            let within = u.len() <= hi;
            assert!(
                within || limits.udp_cap.is_some(),
                "UDP response of {} bytes over the limit {hi}",
                u.len()
            );
        } else {
            assert_eq!(u, t, "an untruncated UDP response differs from the TCP one");
            assert!(
                u.len() <= hi,
                "UDP response of {} bytes over the limit {hi}",
                u.len()
            );
        }
    }
}

/// Checks that hold for a response over either transport.
fn common(q: &[u8], a: &Answered, ind: &Independent, served: &Served, limits: &Limits) {
    let r = &a.bytes;
    let m = Message::from_vec(r)
        .unwrap_or_else(|e| panic!("response does not decode with hickory-proto: {e}\n{r:02x?}"));
    assert!(r.len() >= 12);
    assert_eq!(r[..2], q[..2], "ID not echoed");
    assert_ne!(r[2] & 0x80, 0, "QR=0 in a response");
    assert_eq!(r[2] & 0x78, q[2] & 0x78, "opcode not echoed");
    assert_eq!(r[3] & 0xE0, 0, "RA, Z or AD set");
    let rcode = m.metadata.response_code;
    // Compared as numbers: hickory names 16 BADSIG as well as BADVERS.
    assert_eq!(
        u16::from(rcode),
        u16::from(a.rcode),
        "rcode summary disagrees with the bytes"
    );
    let opcode = (q[2] >> 3) & 0x0F;
    if rcode == ResponseCode::NotImp {
        assert_ne!(opcode, 0, "NOTIMP for QUERY");
        assert_eq!((r[2] & 0x01, r[3] & 0x10), (0, 0), "RD/CD echoed in NOTIMP");
    } else {
        assert_eq!(r[2] & 0x01, q[2] & 0x01, "RD not echoed");
        assert_eq!(r[3] & 0x10, q[3] & 0x10, "CD not echoed");
    }
    let [qd, an, ns, ar] = counts(r);
    assert!(qd <= 1 && ar <= 1, "counts {qd} {ar}");
    if qd == 1 {
        let want = ind
            .question_wire
            .as_ref()
            .expect("a question echoed that neither hickory nor RFC 1035 can read in the query");
        assert_eq!(
            r.get(12..12 + want.len()),
            Some(want.as_slice()),
            "question not echoed byte for byte"
        );
    } else {
        assert_eq!((an, ns), (0, 0), "records without a question");
    }
    if ar == 1 {
        let e = m.edns.as_ref().expect("the additional record is an OPT");
        assert_eq!(e.version(), 0);
        assert_eq!(
            e.max_payload(),
            limits.udp_max_payload.max(MIN_UDP as u16),
            "our OPT advertises our payload"
        );
        if let Some(Some((_, dnssec_ok))) = ind.edns {
            assert_eq!(e.flags().dnssec_ok, dnssec_ok, "DO not copied");
        }
    }
    let authoritative = matches!(rcode, ResponseCode::NoError | ResponseCode::NXDomain);
    assert_eq!(r[2] & 0x04 != 0, authoritative, "AA");
    if !matches!(
        rcode,
        ResponseCode::NoError | ResponseCode::NXDomain | ResponseCode::Refused
    ) {
        assert_eq!((an, ns), (0, 0), "records in an error response");
        return;
    }
    // NOERROR, NXDOMAIN, REFUSED: a QUERY with its one question read.
    assert_eq!(qd, 1, "{rcode} without the question");
    assert_eq!(opcode, 0, "{rcode} for opcode {opcode}");
    // The zone the question is in: the forward zone, or the reverse zone of a sample.
    let reverse = !ind.in_zone(&served.zone)
        && served
            .reverse_zone
            .as_deref()
            .is_some_and(|z| ind.in_zone(z));
    let zone = match (reverse, &served.reverse_zone) {
        (true, Some(z)) => z.as_str(),
        _ => served.zone.as_str(),
    };
    let answerable =
        ind.qclass == 1 && ind.in_zone(zone) && ind.qtype != TYPE_AXFR && ind.qtype != TYPE_IXFR;
    if rcode == ResponseCode::Refused {
        assert!(!answerable, "REFUSED an answerable question");
        assert_eq!((an, ns), (0, 0));
        return;
    }
    assert!(answerable, "{rcode} for a question that is not ours");
    let lower = ind.lower();
    // What the name holds: an address, a PTR target, or nothing (apex, empty non-terminal).
    let node: Option<(Option<Ipv4Addr>, Option<&str>)> = lower.as_ref().and_then(|n| {
        if reverse {
            served.ptr.get(n).map(|t| (None, t.as_deref()))
        } else {
            served.names.get(n).map(|a| (*a, None))
        }
    });
    let apex = lower.as_deref() == Some(zone);
    if a.truncated {
        return;
    }
    if rcode == ResponseCode::NXDomain {
        assert!(node.is_none(), "NXDOMAIN for {lower:?}, which exists");
        assert_eq!((an, ns), (0, 1), "NXDOMAIN without exactly the SOA");
    } else {
        let node = node.unwrap_or_else(|| panic!("NOERROR for {lower:?}, which does not exist"));
        // The answering rules: SOA and NS at the apex; the A where there is one; ANY (RFC 8482) one
        // RRset, the SOA at the apex, else the A; anything else NODATA.
        let want = match (ind.qtype, apex, node) {
            (TYPE_SOA | TYPE_ANY, true, _) => Some(RecordType::SOA),
            (TYPE_NS, true, _) => Some(RecordType::NS),
            (TYPE_A | TYPE_ANY, _, (Some(_), _)) => Some(RecordType::A),
            (TYPE_PTR | TYPE_ANY, _, (_, Some(_))) => Some(RecordType::PTR),
            _ => None,
        };
        match want {
            None => assert_eq!((an, ns), (0, 1), "NODATA is not exactly the SOA"),
            Some(t) => {
                assert!(
                    an >= 1 && ns == 0,
                    "{t} answer: {an} answers, {ns} authority"
                );
                assert!(an == 1 || t == RecordType::NS, "{an} {t} records");
            }
        }
        for rec in &m.answers {
            assert_eq!(
                rec.name, m.queries[0].name,
                "answer owner is not the question"
            );
            assert_eq!(Some(rec.record_type()), want, "answer type");
            assert_eq!(rec.ttl, served.view.ttl(), "answer TTL");
            match &rec.data {
                RData::A(addr) => assert_eq!(Some(addr.0), node.0, "wrong address"),
                RData::PTR(p) => assert_eq!(
                    Some(p.0.to_ascii().trim_end_matches('.')),
                    node.1,
                    "wrong PTR target"
                ),
                RData::SOA(s) => assert_eq!(s.serial, served.view.serial(), "SOA serial"),
                RData::NS(_) => {}
                other => panic!("unexpected answer {other:?}"),
            }
        }
    }
    for soa in &m.authorities {
        assert_eq!(
            soa.record_type(),
            RecordType::SOA,
            "authority holds only the SOA"
        );
        assert_eq!(
            soa.ttl,
            served.view.negative_ttl(),
            "negative SOA TTL (RFC 2308 §5)"
        );
        assert!(
            soa.name
                .to_ascii()
                .eq_ignore_ascii_case(&format!("{zone}.")),
            "negative SOA owner is not the apex: {}",
            soa.name
        );
    }
}
