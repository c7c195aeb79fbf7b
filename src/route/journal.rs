//! The change journal: what a route install wrote, so uninstall removes exactly that. It lives in a
//! root-owned directory of its own (not the user's state dir, not a service's state dir).

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::adapter::{AdapterName, LinkKind, Step, Variant};
use super::files;
use super::lifecycle;
use crate::output::to_json;
use crate::sys::{Os, fs as sys_fs};

/// Version of the journal file format (its own, not the reports' `output::FORMAT`).
pub const FORMAT: u32 = 1;
pub const FILE: &str = "journal.json";

pub fn default_dir(os: Os) -> &'static str {
    match os {
        Os::Macos => "/Library/Application Support/pigsty-dns-route",
        _ => "/var/lib/pigsty-dns-route",
    }
}

/// Where an install is: written `applying` before the first change, so a crash half-way leaves
/// something uninstall can read, and `installed` once verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Applying,
    Installed,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Applying => "applying",
            State::Installed => "installed",
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Compares with the word the file holds.
impl PartialEq<&str> for State {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalFile {
    /// The path as written (root prefix included).
    pub path: String,
    pub existed_before: bool,
    pub sha256: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Journal {
    pub format: u32,
    pub state: State,
    pub adapter: AdapterName,
    /// The first routed zone (where a single label goes): all a journal of a release that routed one
    /// zone has, and kept so such a release reads this one too.
    pub zone: String,
    /// Every routed forward zone, `zone` first; absent in journals written before several zones were
    /// routed (then `zone` alone): read through [`Journal::zones`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zones: Vec<String>,
    /// The reverse zone routed beside `zone` (from the live generation's /24 at install time). Absent
    /// in journals written before reverse zones were routed, and when there was no generation yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_zone: Option<String>,
    pub server: String,
    /// resolved-link only, like the three after it.
    pub variant: Option<Variant>,
    pub link: Option<String>,
    pub link_address: Option<String>,
    pub link_kind: Option<LinkKind>,
    pub root: String,
    pub files: Vec<JournalFile>,
    /// Directories this install created (removed again if empty).
    pub created_dirs: Vec<String>,
    pub pre_undo: Vec<Step>,
    pub undo: Vec<Step>,
    pub written_at: String,
}

impl Journal {
    /// The forward zones this route carries: `zones`, or `zone` alone in a journal from before.
    pub fn zones(&self) -> Vec<String> {
        if self.zones.is_empty() {
            vec![self.zone.clone()]
        } else {
            self.zones.clone()
        }
    }
}

pub fn path(dir: &Path) -> PathBuf {
    dir.join(FILE)
}

pub fn read(dir: &Path) -> Result<Option<Journal>, String> {
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let p = path(dir);
    // Opened once, never through a symlink, never waiting on a FIFO; every check below is on this
    // open file, so what is checked is what is read (issue 33).
    let f = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&p)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(format!(
                "{} is a symlink: not trusted (uninstall removes what it lists)",
                p.display()
            ));
        }
        Err(e) => return Err(format!("cannot read {}: {e}", p.display())),
    };
    let m = f
        .metadata()
        .map_err(|e| format!("cannot read {}: {e}", p.display()))?;
    if !m.is_file() {
        return Err(format!(
            "{} is not a regular file: not trusted",
            p.display()
        ));
    }
    // Uninstall deletes what the journal lists: one that anybody could have written is never read
    // (issue 26, row 8) — nor one in a directory anybody could have put it in.
    if let Some(d) = lifecycle::journal_meta(m.uid(), m.mode(), crate::sys::user::euid()) {
        return Err(lifecycle::journal_message(&p, &d));
    }
    let dm = std::fs::metadata(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    if let Some(d) = lifecycle::journal_meta(dm.uid(), dm.mode(), crate::sys::user::euid()) {
        return Err(format!(
            "the journal's directory: {}",
            lifecycle::journal_message(dir, &d)
        ));
    }
    // A journal is a few KiB; a larger file is not one.
    const MAX_JOURNAL_BYTES: u64 = 1024 * 1024;
    let mut bytes = Vec::new();
    f.take(MAX_JOURNAL_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {}: {e}", p.display()))?;
    if bytes.len() as u64 > MAX_JOURNAL_BYTES {
        return Err(format!(
            "{} is above {MAX_JOURNAL_BYTES} bytes: not a journal",
            p.display()
        ));
    }
    let j: Journal = serde_json::from_slice(&bytes)
        .map_err(|e| lifecycle::journal_message(&p, &lifecycle::journal_parse_error(&e)))?;
    if j.format != FORMAT {
        return Err(format!(
            "{} has journal format {}, this pigsty-dns reads format {FORMAT}",
            p.display(),
            j.format
        ));
    }
    Ok(Some(j))
}

/// What is wrong with the journal file itself (owner, mode, content), if anything: for the status
/// item's `next:` line.
pub fn damage(p: &Path) -> Option<lifecycle::JournalDamage> {
    if let Some(d) = meta_damage(p) {
        return Some(d);
    }
    // Never a symlink's target nor a FIFO (which would block): read() already refused those.
    if !std::fs::symlink_metadata(p).ok()?.is_file() {
        return None;
    }
    let bytes = std::fs::read(p).ok()?;
    serde_json::from_slice::<Journal>(&bytes)
        .err()
        .map(|e| lifecycle::journal_parse_error(&e))
}

/// The journal's owner or mode makes it untrustworthy.
fn meta_damage(p: &Path) -> Option<lifecycle::JournalDamage> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(p).ok()?;
    lifecycle::journal_meta(m.uid(), m.mode(), crate::sys::user::euid())
}

