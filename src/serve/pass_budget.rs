//! When a reload pass woken by file events may start. A change that is not part of a flood goes live
//! at once: up to [`PASS_BUDGET`] passes in any [`PASS_WINDOW`] start without waiting. Once the budget
//! is spent, each pass starts no sooner than [`PASS_GAP`] after the last one ended, so a flood of
//! events still costs at most about one pass per gap, whatever its rate. (Before the budget, every
//! pass waited for the gap: back-to-back `load`s of a 10-name file went live in 36 ms instead of 3.)

use std::collections::VecDeque;
use std::time::{Duration, Instant};

pub use super::reload::PASS_GAP;

/// Passes that start at once in any [`PASS_WINDOW`]: a script that loads once per VM, or a user's
/// edits, stay inside it; a flood spends it in its first moments and then meets the gap.
pub const PASS_BUDGET: usize = 10;
/// The window the budget is counted over.
pub const PASS_WINDOW: Duration = Duration::from_secs(1);

/// The starts of the last [`PASS_BUDGET`] passes, every pass counted (woken by events, the rescan or
/// SIGHUP): in a flood the window stays full of gap-spaced passes, so the budget does not refill
/// while passes are short; with long passes it refills at most [`PASS_BUDGET`] per [`PASS_WINDOW`],
/// so a flood costs at most that plus one pass per [`PASS_GAP`] a second.
#[derive(Debug, Default)]
pub struct PassBudget {
    starts: VecDeque<Instant>,
}

impl PassBudget {
    /// When a pass woken by events at `now` may start, the last pass having ended at `last_end`:
    /// `now` while the budget lasts, else [`PASS_GAP`] after `last_end` (or `now`, if that is later).
    pub fn start_at(&mut self, now: Instant, last_end: Instant) -> Instant {
        while self
            .starts
            .front()
            .is_some_and(|s| now.saturating_duration_since(*s) >= PASS_WINDOW)
        {
            self.starts.pop_front();
        }
        if self.starts.len() < PASS_BUDGET {
            now
        } else {
            (last_end + PASS_GAP).max(now)
        }
    }

    /// A pass started at `at`.
    pub fn started(&mut self, at: Instant) {
        self.starts.push_back(at);
        while self.starts.len() > PASS_BUDGET {
            self.starts.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_changes_start_at_once_and_a_flood_meets_the_gap() {
        let t0 = Instant::now();
        let mut b = PassBudget::default();
        let ms = |n: u64| Duration::from_millis(n);
        // Back-to-back passes 5 ms apart (each 1 ms long): the budget's worth start at once.
        let mut now = t0;
        for _ in 0..PASS_BUDGET {
            assert_eq!(b.start_at(now, now - ms(4)), now);
            b.started(now);
            now += ms(5);
        }
        // The next waits for the gap after the last pass ended.
        let last_end = now - ms(4);
        assert_eq!(b.start_at(now, last_end), last_end + PASS_GAP);
        // A flood: passes spaced by the gap keep the window full, so every one waits.
        let mut end = last_end;
        for _ in 0..100 {
            let at = b.start_at(end + ms(1), end);
            assert_eq!(at, end + PASS_GAP);
            b.started(at);
            end = at + ms(1);
        }
        // A quiet window later, a single change goes at once again.
        let later = end + PASS_WINDOW;
        assert_eq!(b.start_at(later, end), later);
    }
}
