//! The unit templates in `deploy/` (compiled in, so what is installed is exactly what is documented) and
//! their rendering: `{{placeholder}}` substitution, with every value quoted for the file it lands in.

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

pub const SYSTEMD_USER: &str = include_str!("../../deploy/systemd/pigsty-dns.service");
pub const SYSTEMD_SYSTEM: &str = include_str!("../../deploy/systemd/pigsty-dns-system.service");
pub const LAUNCHD: &str = include_str!("../../deploy/launchd/io.pigsty.dns.plist");

/// Why a unit cannot be rendered: a value that would change the file's meaning, or a template bug.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenderError {
    /// A value with a control character (a newline above all) could add lines to a unit.
    Control {
        value: String,
        c: char,
    },
    Unclosed,
    /// A state dir systemd's `StateDirectory=` cannot take as one directory (the path under /var/lib).
    StateDirectory(String),
    NoValue(String),
    Unused(&'static str),
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RenderError::Control { value, c } => {
                write!(f, "{value:?} contains the control character {c:?}")
            }
            RenderError::Unclosed => f.write_str("unclosed {{ in template"),
            RenderError::StateDirectory(v) => write!(
                f,
                "/var/lib/{} cannot be systemd's StateDirectory=: it takes one relative path of letters, digits and ._+@- between slashes (no spaces, quotes, backslashes, colons, % or . and .. components)",
                crate::output::text::shown(v)
            ),
            RenderError::NoValue(key) => {
                write!(f, "template placeholder {{{{{key}}}}} has no value")
            }
            RenderError::Unused(key) => write!(f, "value {key} is not used by the template"),
        }
    }
}

impl std::error::Error for RenderError {}

/// What every unit runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitSpec {
    /// Absolute path of the pigsty-dns binary.
    pub program: PathBuf,
    pub listen: Vec<SocketAddr>,
    /// Absolute state directory.
    pub state_dir: PathBuf,
    pub zone: String,
    pub log_format: &'static str,
}

/// `serve` and its flags, without the program.
pub fn serve_args(spec: &UnitSpec) -> Vec<String> {
    let mut v = vec!["serve".to_string()];
    for a in &spec.listen {
        v.push("--listen".into());
        v.push(a.to_string());
    }
    v.push("--state-dir".into());
    v.push(spec.state_dir.display().to_string());
    v.push("--zone".into());
    v.push(spec.zone.clone());
    v.push("--log-format".into());
    v.push(spec.log_format.into());
    v
}

