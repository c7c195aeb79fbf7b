//! Packing a transfer's records into response messages (RFC 5936 §2.2): same ID in every message, the
//! question only in the first, AA set, as many records per message as fit a budget well under the
//! 64 KiB a TCP frame can carry. One message is built at a time, so a transfer holds one message's
//! bytes however large the zone is (the generation itself is shared with the queries' cache).

use hickory_proto::op::{Message, MessageType, OpCode, Query, ResponseCode};
use hickory_proto::rr::{RData, Record};

use super::tsig::Session;

/// Uncompressed record bytes per message: a 100,000-name zone goes in about 250 messages.
const BUDGET: usize = 16 * 1024;

/// The response header fields every message of one transfer shares.
#[derive(Debug, Clone)]
pub struct Head {
    pub id: u16,
    pub rd: bool,
    pub query: Query,
}

/// The messages of one transfer, built lazily.
#[allow(clippy::type_complexity)]
pub struct Messages {
    head: Head,
    records: Box<dyn Iterator<Item = Option<Record>> + Send>,
    first: bool,
    done: bool,
    /// A message already built, sent as the whole transfer.
    ready: Option<Message>,
    /// With `--tsig-key`: signs every message, in order.
    session: Option<Session>,
}

impl Messages {
    pub fn new(head: Head, records: Box<dyn Iterator<Item = Option<Record>> + Send>) -> Messages {
        Messages {
            head,
            records,
            first: true,
            done: false,
            ready: None,
            session: None,
        }
    }

    /// Signs every message with this TSIG session.
    pub fn signed(mut self, session: Option<Session>) -> Messages {
        self.session = session;
        self
    }

    /// A transfer of exactly one message (an error, or the single SOA of an up-to-date IXFR).
    pub fn one(m: Message) -> Messages {
        Messages {
            head: Head {
                id: m.metadata.id,
                rd: m.metadata.recursion_desired,
                query: m.queries.first().cloned().unwrap_or_default(),
            },
            records: Box::new(std::iter::empty()),
            first: true,
            done: false,
            ready: None,
            session: None,
        }
        .with_first(m)
    }

    fn with_first(mut self, m: Message) -> Messages {
        self.ready = Some(m);
        self
    }

    /// The next message, or `None` when the transfer is complete. `Some(Err)` means a record could not
    /// be written: the caller closes the connection, so the secondary discards the partial transfer.
    pub fn next_message(&mut self) -> Option<Result<Message, String>> {
        let next = self.unsigned_message()?;
        Some(next.and_then(|mut m| {
            if let Some(s) = self.session.as_mut() {
                s.sign(&mut m)?;
            }
            Ok(m)
        }))
    }

    fn unsigned_message(&mut self) -> Option<Result<Message, String>> {
        if let Some(m) = self.ready.take() {
            self.done = true;
            return Some(Ok(m));
        }
        if self.done {
            return None;
        }
        let mut m = response(&self.head, ResponseCode::NoError, self.first);
        let mut used = 0usize;
        loop {
            match self.records.next() {
                None => {
                    self.done = true;
                    break;
                }
                Some(None) => {
                    self.done = true;
                    return Some(Err("a record of the zone cannot be written".into()));
                }
                Some(Some(r)) => {
                    used += estimate(&r);
                    m.add_answer(r);
                    if used >= BUDGET {
                        break;
                    }
                }
            }
        }
        // The last call after an exactly full message would otherwise send an empty one.
        if m.answers.is_empty() && !self.first {
            return None;
        }
        self.first = false;
        Some(Ok(m))
    }
}

/// A response to the transfer request with this rcode and, if `question`, the question echoed.
pub fn response(head: &Head, rcode: ResponseCode, question: bool) -> Message {
    let mut m = Message::new(head.id, MessageType::Response, OpCode::Query);
    m.metadata.authoritative = rcode == ResponseCode::NoError;
    m.metadata.recursion_desired = head.rd;
    m.metadata.response_code = rcode;
    if question {
        m.add_query(head.query.clone());
    }
    m
}

/// Uncompressed size of a record: owner, fixed fields, rdata.
fn estimate(r: &Record) -> usize {
    let rdata = match &r.data {
        RData::A(_) => 4,
        RData::NS(n) => n.0.len() + 2,
        RData::PTR(n) => n.0.len() + 2,
        RData::SOA(s) => s.mname.len() + s.rname.len() + 24,
        _ => 64,
    };
    r.name.len() + 2 + 10 + rdata
}
