//! Answer counters: atomics the serving loops bump, read as a [`CountersSnapshot`] for the status file;
//! and the last few names answered NXDOMAIN over UDP, the evidence `route install` looks for its random
//! probe names in (any client could move a counter; only its own lookup puts its name here).

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use hickory_proto::op::ResponseCode;

use crate::serve::answer::Summary;
use crate::store::status_file::CountersSnapshot;

/// Answer counters for the status file.
#[derive(Debug, Default)]
pub struct Counters {
    pub noerror: AtomicU64,
    pub nxdomain: AtomicU64,
    pub refused: AtomicU64,
    pub formerr: AtomicU64,
    pub notimp: AtomicU64,
    pub servfail: AtomicU64,
    pub badvers: AtomicU64,
    pub other: AtomicU64,
    /// Packets not answered at all (too short, or QR=1).
    pub dropped: AtomicU64,
    /// UDP answers sent with TC=1.
    pub truncated: AtomicU64,
    pub tcp_accepted: AtomicU64,
    /// TCP connections closed at once: the cap was reached and no connection could be evicted.
    pub tcp_refused: AtomicU64,
    /// TCP connections closed to make room for a new one at the cap (the one idle the longest).
    pub tcp_evicted: AtomicU64,
    /// The last [`NXDOMAIN_NAMES`] names answered NXDOMAIN, oldest first.
    nxdomain_names: Mutex<VecDeque<String>>,
}

/// How many NXDOMAIN names are kept: enough for a check's probe to survive other misses between two
/// status writes, small enough to copy at each.
pub const NXDOMAIN_NAMES: usize = 16;

impl Counters {
    pub fn new() -> Counters {
        Counters::default()
    }

