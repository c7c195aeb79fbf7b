//! DNS wire-format numbers and the small readers and writers shared by the zone view (which encodes its
//! apex records once, when it is built) and the answering core (which parses queries and copies those
//! bytes into responses). A leaf: it imports nothing from the crate.

/// The fixed DNS header; the question name always starts right after it.
pub const HEADER_LEN: usize = 12;
/// RFC 1035 §2.3.4: a name is at most 255 octets on the wire.
pub const MAX_NAME_WIRE: usize = 255;
/// RFC 1035 §2.3.4: a label is at most 63 octets.
const MAX_LABEL_WIRE: usize = 63;
/// Compression pointer to the question name.
pub const PTR_QNAME: [u8; 2] = [0xC0, HEADER_LEN as u8];

pub const TYPE_A: u16 = 1;
pub const TYPE_NS: u16 = 2;
pub const TYPE_SOA: u16 = 6;
pub const TYPE_PTR: u16 = 12;
pub const TYPE_OPT: u16 = 41;
pub const TYPE_IXFR: u16 = 251;
pub const TYPE_AXFR: u16 = 252;
pub const TYPE_ANY: u16 = 255;
pub const CLASS_IN: u16 = 1;

pub fn u16_at(msg: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*msg.get(at)?, *msg.get(at + 1)?]))
}

pub fn push_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}

pub fn push_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Writes a presentation-form name (trailing dot optional) uncompressed, as spelled. `None`, with `out`
/// possibly extended, when it is not a valid name: an empty or over-long label, or over 255 octets.
pub fn push_name(out: &mut Vec<u8>, name: &str) -> Option<()> {
    let name = name.strip_suffix('.').unwrap_or(name);
    let start = out.len();
    if !name.is_empty() {
        for label in name.split('.') {
            if label.is_empty() || label.len() > MAX_LABEL_WIRE {
                return None;
            }
            out.push(label.len() as u8);
            out.extend_from_slice(label.as_bytes());
        }
    }
    out.push(0);
    (out.len() - start <= MAX_NAME_WIRE).then_some(())
}

/// Everything of a class-IN record after its owner: type, class, TTL, RDLENGTH and the rdata (which
/// the caller keeps under 64 KiB; ours are at most two names and five numbers).
pub fn push_rr_after_owner(out: &mut Vec<u8>, rtype: u16, ttl: u32, rdata: &[u8]) {
    push_u16(out, rtype);
    push_u16(out, CLASS_IN);
    push_u32(out, ttl);
    push_u16(out, rdata.len() as u16);
    out.extend_from_slice(rdata);
}
