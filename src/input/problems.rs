//! The problems of one input, collected so a file's whole list is reported at once, as a compiler
//! gives it: each rule that finds problems independent of one another (clashes of different names,
//! the address rule of different records) adds every one it finds and the read goes on; a problem
//! that leaves nothing to read further (invalid YAML, a refused tag, a group loop) ends the list.
//! Whatever the list holds, the read gives no record set, so nothing is ever written from it.
//! [`InputError`], one problem, lives here too: the inventory, the records and the list all speak it.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};

/// Bad input: where it is (an inventory path such as `all.vars.vm_hosts[2].address`), what is wrong with
/// the offending value, and what to do.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct InputError {
    pub at: String,
    pub message: String,
    pub next: String,
}

impl InputError {
    pub fn new(at: impl Into<String>, message: impl Into<String>, next: impl Into<String>) -> Self {
        InputError {
            at: at.into(),
            message: message.into(),
            next: next.into(),
        }
    }
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.at.is_empty() {
            f.write_str(&self.message)
        } else {
            // The place cut in the middle: nested long group names would make it any length.
            write!(
                f,
                "{}: {}",
                crate::output::text::place(&self.at),
                self.message
            )
        }
    }
}

/// Problems listed at most; the rest are counted ("and N more").
pub const MAX_LISTED: usize = 20;

/// The problems found so far, in the order found, each once.
#[derive(Debug, Default)]
pub struct Problems {
    listed: Vec<InputError>,
    /// Every problem's hash, so one repeated (the same group variable read for each of its hosts)
    /// is counted once, past the cap too.
    seen: HashSet<u64>,
    not_listed: usize,
}

impl Problems {
    /// Adds a problem, unless the same one (place, message and next) is already in.
    pub fn push(&mut self, e: InputError) {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        e.hash(&mut h);
        if !self.seen.insert(h.finish()) {
            return;
        }
        if self.listed.len() < MAX_LISTED {
            self.listed.push(e);
        } else {
            self.not_listed += 1;
        }
    }

    /// Counts `n` problems a rule found past those it listed (each different from any listed).
    pub fn count_unlisted(&mut self, n: usize) {
        self.not_listed += n;
    }

    /// The value of `r`, or `None` with its problem added.
    pub fn take<T>(&mut self, r: Result<T, InputError>) -> Option<T> {
        r.map_err(|e| self.push(e)).ok()
    }

    pub fn is_empty(&self) -> bool {
        self.listed.is_empty()
    }

    /// How many problems were found, listed or not.
    pub fn len(&self) -> usize {
        self.listed.len() + self.not_listed
    }

    /// The first problem found (what a caller that wants one error reports).
    pub fn first(self) -> Option<InputError> {
        self.listed.into_iter().next()
    }

    /// The listed problems in the order found, and how many more were found past [`MAX_LISTED`].
    pub fn into_parts(self) -> (Vec<InputError>, usize) {
        (self.listed, self.not_listed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(i: usize) -> InputError {
        InputError::new(format!("all.hosts[{i}]"), "is wrong", "fix it")
    }

    #[test]
    fn past_the_cap_problems_are_counted_not_listed() {
        let mut p = Problems::default();
        for i in 0..MAX_LISTED + 7 {
            p.push(e(i));
            // The same problem again (a group variable read for each host) counts once.
            p.push(e(i));
        }
        assert_eq!(p.len(), MAX_LISTED + 7);
        let (listed, more) = p.into_parts();
        assert_eq!(listed.len(), MAX_LISTED);
        assert_eq!(more, 7);
        assert_eq!(listed[0], e(0));
        assert_eq!(listed[MAX_LISTED - 1], e(MAX_LISTED - 1));
    }

    #[test]
    fn take_keeps_the_value_or_the_problem() {
        let mut p = Problems::default();
        assert_eq!(p.take(Ok::<_, InputError>(3)), Some(3));
        assert!(p.is_empty());
        assert_eq!(p.take::<u8>(Err(e(1))), None);
        assert_eq!(p.first(), Some(e(1)));
    }
}
