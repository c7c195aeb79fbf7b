//! The glibc NSS lookups (`getent`) of the Linux families: what every program's getaddrinfo sees.

use std::net::Ipv4Addr;
use std::time::Duration;

use super::super::check::{Check, check, poll, polled};
use super::super::context::Ctx;
use crate::sys::{Runner, argv};

pub fn forward(ctx: &mut Ctx<'_>, name: &str, want: Ipv4Addr, wait: Duration) -> Check {
    let want_s = want.to_string();
    polled("getent ahostsv4", wait, || {
        let out = ctx.runner.run(&argv(&["getent", "ahostsv4", name]));
        match out.stdout.split_whitespace().next() {
            Some(a) if out.ok() && a == want_s => Ok(format!("getent ahostsv4 {name}: {a}")),
            _ => Err(format!(
                "getent ahostsv4 {name}: {} (want {want})",
                out.summary()
            )),
        }
    })
}

/// The name a reverse lookup printed, compared without case and trailing dot.
pub fn same_name(got: &str, want: &str) -> bool {
    got.trim_end_matches('.').eq_ignore_ascii_case(want)
}

/// A polled reverse lookup: `words` run until `pick` finds `want` in its output.
pub fn reverse_by(
    ctx: &mut Ctx<'_>,
    label: &str,
    words: &[&str],
    pick: fn(&str) -> Option<String>,
    want: &str,
    wait: Duration,
) -> Check {
    let shown = words.join(" ");
    let r = poll(wait, || {
        let out = ctx.runner.run(&argv(words));
        match pick(&out.stdout) {
            Some(n) if out.ok() && same_name(&n, want) => Ok(format!("{shown}: {n}")),
            _ => Err(format!("{shown}: {} (want {want})", out.summary())),
        }
    });
    match r {
        Ok(d) => check(label, true, d),
        Err(e) => check(label, false, e),
    }
}

/// `getent hosts ADDR`: "10.10.10.10     meta.pigsty.test", the canonical name first, aliases after.
pub fn reverse(ctx: &mut Ctx<'_>, addr: Ipv4Addr, want: &str, wait: Duration) -> Check {
    let a = addr.to_string();
    reverse_by(
        ctx,
        "getent hosts (reverse)",
        &["getent", "hosts", &a],
        |out| out.split_whitespace().nth(1).map(str::to_string),
        want,
        wait,
    )
}

pub fn unrelated(runner: &mut dyn Runner, name: &str) {
    runner.run(&argv(&["getent", "ahostsv4", name]));
}

pub fn native_a(runner: &mut dyn Runner, name: &str) -> Option<Ipv4Addr> {
    let out = runner.run(&argv(&["getent", "ahostsv4", name]));
    if !out.ok() {
        return None;
    }
    out.stdout.split_ascii_whitespace().next()?.parse().ok()
}
