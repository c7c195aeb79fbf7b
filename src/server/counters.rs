//! Answer counters: atomics the serving loops bump, read as a [`CountersSnapshot`] for the status file.

use std::sync::atomic::{AtomicU64, Ordering};

use hickory_proto::op::ResponseCode;

use crate::answer::Summary;
use crate::status_file::CountersSnapshot;

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
}

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
}
