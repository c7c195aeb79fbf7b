//! Read-only facts about the resolver stack, gathered through the runner and from files under the
//! root prefix. Nothing here changes the system (the one exception, a transient probe link when the
//! kernel's driver list cannot be read, is reported as such).

use std::path::Path;

use serde::Serialize;

use super::files::under;
use crate::sys::systemd::SystemdVersion;
use crate::sys::{Os, Runner, argv, user};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Driver {
    Present,
    Missing,
    Unknown,
}

#[derive(Debug, Clone, Serialize)]
pub struct Facts {
    pub os: Os,
    pub is_root: bool,
    pub systemd: Option<SystemdVersion>,
    pub resolved_running: bool,
    pub networkd_running: bool,
    /// systemd is PID 1 (`/run/systemd/system` exists): boot-time units can be enabled.
    pub systemd_booted: bool,
    /// NetworkManager's DNS mode (`dnsmasq`, `systemd-resolved`, `default`, ...), if it runs.
    pub nm_dns_mode: Option<String>,
    pub resolv_conf: Option<String>,
    pub dummy: Driver,
    pub ifb: Driver,
    /// Absolute, root-owned paths of the programs a boot-time unit may call.
    pub ip_path: String,
    pub resolvectl_path: String,
    /// What detection itself did beyond reading (shown in the plan).
    pub notes: Vec<String>,
}

/// A fixed system program: the first candidate that is a root-owned file nobody else can write.
fn system_program(name: &str) -> Option<String> {
    for dir in ["/usr/sbin", "/usr/bin", "/sbin", "/bin"] {
        let p = format!("{dir}/{name}");
        if root_owned_not_writable(Path::new(&p)) {
            return Some(p);
        }
    }
    None
}

fn root_owned_not_writable(p: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match std::fs::metadata(p) {
        Ok(m) => m.is_file() && m.uid() == 0 && m.mode() & 0o022 == 0,
        Err(_) => false,
    }
}

fn driver_state(root: &Path, name: &str, release: &str) -> Driver {
    if under(root, &format!("/sys/module/{name}")).exists() {
        return Driver::Present;
    }
    let mods = under(root, &format!("/lib/modules/{release}"));
    let builtin = std::fs::read_to_string(mods.join("modules.builtin")).ok();
    let dep = std::fs::read_to_string(mods.join("modules.dep")).ok();
    if builtin.is_none() && dep.is_none() {
        return Driver::Unknown;
    }
    let needle = format!("/{name}.ko");
    let has = |t: &Option<String>| t.as_deref().is_some_and(|t| t.contains(&needle));
    if has(&builtin) || has(&dep) {
        Driver::Present
    } else {
        Driver::Missing
    }
}

pub fn detect(root: &Path, runner: &mut dyn Runner) -> Facts {
    let os = Os::this();
    let mut facts = Facts {
        os,
        is_root: user::is_root(),
        systemd: None,
        resolved_running: false,
        networkd_running: false,
        systemd_booted: under(root, "/run/systemd/system").is_dir(),
        nm_dns_mode: None,
        resolv_conf: std::fs::read_link(under(root, "/etc/resolv.conf"))
            .ok()
            .map(|p| p.display().to_string()),
        dummy: Driver::Unknown,
        ifb: Driver::Unknown,
        ip_path: system_program("ip").unwrap_or_else(|| "/usr/sbin/ip".into()),
        resolvectl_path: system_program("resolvectl")
            .unwrap_or_else(|| "/usr/bin/resolvectl".into()),
        notes: Vec::new(),
    };
    if os != Os::Linux {
        return facts;
    }
    resolver_stack(runner, &mut facts);
    link_drivers(root, runner, &mut facts);
    facts
}