    pub fn record(&self, s: &Summary) {
        let c = match s.rcode {
            ResponseCode::NoError => &self.noerror,
            ResponseCode::NXDomain => &self.nxdomain,
            ResponseCode::Refused => &self.refused,
            ResponseCode::FormErr => &self.formerr,
            ResponseCode::NotImp => &self.notimp,
            ResponseCode::ServFail => &self.servfail,
            ResponseCode::BADVERS => &self.badvers,
            _ => &self.other,
        };
        c.fetch_add(1, Ordering::Relaxed);
        if s.truncated {
            self.truncated.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// [`Counters::record`], and for an NXDOMAIN the question's name from `answer` (the encoded
    /// reply). Only the NXDOMAIN path does more than count, and it never waits: a ring held by another
    /// thread is skipped.
    pub fn record_answer(&self, s: &Summary, answer: &[u8]) {
        self.record(s);
        if s.rcode == ResponseCode::NXDomain
            && let Some(name) = question_name(answer)
            && let Ok(mut ring) = self.nxdomain_names.try_lock()
        {
            if ring.len() == NXDOMAIN_NAMES {
                ring.pop_front();
            }
            ring.push_back(name);
        }
    }

    /// The recent NXDOMAIN names, oldest first.
    pub fn nxdomain_names(&self) -> Vec<String> {
        self.nxdomain_names
            .lock()
            .map(|r| r.iter().cloned().collect())
            .unwrap_or_default()
    }

    pub fn dropped(&self) {
        self.dropped.fetch_add(1, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> CountersSnapshot {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        CountersSnapshot {
            noerror: g(&self.noerror),
            nxdomain: g(&self.nxdomain),
            refused: g(&self.refused),
            formerr: g(&self.formerr),
            notimp: g(&self.notimp),
            servfail: g(&self.servfail),
            badvers: g(&self.badvers),
            other: g(&self.other),
            dropped: g(&self.dropped),
            truncated: g(&self.truncated),
            tcp_accepted: g(&self.tcp_accepted),
            tcp_refused: g(&self.tcp_refused),
            tcp_evicted: g(&self.tcp_evicted),
        }
    }
}

/// The first question's name of a DNS message, lowercase, in presentation format (RFC 1035 §5.1: `\.`
/// for a dot inside a label, `\\` for a backslash, `\DDD` for any byte outside printable ASCII),
/// without the trailing dot (`.` for the root); `None` when there is no question or its name is not
/// plain labels within 255 bytes on the wire. Any client chooses these bytes: as text they can
/// neither pass for another name nor carry a control character into the status file.
fn question_name(msg: &[u8]) -> Option<String> {
    if msg.get(4..6)? == [0, 0] {
        return None;
    }
    let mut at = 12;
    let mut wire = 1;
    let mut name = String::new();
    loop {
        let len = usize::from(*msg.get(at)?);
        if len == 0 {
            break;
        }
        // A pointer (0xC0) or a reserved label type: not in a question this server encodes.
        wire += 1 + len;
        if len > 63 || wire > 255 {
            return None;
        }
        let label = msg.get(at + 1..at + 1 + len)?;
        if !name.is_empty() {
            name.push('.');
        }
        for b in label.iter().map(u8::to_ascii_lowercase) {
            match b {
                b'.' | b'\\' => {
                    name.push('\\');
                    name.push(char::from(b));
                }
                0x21..=0x7e => name.push(char::from(b)),
                _ => name.push_str(&format!("\\{b:03}")),
            }
        }
        at += 1 + len;
    }
    Some(if name.is_empty() { ".".into() } else { name })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_count_by_rcode() {
        let c = Counters::new();
        c.record(&Summary {
            rcode: ResponseCode::NoError,
            truncated: true,
        });
        c.record(&Summary {
            rcode: ResponseCode::BADVERS,
            truncated: false,
        });
        c.record(&Summary {
            rcode: ResponseCode::YXDomain,
            truncated: false,
        });
        c.dropped();
        let s = c.snapshot();
        assert_eq!(
            (s.noerror, s.badvers, s.other, s.dropped, s.truncated),
            (1, 1, 1, 1, 1)
        );
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.contains("\"badvers\":1"), "{json}");
    }

    #[test]
    fn nxdomain_names_are_kept_in_a_small_ring() {
        let c = Counters::new();
        let msg = |name: &str| {
            let mut m = vec![0x12, 0x34, 0x81, 0x83, 0, 1, 0, 0, 0, 0, 0, 0];
            for l in name.split('.') {
                m.push(l.len() as u8);
                m.extend_from_slice(l.as_bytes());
            }
            m.extend_from_slice(&[0, 0, 1, 0, 1]);
            m
        };
        let nx = Summary {
            rcode: ResponseCode::NXDomain,
            truncated: false,
        };
        let ok = Summary {
            rcode: ResponseCode::NoError,
            truncated: false,
        };
        c.record_answer(&ok, &msg("meta.pigsty.test"));
        c.record_answer(&nx, &msg("Probe-1.PIGSTY.test"));
        assert_eq!(c.nxdomain_names(), ["probe-1.pigsty.test"]);
        for i in 0..NXDOMAIN_NAMES + 3 {
            c.record_answer(&nx, &msg(&format!("n{i}.pigsty.test")));
        }
        let names = c.nxdomain_names();
        assert_eq!(names.len(), NXDOMAIN_NAMES);
        assert_eq!(names[0], "n3.pigsty.test");
        assert_eq!(
            names[NXDOMAIN_NAMES - 1],
            format!("n{}.pigsty.test", NXDOMAIN_NAMES + 2)
        );
        assert_eq!(c.snapshot().nxdomain, NXDOMAIN_NAMES as u64 + 4);
        // No question, a pointer, a cut message: counted, no name.
        let before = c.nxdomain_names();
        let mut none = msg("x.test");
        none[5] = 0;
        c.record_answer(&nx, &none);
        c.record_answer(
            &nx,
            &[0x12, 0x34, 0x81, 0x83, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12],
        );
        c.record_answer(&nx, &msg("cut.test")[..15]);
        assert_eq!(c.nxdomain_names(), before);
        assert_eq!(question_name(&msg("")[..]).as_deref(), Some("."));
    }

    /// RFC 1035 §5.1: a dot inside a label is `\.`, a backslash `\\`, anything outside printable
    /// ASCII `\DDD` — one name never reads as another, and no control or C1 byte reaches status.json.
    #[test]
    fn nxdomain_names_are_kept_in_presentation_format() {
        let c = Counters::new();
        let nx = Summary {
            rcode: ResponseCode::NXDomain,
            truncated: false,
        };
        let mut m = vec![0x12, 0x34, 0x81, 0x83, 0, 1, 0, 0, 0, 0, 0, 0];
        for l in [
            &b"a.b"[..],
            b"X\\y",
            b"\x1b]0;\x07",
            b"\x9b\xe9 ",
            b"pigsty",
            b"test",
        ] {
            m.push(l.len() as u8);
            m.extend_from_slice(l);
        }
        m.extend_from_slice(&[0, 0, 1, 0, 1]);
        c.record_answer(&nx, &m);
        assert_eq!(
            c.nxdomain_names(),
            ["a\\.b.x\\\\y.\\027]0;\\007.\\155\\233\\032.pigsty.test"]
        );
        // 255 bytes on the wire, not in the text: 63-byte labels of escapes still fit.
        let mut m = vec![0x12, 0x34, 0x81, 0x83, 0, 1, 0, 0, 0, 0, 0, 0];
        for _ in 0..3 {
            m.push(63);
            m.extend_from_slice(&[0xff; 63]);
        }
        m.extend_from_slice(&[0, 0, 1, 0, 1]);
        assert_eq!(question_name(&m).map(|n| n.len()), Some(3 * 63 * 4 + 2));
    }
}