/// Replaces each `{{name}}` in one left-to-right pass (a value is never expanded again). An unknown or
/// unused placeholder is a bug in the template, reported rather than installed.
pub fn fill(template: &str, vars: &[(&'static str, String)]) -> Result<String, RenderError> {
    let mut out = String::with_capacity(template.len() + 256);
    let mut used = vec![false; vars.len()];
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find("}}").ok_or(RenderError::Unclosed)?;
        let key = &after[..end];
        let i = vars
            .iter()
            .position(|(k, _)| *k == key)
            .ok_or_else(|| RenderError::NoValue(key.to_string()))?;
        used[i] = true;
        out.push_str(&vars[i].1);
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    if let Some(i) = used.iter().position(|u| !u) {
        return Err(RenderError::Unused(vars[i].0));
    }
    Ok(out)
}

/// A value with a control character (a newline above all) could add lines to a unit: refused.
fn check_plain(s: &str) -> Result<(), RenderError> {
    match s.chars().find(|c| c.is_control()) {
        Some(c) => Err(RenderError::Control {
            value: s.to_string(),
            c,
        }),
        None => Ok(()),
    }
}

/// One word of a systemd command line: bare when it is plainly safe, else double-quoted with `\` and
/// `"` escaped. `%` (specifiers) and `$` (variable expansion) are doubled in either form.
pub fn systemd_word(s: &str) -> Result<String, RenderError> {
    check_plain(s)?;
    let safe = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._:,@+=-[]".contains(c));
    if safe {
        return Ok(s.to_string());
    }
    let mut q = String::from("\"");
    for c in s.chars() {
        match c {
            '\\' => q.push_str("\\\\"),
            '"' => q.push_str("\\\""),
            '%' => q.push_str("%%"),
            '$' => q.push_str("$$"),
            c => q.push(c),
        }
    }
    q.push('"');
    Ok(q)
}

/// A value for a unit file setting that is not a command line: specifiers doubled, nothing else.
fn systemd_value(s: &str) -> Result<String, RenderError> {
    check_plain(s)?;
    Ok(s.replace('%', "%%"))
}

/// `StateDirectory=` splits its value at whitespace (several directories), reads `a:b` as a symlink
/// pair, unquotes, expands `%` and continues a line ending in `\\`: only a path that none of that
/// touches is rendered, as it is, and anything else is refused rather than escaped.
fn state_directory_value(s: &str) -> Result<String, RenderError> {
    let plain = !s.is_empty()
        && s.split('/').all(|c| {
            !c.is_empty()
                && c != "."
                && c != ".."
                && c.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._+@-".contains(&b))
        });
    if plain {
        Ok(s.to_string())
    } else {
        Err(RenderError::StateDirectory(s.to_string()))
    }
}

pub fn xml_text(s: &str) -> Result<String, RenderError> {
    check_plain(s)?;
    Ok(s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;"))
}

fn exec_start(spec: &UnitSpec) -> Result<String, RenderError> {
    let mut words = vec![systemd_word(&spec.program.display().to_string())?];
    for a in serve_args(spec) {
        words.push(systemd_word(&a)?);
    }
    Ok(words.join(" "))
}

/// RestartSteps/RestartMaxDelaySec exist from systemd 254 on; older versions would warn about them.
fn backoff(systemd_version: u32) -> String {
    if systemd_version >= 254 {
        "RestartSteps=5\nRestartMaxDelaySec=30s".into()
    } else if systemd_version == 0 {
        "# (not set: the systemd version is unknown)".into()
    } else {
        format!("# (not set: this host has systemd {systemd_version})")
    }
}

pub fn systemd_user(spec: &UnitSpec, systemd_version: u32) -> Result<String, RenderError> {
    fill(
        SYSTEMD_USER,
        &[
            ("zone", systemd_value(&spec.zone)?),
            ("exec_start", exec_start(spec)?),
            ("restart_backoff", backoff(systemd_version)),
        ],
    )
}

/// `state_directory` is the state dir relative to /var/lib (systemd's StateDirectory=).
pub fn systemd_system(
    spec: &UnitSpec,
    user: &str,
    state_directory: &str,
    systemd_version: u32,
) -> Result<String, RenderError> {
    fill(
        SYSTEMD_SYSTEM,
        &[
            ("zone", systemd_value(&spec.zone)?),
            ("user", systemd_value(user)?),
            ("exec_start", exec_start(spec)?),
            ("restart_backoff", backoff(systemd_version)),
            ("state_directory", state_directory_value(state_directory)?),
        ],
    )
}

/// The LaunchAgent for the domain whose session type (`Aqua`, `Background`) is `session_type`.
pub fn launchd(spec: &UnitSpec, log_dir: &Path, session_type: &str) -> Result<String, RenderError> {
    let mut args = vec![format!(
        "\t\t<string>{}</string>",
        xml_text(&spec.program.display().to_string())?
    )];
    for a in serve_args(spec) {
        args.push(format!("\t\t<string>{}</string>", xml_text(&a)?));
    }
    fill(
        LAUNCHD,
        &[
            ("program_arguments", args.join("\n")),
            ("log_dir", xml_text(&log_dir.display().to_string())?),
            ("session_type", xml_text(session_type)?),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_is_one_pass_and_strict() {
        assert_eq!(
            fill("a {{x}} b", &[("x", "{{x}}".into())]).unwrap(),
            "a {{x}} b"
        );
        assert!(fill("{{y}}", &[("x", "1".into())]).is_err());
        assert!(fill("{{x}}", &[("x", "1".into()), ("z", "2".into())]).is_err());
        assert!(fill("{{x", &[]).is_err());
    }

    #[test]
    fn systemd_words_are_quoted_and_escaped() {
        assert_eq!(
            systemd_word("/usr/bin/pigsty-dns").unwrap(),
            "/usr/bin/pigsty-dns"
        );
        assert_eq!(systemd_word("[::1]:5354").unwrap(), "[::1]:5354");
        assert_eq!(
            systemd_word("/home/a b/100%$x\"\\").unwrap(),
            "\"/home/a b/100%%$$x\\\"\\\\\""
        );
        assert_eq!(systemd_word("").unwrap(), "\"\"");
        assert!(systemd_word("/a\nExecStartPre=/bin/sh").is_err());
    }

    #[test]
    fn xml_text_escapes() {
        assert_eq!(xml_text("a&<>\"'").unwrap(), "a&amp;&lt;&gt;&quot;&apos;");
        assert!(xml_text("a\u{1}").is_err());
    }

    #[test]
    fn templates_have_no_placeholder_left() {
        let spec = UnitSpec {
            program: "/usr/local/bin/pigsty-dns".into(),
            listen: vec!["127.0.0.1:5354".parse().unwrap()],
            state_dir: "/var/lib/pigsty-dns".into(),
            zone: "pigsty.test".into(),
            log_format: "json",
        };
        for text in [
            systemd_user(&spec, 252).unwrap(),
            systemd_system(&spec, "nobody", "pigsty-dns", 257).unwrap(),
            launchd(&spec, Path::new("/Users/a/Library/Logs"), "Aqua").unwrap(),
        ] {
            assert!(!text.contains("{{"), "{text}");
        }
        assert!(
            !systemd_user(&spec, 253)
                .unwrap()
                .contains("\nRestartSteps=")
        );
        assert!(
            systemd_user(&spec, 254)
                .unwrap()
                .contains("RestartSteps=5\nRestartMaxDelaySec=30s\n")
        );
    }
}