/// resolved (its version, whether it runs), networkd, NetworkManager's DNS mode.
fn resolver_stack(runner: &mut dyn Runner, facts: &mut Facts) {
    let v = runner.run(&argv(&["resolvectl", "--version"]));
    if v.ok() {
        facts.systemd = SystemdVersion::parse(&v.stdout);
    }
    facts.resolved_running = runner
        .run(&argv(&["resolvectl", "--no-pager", "status"]))
        .ok();
    let n = runner.run(&argv(&["networkctl", "--no-pager", "status"]));
    facts.networkd_running = n.ok() && !n.stderr.contains("not running");
    let nm = runner.run(&argv(&[
        "busctl",
        "get-property",
        "org.freedesktop.NetworkManager",
        "/org/freedesktop/NetworkManager/DnsManager",
        "org.freedesktop.NetworkManager.DnsManager",
        "Mode",
    ]));
    if nm.ok() {
        // `s "dnsmasq"`
        facts.nm_dns_mode = nm
            .stdout
            .split('"')
            .nth(1)
            .map(str::to_string)
            .filter(|s| !s.is_empty());
    }
}

/// The dummy and ifb drivers, from the kernel's module lists; as root, where those cannot be read,
/// by a probe (which the notes report).
fn link_drivers(root: &Path, runner: &mut dyn Runner, facts: &mut Facts) {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    facts.dummy = driver_state(root, "dummy", &release);
    facts.ifb = driver_state(root, "ifb", &release);
    if !facts.is_root {
        return;
    }
    for (name, slot) in [("dummy", &mut facts.dummy), ("ifb", &mut facts.ifb)] {
        if *slot != Driver::Unknown {
            continue;
        }
        *slot = probe_driver(runner, name);
        facts.notes.push(format!(
            "kernel module list not readable: probed the {name} driver in a throw-away network namespace: {:?}",
            *slot
        ));
    }
}

/// No module list to read (minimal VM kernels): ask the kernel inside a throw-away network
/// namespace, so not even a transient link appears on the host.
fn probe_driver(runner: &mut dyn Runner, name: &str) -> Driver {
    let probe = runner.run(&argv(&[
        "unshare",
        "--net",
        "ip",
        "link",
        "add",
        "pigsty-dns-prb",
        "type",
        name,
    ]));
    if probe.ok() {
        Driver::Present
    } else if probe.stderr.contains("Unknown device type") || probe.stderr.contains("not supported")
    {
        Driver::Missing
    } else {
        Driver::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::runner::{Output, ScriptedRunner};

    fn blank() -> Facts {
        Facts {
            os: Os::Linux,
            is_root: true,
            systemd: None,
            resolved_running: false,
            networkd_running: false,
            systemd_booted: false,
            nm_dns_mode: None,
            resolv_conf: None,
            dummy: Driver::Unknown,
            ifb: Driver::Unknown,
            ip_path: String::new(),
            resolvectl_path: String::new(),
            notes: vec![],
        }
    }

    #[test]
    fn the_resolver_stack_from_resolvectl_networkctl_and_busctl() {
        let mut r = ScriptedRunner::new()
            .on("resolvectl --version", 0, "systemd 257 (257.13-1)\n+PAM")
            .on("resolvectl --no-pager status", 0, "Global\n")
            .on("busctl get-property", 0, "s \"dnsmasq\"\n");
        r.always(
            "networkctl --no-pager status",
            Output {
                code: Some(0),
                stdout: String::new(),
                stderr: "WARNING: systemd-networkd is not running".into(),
            },
        );
        let mut f = blank();
        resolver_stack(&mut r, &mut f);
        assert_eq!(f.systemd.map(|v| v.major), Some(257));
        assert!(f.resolved_running);
        assert!(!f.networkd_running, "networkctl says it is not running");
        assert_eq!(f.nm_dns_mode.as_deref(), Some("dnsmasq"));
    }

    #[test]
    fn a_driver_probe_tells_present_missing_and_unknown_apart() {
        let mut r =
            ScriptedRunner::new().on("unshare --net ip link add pigsty-dns-prb type dummy", 0, "");
        r.always(
            "unshare --net ip link add pigsty-dns-prb type ifb",
            Output::fail(2, "Error: Unknown device type."),
        );
        assert_eq!(probe_driver(&mut r, "dummy"), Driver::Present);
        assert_eq!(probe_driver(&mut r, "ifb"), Driver::Missing);
        assert_eq!(probe_driver(&mut r, "veth"), Driver::Unknown);
    }
}
