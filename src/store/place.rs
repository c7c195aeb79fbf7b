//! Where the state directory is when no `--state-dir` is given: one rule for `serve` and `load`, and
//! for the commands that look for a running daemon's status file (route, service). Kept pure over an
//! environment lookup, so the rule is tested without touching the process's environment.

use std::path::{Path, PathBuf};

use crate::defaults::ENV_STATE_DIR;
use crate::sys::Os;

/// The per-user state dir below a home directory on macOS.
pub const MACOS_BELOW_HOME: &str = "Library/Application Support/pigsty-dns";
/// Below a home directory elsewhere, when `$XDG_STATE_HOME` is not set.
pub const XDG_BELOW_HOME: &str = ".local/state/pigsty-dns";
/// The system unit's state dir (Linux).
pub const SYSTEM_DIR: &str = "/var/lib/pigsty-dns";

/// A lookup of a non-empty environment variable as a path.
pub type Env<'a> = &'a dyn Fn(&str) -> Option<PathBuf>;
/// A user's home directory by name.
pub type HomeOf<'a> = &'a dyn Fn(&str) -> Option<PathBuf>;

/// This process's environment (an empty value counts as unset).
pub fn process_env(key: &str) -> Option<PathBuf> {
    std::env::var_os(key)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The platform state dir of a user with `home` and `$XDG_STATE_HOME` `xdg` (macOS has no XDG).
pub fn platform_dir(os: Os, home: Option<&Path>, xdg: Option<&Path>) -> Option<PathBuf> {
    match os {
        Os::Macos => home.map(|h| h.join(MACOS_BELOW_HOME)),
        _ => xdg
            .map(|x| x.join("pigsty-dns"))
            .or_else(|| home.map(|h| h.join(XDG_BELOW_HOME))),
    }
}

/// The state dir this process's daemon uses when not told: `$PIGSTY_DNS_STATE_DIR`, else the
/// platform dir of `$HOME` and `$XDG_STATE_HOME`.
pub fn default_dir(os: Os, env: Env<'_>) -> Option<PathBuf> {
    env(ENV_STATE_DIR)
        .or_else(|| platform_dir(os, env("HOME").as_deref(), env("XDG_STATE_HOME").as_deref()))
}

/// Where a daemon may have written its status file, most likely first: `$PIGSTY_DNS_STATE_DIR`, the
/// platform dir of the user who ran sudo (root's own home holds no daemon; sudo does not pass their
/// `$XDG_STATE_HOME`), this process's own platform dir (and `$HOME`'s, should `$XDG_STATE_HOME` have
/// changed since the daemon started), and on Linux the system unit's dir.
pub fn candidates(os: Os, env: Env<'_>, home_of: HomeOf<'_>) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = env(ENV_STATE_DIR).into_iter().collect();
    let sudo_home = env("SUDO_USER").and_then(|u| home_of(&u.to_string_lossy()));
    v.extend(platform_dir(os, sudo_home.as_deref(), None));
    let home = env("HOME");
    v.extend(platform_dir(
        os,
        home.as_deref(),
        env("XDG_STATE_HOME").as_deref(),
    ));
    v.extend(platform_dir(os, home.as_deref(), None));
    if os == Os::Linux {
        v.push(PathBuf::from(SYSTEM_DIR));
    }
    let mut seen = std::collections::HashSet::new();
    v.retain(|d| seen.insert(d.clone()));
    v
}

/// [`candidates`] of this process.
pub fn candidates_here(os: Os) -> Vec<PathBuf> {
    candidates(os, &process_env, &|u| crate::sys::user::home_of(u))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<PathBuf> {
        let m: HashMap<String, PathBuf> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), PathBuf::from(v)))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn serve_and_route_agree_where_xdg_state_home_is_set() {
        // Before: serve used $XDG_STATE_HOME/pigsty-dns, route and status looked only in
        // ~/.local/state/pigsty-dns, so a running daemon's status file was never found.
        let e = env(&[("HOME", "/home/u"), ("XDG_STATE_HOME", "/home/u/.xdg")]);
        let serve = default_dir(Os::Linux, &e).unwrap();
        assert_eq!(serve, PathBuf::from("/home/u/.xdg/pigsty-dns"));
        let looked = candidates(Os::Linux, &e, &|_| None);
        assert_eq!(looked[0], serve);
        assert_eq!(
            looked[1..],
            ["/home/u/.local/state/pigsty-dns", SYSTEM_DIR].map(PathBuf::from)
        );
    }

    #[test]
    fn the_order_is_env_then_sudo_user_then_own_then_system() {
        let e = env(&[
            ("HOME", "/root"),
            ("SUDO_USER", "u"),
            (ENV_STATE_DIR, "/srv/dns"),
        ]);
        let home_of = |u: &str| (u == "u").then(|| PathBuf::from("/home/u"));
        assert_eq!(
            candidates(Os::Linux, &e, &home_of),
            [
                "/srv/dns",
                "/home/u/.local/state/pigsty-dns",
                "/root/.local/state/pigsty-dns",
                SYSTEM_DIR
            ]
            .map(PathBuf::from)
        );
        let e = env(&[("HOME", "/var/root"), ("SUDO_USER", "u")]);
        assert_eq!(
            candidates(Os::Macos, &e, &home_of),
            [
                "/home/u/Library/Application Support/pigsty-dns",
                "/var/root/Library/Application Support/pigsty-dns"
            ]
            .map(PathBuf::from)
        );
        assert_eq!(default_dir(Os::Linux, &env(&[])), None);
    }
}
