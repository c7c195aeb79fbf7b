//! The rendered units: golden files (UPDATE_GOLDEN=1 rewrites them), the exact hardening list of each
//! variant, the plist parsed as XML, and — with PIGSTY_DNS_E2E=1 — `systemd-analyze verify` on the
//! systemd units (Debian's `systemd` package; then a missing tool is a failure, not a skip).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::util::e2e;
use pigsty_dns::service::render::{self, UnitSpec};

fn spec(program: &str, state_dir: &str, log_format: &'static str) -> UnitSpec {
    UnitSpec {
        program: program.into(),
        listen: vec![
            "127.0.0.1:5354".parse().unwrap(),
            "[::1]:5354".parse().unwrap(),
        ],
        state_dir: state_dir.into(),
        zone: "pigsty.test".into(),
        log_format,
    }
}

fn user_unit(version: u32) -> String {
    render::systemd_user(
        &spec(
            "/usr/local/bin/pigsty-dns",
            "/home/alice/.local/state/pigsty-dns",
            "json",
        ),
        version,
    )
    .unwrap()
}

fn system_unit(version: u32) -> String {
    render::systemd_system(
        &spec("/usr/local/bin/pigsty-dns", "/var/lib/pigsty-dns", "json"),
        "pigsty-dns",
        "pigsty-dns",
        version,
    )
    .unwrap()
}

fn plist() -> String {
    plist_for("Aqua")
}

fn plist_for(session_type: &str) -> String {
    render::launchd(
        &spec(
            "/usr/local/bin/pigsty-dns",
            "/Users/alice/Library/Application Support/pigsty-dns",
            "text",
        ),
        Path::new("/Users/alice/Library/Logs"),
        session_type,
    )
    .unwrap()
}

fn golden(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1") {
        std::fs::write(&path, actual).unwrap();
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()));
    assert_eq!(actual, want, "{name} differs from its golden file");
}

#[test]
fn golden_units() {
    golden("pigsty-dns.user-252.service", &user_unit(252));
    golden("pigsty-dns.user-257.service", &user_unit(257));
    golden("pigsty-dns.system-252.service", &system_unit(252));
    golden("io.pigsty.dns.plist", &plist());
}

/// `Key=value` lines of [Service] whose key is in `keys`.
fn service_keys(unit: &str) -> BTreeSet<String> {
    let mut in_service = false;
    let mut out = BTreeSet::new();
    for line in unit.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            in_service = l == "[Service]";
        } else if in_service && !l.starts_with('#') && l.contains('=') {
            out.insert(l.to_string());
        }
    }
    out
}

const HARDENING: &[&str] = &[
    "NoNewPrivileges",
    "RestrictAddressFamilies",
    "SystemCallFilter",
    "MemoryMax",
    "ProtectSystem",
    "ProtectHome",
    "PrivateTmp",
    "PrivateUsers",
    "CapabilityBoundingSet",
    "StateDirectory",
    "StateDirectoryMode",
    "DynamicUser",
    "AmbientCapabilities",
];

fn hardening(unit: &str) -> Vec<String> {
    service_keys(unit)
        .into_iter()
        .filter(|l| HARDENING.iter().any(|k| l.starts_with(&format!("{k}="))))
        .collect()
}

#[test]
fn the_user_unit_carries_only_hardening_a_user_manager_applies() {
    // systemd 252 ignores ProtectSystem/ProtectHome/PrivateTmp in user units without PrivateUsers=yes,
    // and an empty CapabilityBoundingSet= makes a user unit fail: none of those may be here.
    assert_eq!(
        hardening(&user_unit(252)),
        [
            "MemoryMax=256M",
            "NoNewPrivileges=yes",
            "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
            "SystemCallFilter=@system-service",
        ]
    );
}

