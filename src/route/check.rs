//! One verification check's result, one `route status` item (a verdict and what to do next), and the
//! polling every check that waits for a resolver shares.

use std::time::{Duration, Instant};

use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub check: String,
    pub ok: bool,
    pub detail: String,
}

pub fn check(name: &str, ok: bool, detail: impl Into<String>) -> Check {
    Check {
        check: name.into(),
        ok,
        detail: detail.into(),
    }
}

/// One `route status` verdict, and what to do when it failed.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub item: String,
    pub ok: bool,
    pub verdict: String,
    pub next: String,
}

pub fn item(i: &str, ok: bool, verdict: impl Into<String>, next: impl Into<String>) -> Item {
    Item {
        item: i.into(),
        ok,
        verdict: verdict.into(),
        next: next.into(),
    }
}

/// Polls `f` until it returns Ok or `wait` runs out (at least one try).
pub fn poll<T>(wait: Duration, mut f: impl FnMut() -> Result<T, String>) -> Result<T, String> {
    let end = Instant::now() + wait;
    loop {
        match f() {
            Ok(v) => return Ok(v),
            Err(e) if Instant::now() >= end => return Err(e),
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    }
}

/// A polled check: `label` passes with `f`'s detail, or fails with its last error.
pub fn polled(label: &str, wait: Duration, f: impl FnMut() -> Result<String, String>) -> Check {
    match poll(wait, f) {
        Ok(d) => check(label, true, d),
        Err(e) => check(label, false, e),
    }
}
