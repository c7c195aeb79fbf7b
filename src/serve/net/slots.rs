//! The TCP connection table: at most `cap` live connections, each with the time it last made progress,
//! so that a new connection at the cap can evict the one idle the longest (as Unbound, NSD and Knot
//! make room under load; RFC 7766 §6.2.3 lets a server close idle connections when it needs to), and
//! the idle timeout can shrink once the table is more than half full.
//!
//! Only accept and close take the lock (an O(cap) scan when the table is full); the per-message path
//! is two relaxed atomic stores.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// A connection in the middle of writing answers is evicted only if that write has made no progress
/// for this long (its client is not reading): a write that is moving is never cut.
pub(super) const STALLED_WRITE: Duration = Duration::from_secs(1);

#[derive(Debug)]
pub(super) struct Table {
    epoch: Instant,
    cap: usize,
    /// Connections in the table (mirrors `cap - free.len()`, readable without the lock).
    live: AtomicUsize,
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    slots: Vec<Option<Arc<Slot>>>,
    free: Vec<usize>,
    /// Evicted connections whose tasks have not ended yet; bounded by `cap`.
    closing: usize,
}

/// One live connection's shared state.
#[derive(Debug)]
pub(super) struct Slot {
    index: usize,
    /// Milliseconds since the table's epoch of the last progress: accepted, a complete message read, or
    /// answer bytes written. Bytes of an incomplete message are not progress.
    last_active: AtomicU64,
    /// Answers are being written.
    writing: AtomicBool,
    /// Set (once) when the connection is evicted; `evict` wakes it.
    evicted: AtomicBool,
    evict: Notify,
}

/// What [`Table::admit`] did.
#[derive(Debug)]
pub(super) enum Admission {
    /// A free slot.
    Admitted(Lease),
    /// The table was full; the connection idle the longest was told to close and this one took its slot.
    Evicted(Lease),
    /// The table was full and nothing could be evicted (every connection is writing answers that are
    /// moving, or too many evicted connections are still closing).
    Refused,
}

/// A connection's place in the table; dropping it frees the slot.
#[derive(Debug)]
pub(super) struct Lease {
    table: Arc<Table>,
    slot: Arc<Slot>,
}

impl Table {
    pub(super) fn new(cap: usize) -> Table {
        Table::with_epoch(cap, Instant::now())
    }