#[test]
fn the_system_unit_has_the_full_list() {
    assert_eq!(
        hardening(&system_unit(252)),
        [
            "CapabilityBoundingSet=",
            "MemoryMax=256M",
            "NoNewPrivileges=yes",
            "PrivateTmp=yes",
            "ProtectHome=yes",
            "ProtectSystem=strict",
            "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
            "StateDirectory=pigsty-dns",
            "StateDirectoryMode=0700",
            "SystemCallFilter=@system-service",
        ]
    );
    let keys = service_keys(&system_unit(252));
    assert!(keys.contains("User=pigsty-dns"));
    assert!(keys.contains("Type=notify"));
}

#[test]
fn restart_policy_and_backoff_by_systemd_version() {
    for unit in [user_unit(252), system_unit(252)] {
        let k = service_keys(&unit);
        assert!(
            k.contains("Restart=on-failure") && k.contains("RestartSec=2s"),
            "{unit}"
        );
        assert!(!k.iter().any(|l| l.starts_with("RestartSteps=")), "{unit}");
        let exec = k.iter().find(|l| l.starts_with("ExecStart=")).unwrap();
        assert!(exec.starts_with("ExecStart=/usr/local/bin/pigsty-dns serve --listen 127.0.0.1:5354 --listen [::1]:5354"), "{exec}");
    }
    let k = service_keys(&user_unit(254));
    assert!(k.contains("RestartSteps=5") && k.contains("RestartMaxDelaySec=30s"));
}

