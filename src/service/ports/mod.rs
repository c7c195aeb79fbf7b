//! Which listen addresses a service can use. The mDNS port (the default of earlier releases) is the
//! trap: on macOS mDNSResponder holds it (UDP, all addresses) and a LaunchAgent cannot bind beside it;
//! on Linux a server that starts before Avahi or resolved's mDNS locks them out, and one that starts
//! after them crash-loops. Detection is read-only. Also: spotting a unit still on that old default.

use std::net::SocketAddr;
use std::path::Path;

use crate::defaults::{LISTEN, MACOS_MDNS_WHY, MDNS_PORT, with_suggested_port};
use crate::error::{AppError, Class};
use crate::sys::{Os, Runner};

fn suggest(addr: &SocketAddr) -> SocketAddr {
    with_suggested_port(*addr)
}

/// Refuses what can never work as a service; `mdns` lists the mDNS stacks found (Linux).
pub fn check_listen(os: Os, listen: &[SocketAddr], mdns: &[String]) -> Result<(), AppError> {
    if listen.is_empty() {
        return Err(AppError::new(
            Class::Usage,
            "no listen address",
            format!("give --listen {}", suggest(&LISTEN)),
        ));
    }
    for a in listen {
        let loopback = match a.ip() {
            std::net::IpAddr::V4(v) => v.is_loopback(),
            std::net::IpAddr::V6(v) => v.is_loopback(),
        };
        if !loopback {
            return Err(AppError::new(
                Class::Usage,
                format!("{a} is not a loopback address; the server is for this machine only"),
                format!(
                    "give --listen {}",
                    SocketAddr::new(LISTEN.ip(), a.port().max(1))
                ),
            ));
        }
        let why = match a.port() {
            0 => Some("port 0 picks a new port at every start, so no resolver route could find it"),
            53 => Some("port 53 is privileged (and mDNSResponder's DNS proxy on macOS)"),
            5355 => Some("port 5355 is LLMNR, which systemd-resolved listens on"),
            _ => None,
        };
        if let Some(why) = why {
            return Err(AppError::new(
                Class::Usage,
                format!("cannot install a service on {a}: {why}"),
                format!("give --listen {}", suggest(a)),
            ));
        }
        if a.port() != MDNS_PORT {
            continue;
        }
        if os == Os::Macos {
            return Err(AppError::new(
                Class::Usage,
                format!("cannot install a service on {a}: {MACOS_MDNS_WHY}"),
                format!(
                    "give --listen {} (and use that port for the route)",
                    suggest(a)
                ),
            ));
        }
        if !mdns.is_empty() {
            return Err(AppError::new(
                Class::Conflict,
                format!(
                    "cannot install a service on {a}: {MDNS_PORT} is the mDNS port and {} — a server that starts first locks it out, one that starts after it crash-loops",
                    mdns.join("; ")
                ),
                format!(
                    "give --listen {} (and use that port for the route)",
                    suggest(a)
                ),
            ));
        }
    }
    Ok(())
}

/// The `--listen` addresses of an installed unit: the word after each `--listen` in a systemd
/// `ExecStart=` line or in a plist's `<string>` list.
pub fn listen_in_unit(text: &str) -> Vec<SocketAddr> {
    let words: Vec<&str> = text
        .lines()
        .flat_map(|l| {
            let l = l.trim();
            match l
                .strip_prefix("<string>")
                .and_then(|w| w.strip_suffix("</string>"))
            {
                Some(w) => vec![w],
                None => l.split_whitespace().collect(),
            }
        })
        .collect();
    words
        .windows(2)
        .filter(|w| w[0] == "--listen")
        .filter_map(|w| w[1].trim_matches('"').parse().ok())
        .collect()
}

/// A unit installed by a release whose default was the mDNS port: what it listens on, and the commands
/// that move it (and a route pointing at it) to the suggested port.
pub fn old_default_note(listen: &[SocketAddr], exe: &str) -> Option<String> {
    let old = listen.iter().find(|a| a.port() == MDNS_PORT)?;
    let new = suggest(old);
    Some(format!(
        "the unit listens on {old}, the mDNS port (the default before 5354; on macOS it never works). Move it: \
         {exe} service install --listen {new} (with the flags you installed it with), then, if a route is installed: \
         sudo {exe} route uninstall --yes && sudo {exe} route install --server {new} --yes"
    ))
}