    fn with_epoch(cap: usize, epoch: Instant) -> Table {
        Table {
            epoch,
            cap,
            live: AtomicUsize::new(0),
            inner: Mutex::new(Inner {
                slots: vec![None; cap],
                free: (0..cap).rev().collect(),
                closing: 0,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Nothing panics while holding the lock; recover the data if something ever does.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn ms(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.epoch).as_millis()).unwrap_or(u64::MAX)
    }

    pub(super) fn cap(&self) -> usize {
        self.cap
    }

    pub(super) fn live(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }

    /// The idle timeout in force now: `idle`, halved while more than half of the slots are taken.
    pub(super) fn idle_timeout(&self, idle: Duration) -> Duration {
        if self.live() * 2 > self.cap {
            idle / 2
        } else {
            idle
        }
    }

    /// A slot for a new connection, evicting the longest-idle connection when the table is full: first
    /// any connection not writing answers (idle the longest, since its last complete message), else one
    /// whose write has stalled for [`STALLED_WRITE`] (stalled the longest).
    pub(super) fn admit(self: &Arc<Self>) -> Admission {
        let now = self.ms(Instant::now());
        let mut inner = self.lock();
        let fresh = |index| {
            Arc::new(Slot {
                index,
                last_active: AtomicU64::new(now),
                writing: AtomicBool::new(false),
                evicted: AtomicBool::new(false),
                evict: Notify::new(),
            })
        };
        if let Some(index) = inner.free.pop() {
            let slot = fresh(index);
            inner.slots[index] = Some(slot.clone());
            self.live
                .store(self.cap - inner.free.len(), Ordering::Relaxed);
            return Admission::Admitted(self.lease(slot));
        }
        if inner.closing >= self.cap {
            return Admission::Refused;
        }
        let stalled = u64::try_from(STALLED_WRITE.as_millis()).unwrap_or(u64::MAX);
        let victim = inner
            .slots
            .iter()
            .flatten()
            .filter_map(|s| {
                let writing = s.writing.load(Ordering::Relaxed);
                let last = s.last_active.load(Ordering::Relaxed);
                (!writing || now.saturating_sub(last) >= stalled)
                    .then_some((writing, last, s.index))
            })
            .min();
        let Some((_, _, index)) = victim else {
            return Admission::Refused;
        };
        if let Some(old) = inner.slots[index].take() {
            old.evicted.store(true, Ordering::Release);
            old.evict.notify_one();
            inner.closing += 1;
        }
        let slot = fresh(index);
        inner.slots[index] = Some(slot.clone());
        Admission::Evicted(self.lease(slot))
    }

    fn lease(self: &Arc<Self>, slot: Arc<Slot>) -> Lease {
        Lease {
            table: self.clone(),
            slot,
        }
    }
}

impl Lease {
    /// Progress at `at` (a complete message read, or answer bytes written).
    pub(super) fn touch(&self, at: Instant) {
        self.slot
            .last_active
            .store(self.table.ms(at), Ordering::Relaxed);
    }

    pub(super) fn set_writing(&self, writing: bool) {
        self.slot.writing.store(writing, Ordering::Relaxed);
    }

    pub(super) fn is_evicted(&self) -> bool {
        self.slot.evicted.load(Ordering::Acquire)
    }

    /// Completes once the connection has been evicted (at once if it already was).
    pub(super) async fn evicted(&self) {
        if !self.is_evicted() {
            // The one notify_one stores a permit if nobody waits yet, so it cannot be missed.
            self.slot.evict.notified().await
        }
    }

    pub(super) fn idle_timeout(&self, idle: Duration) -> Duration {
        self.table.idle_timeout(idle)
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let mut inner = self.table.lock();
        let i = self.slot.index;
        if inner.slots[i]
            .as_ref()
            .is_some_and(|s| Arc::ptr_eq(s, &self.slot))
        {
            inner.slots[i] = None;
            inner.free.push(i);
            self.table
                .live
                .store(self.table.cap - inner.free.len(), Ordering::Relaxed);
        } else {
            // Evicted: the slot already belongs to the connection that took it.
            inner.closing -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(a: Admission) -> Lease {
        match a {
            Admission::Admitted(l) | Admission::Evicted(l) => l,
            Admission::Refused => panic!("refused"),
        }
    }

    fn at(ms: u64) -> Instant {
        Instant::now() + Duration::from_millis(ms)
    }

    #[tokio::test]
    async fn full_table_evicts_the_longest_idle_and_skips_moving_writes() {
        let t = Arc::new(Table::new(3));
        let a = lease(t.admit());
        let b = lease(t.admit());
        let c = lease(t.admit());
        assert_eq!(t.live(), 3);
        // a is idle the longest but writing (and its write is moving); b is next.
        a.set_writing(true);
        b.touch(at(100));
        c.touch(at(200));
        let d = match t.admit() {
            Admission::Evicted(l) => l,
            other => panic!("{other:?}"),
        };
        assert_eq!(d.slot.index, b.slot.index);
        tokio::time::timeout(Duration::from_secs(1), b.evicted())
            .await
            .expect("b is told to close");
        assert_eq!(t.live(), 3);
        // b's task ends: nothing changes for d, which holds the slot now.
        drop(b);
        assert_eq!(t.live(), 3);
        assert_eq!(t.lock().closing, 0);
        // Every connection writing, every write moving: refused.
        for l in [&a, &c, &d] {
            l.set_writing(true);
            l.touch(Instant::now());
        }
        assert!(matches!(t.admit(), Admission::Refused));
        // Closing one frees its slot for the next.
        drop(c);
        assert_eq!(t.live(), 2);
        let e = lease(t.admit());
        assert_eq!(t.live(), 3);
        drop((a, d, e));
        assert_eq!(t.live(), 0);
    }

    #[tokio::test]
    async fn a_stalled_write_can_be_evicted() {
        // A table started 5 s ago, whose one connection last wrote a byte at its start.
        let t = Arc::new(Table::with_epoch(1, Instant::now() - 5 * STALLED_WRITE));
        let a = lease(t.admit());
        a.set_writing(true);
        a.touch(t.epoch + STALLED_WRITE / 2);
        let b = t.admit();
        assert!(matches!(b, Admission::Evicted(_)));
        drop(a);
        assert_eq!(t.live(), 1);
        drop(b);
        assert_eq!(t.live(), 0);
    }

    #[tokio::test]
    async fn evicted_connections_still_closing_are_bounded() {
        let t = Arc::new(Table::new(2));
        let mut held = vec![lease(t.admit()), lease(t.admit())];
        // Four evictions whose victims never end: after two (the cap), new connections are refused.
        let mut kinds = Vec::new();
        for _ in 0..4 {
            match t.admit() {
                Admission::Evicted(l) => {
                    kinds.push("evicted");
                    held.push(l);
                }
                Admission::Admitted(_) => kinds.push("admitted"),
                Admission::Refused => kinds.push("refused"),
            }
        }
        assert_eq!(kinds, ["evicted", "evicted", "refused", "refused"]);
        drop(held);
        assert_eq!(t.live(), 0);
        assert_eq!(t.lock().closing, 0);
    }

    #[tokio::test]
    async fn the_idle_timeout_halves_above_half_full() {
        let idle = Duration::from_secs(10);
        let t = Arc::new(Table::new(4));
        let a = lease(t.admit());
        let b = lease(t.admit());
        assert_eq!(t.idle_timeout(idle), idle, "2 of 4: not above half");
        let c = lease(t.admit());
        assert_eq!(t.idle_timeout(idle), idle / 2, "3 of 4");
        drop(c);
        assert_eq!(a.idle_timeout(idle), idle);
        drop((a, b));
        assert!(matches!(
            Arc::new(Table::new(0)).admit(),
            Admission::Refused
        ));
    }
}