#[test]
fn the_plist_parses_and_has_the_keys() {
    let text = plist();
    let doc = roxmltree::Document::parse_with_options(
        &text,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .unwrap();
    let dict = doc
        .root_element()
        .children()
        .find(|n| n.has_tag_name("dict"))
        .expect("a top-level dict");
    // key → the element after it.
    let elems: Vec<_> = dict.children().filter(|n| n.is_element()).collect();
    let mut map = std::collections::BTreeMap::new();
    for pair in elems.chunks(2) {
        assert!(pair[0].has_tag_name("key"), "keys and values alternate");
        map.insert(pair[0].text().unwrap().to_string(), pair[1]);
    }
    let string = |k: &str| map[k].text().unwrap().to_string();
    assert_eq!(string("Label"), "io.pigsty.dns");
    let args: Vec<String> = map["ProgramArguments"]
        .children()
        .filter(|n| n.has_tag_name("string"))
        .map(|n| n.text().unwrap().to_string())
        .collect();
    assert_eq!(
        args[0], "/usr/local/bin/pigsty-dns",
        "absolute program path"
    );
    assert!(Path::new(&args[0]).is_absolute());
    assert_eq!(
        &args[1..],
        [
            "serve",
            "--listen",
            "127.0.0.1:5354",
            "--listen",
            "[::1]:5354",
            "--state-dir",
            "/Users/alice/Library/Application Support/pigsty-dns",
            "--zone",
            "pigsty.test",
            "--log-format",
            "text"
        ]
    );
    assert!(map["RunAtLoad"].has_tag_name("true"));
    let keep = map["KeepAlive"];
    assert!(keep.has_tag_name("dict"));
    assert_eq!(
        keep.children()
            .filter(|n| n.is_element())
            .map(|n| n.tag_name().name())
            .collect::<Vec<_>>(),
        ["key", "false"]
    );
    assert_eq!(string("ThrottleInterval"), "10");
    assert!(map["ThrottleInterval"].has_tag_name("integer"));
    // One session type, the domain's (gui/UID: Aqua); not throttled as a Background process.
    assert!(map["LimitLoadToSessionType"].has_tag_name("string"));
    assert_eq!(string("LimitLoadToSessionType"), "Aqua");
    assert_eq!(string("ProcessType"), "Standard");
    assert!(
        !text.contains("<string>Background</string>\n</dict>")
            && !text.contains("<key>ProcessType</key>\n\t<string>Background"),
        "{text}"
    );
    assert_eq!(
        string("StandardOutPath"),
        "/Users/alice/Library/Logs/pigsty-dns.out.log"
    );
    assert_eq!(
        string("StandardErrorPath"),
        "/Users/alice/Library/Logs/pigsty-dns.err.log"
    );
}

/// The plist for `user/UID` (an SSH login) differs from the golden one in its session type only.
#[test]
fn the_background_plist_names_only_background() {
    let bg = plist_for("Background");
    assert_eq!(
        bg,
        plist().replace("<string>Aqua</string>", "<string>Background</string>")
    );
    assert_eq!(bg.matches("<string>Background</string>").count(), 1, "{bg}");
    assert!(!bg.contains("<string>Aqua</string>"), "{bg}");
}

#[test]
fn plist_values_are_escaped() {
    let text = render::launchd(
        &spec("/opt/a&b/<pigsty-dns>", "/s", "text"),
        Path::new("/l"),
        "Aqua",
    )
    .unwrap();
    let doc = roxmltree::Document::parse_with_options(
        &text,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(
        doc.descendants()
            .any(|n| n.text() == Some("/opt/a&b/<pigsty-dns>"))
    );
}

/// The host's systemd version, so only keys it knows are rendered.
fn host_version() -> u32 {
    let out = std::process::Command::new("systemctl")
        .arg("--version")
        .output();
    out.ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| {
            s.lines()
                .next()?
                .strip_prefix("systemd ")?
                .split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(252)
}

fn verify(unit_text: &str, user: bool) {
    verify_named(unit_text, "pigsty-dns.service", user)
}

/// `systemd-analyze verify` of `unit_text` saved as `name`: exit 0 and no line about that file.
pub fn verify_named(unit_text: &str, name: &str, user: bool) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, unit_text).unwrap();
    let runtime = dir.path().join("runtime");
    std::fs::create_dir(&runtime).unwrap();
    let mut cmd = std::process::Command::new("systemd-analyze");
    if user {
        // The user manager's paths need a runtime dir; none exists where systemd is not running.
        cmd.arg("--user").env("XDG_RUNTIME_DIR", &runtime);
    }
    let out = cmd.arg("verify").arg(&path).output().unwrap_or_else(|e| {
        panic!("PIGSTY_DNS_E2E=1 needs systemd-analyze (Debian: systemd): {e}")
    });
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // verify exits 0 on mere warnings (unknown keys, bad values): any line about our file fails.
    assert!(out.status.success(), "{text}");
    assert!(
        !text.contains(name),
        "systemd-analyze verify complained:\n{text}\n{unit_text}"
    );
}

#[test]
fn systemd_analyze_verifies_the_rendered_units() {
    if !e2e() {
        eprintln!("skipped: set PIGSTY_DNS_E2E=1 to run systemd-analyze verify");
        return;
    }
    let v = host_version();
    let bin = env!("CARGO_BIN_EXE_pigsty-dns");
    let s = spec(bin, "/home/alice/.local/state/pigsty-dns", "json");
    verify(&render::systemd_user(&s, v).unwrap(), true);
    // "daemon": an existing account that systemd does not warn about (it does for "nobody").
    let s = spec(bin, "/var/lib/pigsty-dns", "json");
    verify(
        &render::systemd_system(&s, "daemon", "pigsty-dns", v).unwrap(),
        false,
    );
    // A path with a space and a % survives systemd's quoting and specifier expansion.
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("my bin 100%");
    std::fs::create_dir(&odd).unwrap();
    let prog = odd.join("pigsty-dns");
    std::fs::copy(bin, &prog).unwrap();
    let s = spec(prog.to_str().unwrap(), "/home/a b/state", "json");
    verify(&render::systemd_user(&s, v).unwrap(), true);
}

#[test]
fn systemd_analyze_catches_a_broken_unit() {
    // The check above must be able to fail: a unit with a relative ExecStart is rejected.
    if !e2e() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pigsty-dns.service");
    std::fs::write(&path, user_unit(252).replace("ExecStart=/", "ExecStart=")).unwrap();
    let runtime = dir.path().join("runtime");
    std::fs::create_dir(&runtime).unwrap();
    let out = std::process::Command::new("systemd-analyze")
        .args(["--user", "verify"])
        .arg(&path)
        .env("XDG_RUNTIME_DIR", &runtime)
        .output()
        .expect("systemd-analyze (Debian: systemd)");
    assert!(!out.status.success());
}