const ENABLED: &[&str] = &[
    "enabled",
    "enabled-runtime",
    "static",
    "indirect",
    "alias",
    "linked",
];

fn unit_enabled(runner: &mut dyn Runner, unit: &str) -> bool {
    let argv = ["systemctl", "is-enabled", unit].map(String::from);
    ENABLED.contains(&runner.run(&argv).stdout.trim())
}

/// Every mDNS stack that would want the mDNS port on this Linux host, each as a short phrase. `root`
/// prefixes every file read (`/` on a real host).
pub fn detect_mdns(root: &Path, runner: &mut dyn Runner) -> Vec<String> {
    let mut found = Vec::new();
    for unit in ["avahi-daemon.service", "avahi-daemon.socket"] {
        if unit_enabled(runner, unit) {
            found.push(format!("{unit} is enabled"));
            break;
        }
    }
    if found.is_empty() && root.join("run/avahi-daemon/pid").exists() {
        found.push("avahi-daemon is running".into());
    }
    let resolved_running = root.join("run/systemd/resolve").is_dir();
    if (resolved_running || unit_enabled(runner, "systemd-resolved.service"))
        && let Some(why) = resolved_mdns(root, runner, resolved_running)
    {
        found.push(why);
    }
    if let Some(who) = udp_bound(root, MDNS_PORT) {
        found.push(format!("UDP port {MDNS_PORT} is already bound ({who})"));
    }
    found
}

/// resolved's mDNS: the running daemon's own view when it answers, else its configuration.
fn resolved_mdns(root: &Path, runner: &mut dyn Runner, running: bool) -> Option<String> {
    if running {
        let argv = ["resolvectl", "status"].map(String::from);
        let o = runner.run(&argv);
        if o.ok() {
            // The first Protocols: line is the Global section's: "+mDNS", "mDNS=resolve" or "-mDNS".
            if let Some(line) = o
                .stdout
                .lines()
                .find(|l| l.trim_start().starts_with("Protocols:"))
            {
                return (!line.contains("-mDNS"))
                    .then(|| "systemd-resolved has mDNS enabled (resolvectl status)".to_string());
            }
        }
    }
    match multicast_dns_setting(root) {
        Some(v) if is_off(&v) => None,
        Some(v) => Some(format!("systemd-resolved has MulticastDNS={v}")),
        None => Some(
            "systemd-resolved is enabled and its MulticastDNS= default could not be read (upstream default: yes)"
                .into(),
        ),
    }
}

fn is_off(v: &str) -> bool {
    matches!(
        v.to_ascii_lowercase().as_str(),
        "no" | "false" | "0" | "off"
    )
}

/// The effective `MulticastDNS=` from resolved.conf and its drop-ins (the last one wins). With no
/// setting, the shipped file's commented default line (`#MulticastDNS=no`) tells the compiled-in
/// default.
pub fn multicast_dns_setting(root: &Path) -> Option<String> {
    use crate::sys::resolved_conf;
    let texts = resolved_conf::texts(root);
    if let Some(v) = resolved_conf::assignments(&texts, "MulticastDNS").last() {
        return Some(v.to_string());
    }
    let main = std::fs::read_to_string(root.join(resolved_conf::MAIN)).ok()?;
    let commented: Vec<String> = main
        .lines()
        .map(|l| {
            let l = l.trim();
            l.strip_prefix('#').map_or(l, str::trim_start).to_string()
        })
        .collect();
    resolved_conf::assignments(&[commented.join("\n")], "MulticastDNS")
        .last()
        .map(|v| v.to_string())
}

/// Who holds a UDP port, from /proc/net/udp{,6}: "uid N".
fn udp_bound(root: &Path, port: u16) -> Option<String> {
    for table in ["proc/net/udp", "proc/net/udp6"] {
        let Ok(text) = std::fs::read_to_string(root.join(table)) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(uid)) = (f.get(1), f.get(7)) else {
                continue;
            };
            let p = local
                .rsplit(':')
                .next()
                .and_then(|h| u16::from_str_radix(h, 16).ok());
            if p == Some(port) {
                return Some(format!("uid {uid}"));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests;
