//! Reading a query: the header, the first question (decompressed, case kept) and a structural walk of
//! every other record that finds the OPT. Only structure is checked; rdata other than the OPT's is not
//! interpreted (a query has no business carrying any we would use).

use super::edns::{self, EdnsInfo};
use crate::dns::wire::{HEADER_LEN, MAX_NAME_WIRE, TYPE_OPT, u16_at};

/// The first question, decompressed.
pub(super) struct Question {
    /// Wire form as the client spelled it (case kept), uncompressed, root label included.
    pub wire: [u8; MAX_NAME_WIRE],
    pub wire_len: usize,
    /// Lowercase presentation form without the trailing dot. A '.' inside a label is stored as 0 so it
    /// can neither match a served name nor fake a label boundary; byte i here is the length byte of the
    /// label starting at wire offset i, which lets the SOA owner point into the question name.
    lower: [u8; MAX_NAME_WIRE],
    pub lower_len: usize,
    pub qtype: u16,
    pub qclass: u16,
}

impl Question {
    fn new() -> Question {
        Question {
            wire: [0; MAX_NAME_WIRE],
            wire_len: 0,
            lower: [0; MAX_NAME_WIRE],
            lower_len: 0,
            qtype: 0,
            qclass: 0,
        }
    }

    fn push_label(&mut self, label: &[u8]) {
        // read_name has checked the total length, so these slices fit.
        let w = self.wire_len;
        self.wire[w] = label.len() as u8;
        self.wire[w + 1..w + 1 + label.len()].copy_from_slice(label);
        self.wire_len += 1 + label.len();
        let mut l = self.lower_len;
        if l > 0 {
            self.lower[l] = b'.';
            l += 1;
        }
        for &b in label {
            self.lower[l] = if b == b'.' { 0 } else { b.to_ascii_lowercase() };
            l += 1;
        }
        self.lower_len = l;
    }

    fn finish(&mut self) {
        self.wire[self.wire_len] = 0;
        self.wire_len += 1;
    }

    pub fn lower(&self) -> &[u8] {
        &self.lower[..self.lower_len]
    }
}

/// A query as far as it could be read.
pub(super) struct Parsed {
    /// The query's ID, echoed.
    pub id: [u8; 2],
    /// The query's two flag bytes (opcode, RD, CD).
    pub flags: [u8; 2],
    pub qdcount: u16,
    /// The first question, when it could be read (even if something after it could not).
    pub question: Option<Question>,
    /// The OPT, when one could be read (even if something after it could not).
    pub edns: Option<EdnsInfo>,
    /// The message as a whole is malformed.
    pub malformed: bool,
}

impl Parsed {
    pub fn opcode(&self) -> u8 {
        (self.flags[0] >> 3) & 0x0F
    }
}

/// Reads a name at `pos`, following compression pointers, and returns the offset just after it.
/// Pointers must point strictly before everything read so far for this name, so loops and forward
/// references are malformed; the total wire length is capped at 255.
fn read_name(msg: &[u8], pos: usize, mut sink: Option<&mut Question>) -> Option<usize> {
    let mut p = pos;
    let mut lowest = pos;
    let mut after: Option<usize> = None;
    let mut total = 0usize;
    loop {
        let len = *msg.get(p)?;
        match len & 0xC0 {
            0x00 if len == 0 => {
                if let Some(q) = sink.as_deref_mut() {
                    q.finish();
                }
                return Some(after.unwrap_or(p + 1));
            }
            0x00 => {
                let l = usize::from(len);
                let label = msg.get(p + 1..p + 1 + l)?;
                total += 1 + l;
                // Leave room for the root label.
                if total + 1 > MAX_NAME_WIRE {
                    return None;
                }
                if let Some(q) = sink.as_deref_mut() {
                    q.push_label(label);
                }
                p += 1 + l;
            }
            0xC0 => {
                let target = usize::from(u16_at(msg, p)? & 0x3FFF);
                if target >= lowest {
                    return None;
                }
                after.get_or_insert(p + 2);
                lowest = target;
                p = target;
            }
            // 0x40 and 0x80: extended/obsolete label types (RFC 6891 §5), not accepted.
            _ => return None,
        }
    }
}

/// Whether to answer at all: a message shorter than a header, or a response (QR=1), is dropped.
pub(super) fn is_query(msg: &[u8]) -> bool {
    msg.len() >= HEADER_LEN && msg[2] & 0x80 == 0
}

/// Walks the whole message (which [`is_query`] has accepted). Returns by value into the caller's frame:
/// with a 530-byte question inside, an `Option` around it would cost two copies per query.
pub(super) fn parse(msg: &[u8]) -> Parsed {
    let mut parsed = Parsed {
        id: [msg[0], msg[1]],
        flags: [msg[2], msg[3]],
        qdcount: u16_at(msg, 4).unwrap_or(0),
        question: None,
        edns: None,
        malformed: false,
    };
    parsed.malformed = walk(msg, &mut parsed).is_none();
    parsed
}

/// The sections after the header; `None` at the first thing that cannot be read, with what was read
/// until then kept in `parsed`.
fn walk(msg: &[u8], parsed: &mut Parsed) -> Option<()> {
    let records = [u16_at(msg, 6)?, u16_at(msg, 8)?, u16_at(msg, 10)?];
    let mut pos = HEADER_LEN;

    for i in 0..parsed.qdcount {
        // The first question is decompressed in place; it is kept only once its type and class are read.
        let sink = (i == 0).then(|| parsed.question.insert(Question::new()));
        let fixed = read_name(msg, pos, sink)
            .and_then(|end| Some((end, u16_at(msg, end)?, u16_at(msg, end + 2)?)));
        let Some((end, qtype, qclass)) = fixed else {
            if i == 0 {
                parsed.question = None;
            }
            return None;
        };
        if let Some(q) = parsed.question.as_mut().filter(|_| i == 0) {
            q.qtype = qtype;
            q.qclass = qclass;
        }
        pos = end + 4;
    }

    for (section, &count) in records.iter().enumerate() {
        let additional = section == 2;
        for _ in 0..count {
            let owner = pos;
            let end = read_name(msg, pos, None)?;
            let rtype = u16_at(msg, end)?;
            let class = u16_at(msg, end + 2)?;
            let ttl = [u16_at(msg, end + 4)?, u16_at(msg, end + 6)?];
            let rdlen = u16_at(msg, end + 8)?;
            let rdata = msg.get(end + 10..end + 10 + usize::from(rdlen))?;
            if rtype == TYPE_OPT {
                // RFC 6891 §6.1.1: only in the additional section, owner is the root, at most one.
                let root_owner = msg.get(owner) == Some(&0);
                if !additional || !root_owner || parsed.edns.is_some() || !edns::options_ok(rdata) {
                    return None;
                }
                parsed.edns = Some(EdnsInfo::from_opt(class, ttl));
            }
            pos = end + 10 + rdata.len();
        }
    }
    // Trailing bytes after the last record are ignored, as most servers do.
    Some(())
}