pub fn write(dir: &Path, j: &Journal) -> Result<(), String> {
    if !dir.exists() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        // Best effort: the journal file itself is written 0644 either way.
        sys_fs::set_mode(dir, 0o755).ok();
    }
    sys_fs::write_atomic(&path(dir), to_json(j).as_bytes(), &files::config(None))
        .map_err(|e| e.to_string())
}

pub fn remove(dir: &Path) -> Result<(), String> {
    sys_fs::remove(&path(dir)).map_err(|e| e.to_string())?;
    // The directory is ours alone; leave it if something else is in it.
    std::fs::remove_dir(dir).ok();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As `route install` wrote it before the journal's words became types (resolved-link, runtime).
    const OLD: &str = r#"{
  "format": 1,
  "state": "installed",
  "adapter": "resolved-link",
  "zone": "pigsty.test",
  "server": "127.0.0.1:5354",
  "variant": "runtime",
  "link": "pigsty-dns0",
  "link_address": "198.18.53.53/32",
  "link_kind": "ifb",
  "root": "/",
  "files": [
    {
      "path": "/etc/systemd/system/pigsty-dns-route.service",
      "existed_before": false,
      "sha256": "00"
    }
  ],
  "created_dirs": [],
  "pre_undo": [
    {
      "argv": ["systemctl", "disable", "pigsty-dns-route.service"],
      "why": "no longer at boot",
      "may_fail": true
    }
  ],
  "undo": [],
  "written_at": "2026-01-01T00:00:00Z"
}
"#;

    #[test]
    fn a_journal_written_the_old_way_reads_and_writes_back_the_same_words() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(path(d.path()), OLD).unwrap();
        let j = read(d.path()).unwrap().unwrap();
        assert_eq!(j.state, State::Installed);
        assert_eq!(j.adapter, AdapterName::ResolvedLink);
        assert_eq!(j.variant, Some(Variant::Runtime));
        assert_eq!(j.link_kind, Some(LinkKind::Ifb));
        let back: serde_json::Value = serde_json::from_str(&to_json(&j)).unwrap();
        let old: serde_json::Value = serde_json::from_str(OLD).unwrap();
        assert_eq!(back, old);
        // The other words of each field, and a journal of another adapter (no link fields).
        let other = OLD
            .replace("\"installed\"", "\"applying\"")
            .replace("\"runtime\"", "\"networkd\"")
            .replace("\"ifb\"", "\"dummy\"");
        let j: Journal = serde_json::from_str(&other).unwrap();
        assert_eq!(
            (j.state, j.variant, j.link_kind),
            (
                State::Applying,
                Some(Variant::Networkd),
                Some(LinkKind::Dummy)
            )
        );
        let mut v = old;
        v["adapter"] = "resolved-delegate".into();
        for k in ["variant", "link", "link_address", "link_kind"] {
            v[k] = serde_json::Value::Null;
        }
        let j: Journal = serde_json::from_value(v).unwrap();
        assert_eq!(j.adapter, AdapterName::ResolvedDelegate);
        assert_eq!((j.variant, j.link_kind), (None, None));
    }
}
