//! Files pigsty-dns writes for a route: the ownership marker, atomic root-owned writes, and the test
//! for "still exactly what pigsty-dns wrote" that uninstall uses when the journal is gone.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::generation::sha256_of;

pub const MARKER: &str = "# Written by pigsty-dns (route install); `pigsty-dns route uninstall` removes it. Do not edit.";
const TAG: &str = "# pigsty-dns-route ";

/// The full file: marker, a tag line (adapter, link, digest of the body), then the body.
pub fn wrap(adapter: &str, link: Option<&str>, body: &str) -> String {
    let link = link.map(|l| format!(" link={l}")).unwrap_or_default();
    format!(
        "{MARKER}\n{TAG}adapter={adapter}{link} body-sha256={}\n{body}",
        sha256_of(body.as_bytes())
    )
}

/// What the first two lines of an owned file say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owned {
    pub adapter: String,
    pub link: Option<String>,
    /// The body still hashes to the digest in the tag line.
    pub intact: bool,
}

pub fn owned(content: &str) -> Option<Owned> {
    let mut it = content.splitn(3, '\n');
    if it.next()? != MARKER {
        return None;
    }
    let tag = it.next()?.strip_prefix(TAG)?;
    let body = it.next().unwrap_or("");
    let mut adapter = None;
    let mut link = None;
    let mut digest = None;
    for kv in tag.split_whitespace() {
        match kv.split_once('=') {
            Some(("adapter", v)) => adapter = Some(v.to_string()),
            Some(("link", v)) => link = Some(v.to_string()),
            Some(("body-sha256", v)) => digest = Some(v.to_string()),
            _ => {}
        }
    }
    Some(Owned {
        adapter: adapter?,
        link,
        intact: digest.as_deref() == Some(sha256_of(body.as_bytes()).as_str()),
    })
}

/// `abs` (an absolute path as the system sees it) under the root prefix.
pub fn under(root: &Path, abs: &str) -> PathBuf {
    root.join(abs.trim_start_matches('/'))
}

/// What is at a path now, compared with what would be written.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Existing {
    Absent,
    OursIdentical,
    OursDifferent,
    NotOurs,
}

pub fn existing(path: &Path, want: &str) -> Result<(Existing, Option<Vec<u8>>), String> {
    match fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let state = if bytes == want.as_bytes() {
                Existing::OursIdentical
            } else if owned(&text).is_some() {
                Existing::OursDifferent
            } else {
                Existing::NotOurs
            };
            Ok((state, Some(bytes)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((Existing::Absent, None)),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Creates the missing parents of `path` (0755) and returns those it created, outermost first.
pub fn make_parents(path: &Path) -> Result<Vec<PathBuf>, String> {
    let mut missing = Vec::new();
    let mut p = path.parent();
    while let Some(d) = p {
        if d.exists() {
            break;
        }
        missing.push(d.to_path_buf());
        p = d.parent();
    }
    missing.reverse();
    for d in &missing {
        fs::create_dir(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
        set_mode(d, 0o755)?;
        chown_root(d)?;
    }
    Ok(missing)
}

/// Writes `content` to `path` atomically: a temporary file in the same directory, fsynced, mode
/// 0644, root-owned when we are root, renamed into place, then the directory fsynced.
pub fn write_atomic(path: &Path, content: &[u8]) -> Result<(), String> {
    let dir = path
        .parent()
        .ok_or_else(|| format!("{} has no parent directory", path.display()))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.pigsty-dns-tmp.{}", std::process::id()));
    let res = (|| {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
        f.write_all(content)
            .and_then(|_| f.sync_all())
            .map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
        set_mode(&tmp, 0o644)?;
        chown_root(&tmp)?;
        fs::rename(&tmp, path)
            .map_err(|e| format!("cannot rename into {}: {e}", path.display()))?;
        sync_dir(dir);
        Ok(())
    })();
    if res.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    res
}

pub fn remove(path: &Path) -> Result<(), String> {
    match fs::remove_file(path) {
        Ok(()) => {
            if let Some(d) = path.parent() {
                sync_dir(d);
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("cannot remove {}: {e}", path.display())),
    }
}

fn sync_dir(d: &Path) {
    if let Ok(f) = fs::File::open(d) {
        let _ = f.sync_all();
    }
}

#[cfg(unix)]
fn set_mode(p: &Path, mode: u32) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(p, fs::Permissions::from_mode(mode))
        .map_err(|e| format!("cannot chmod {}: {e}", p.display()))
}
#[cfg(not(unix))]
fn set_mode(_p: &Path, _mode: u32) -> Result<(), String> {
    Ok(())
}

/// Root-owned when we run as root; a non-root run (tests under --root) keeps its own owner.
#[cfg(unix)]
fn chown_root(p: &Path) -> Result<(), String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(());
    }
    std::os::unix::fs::chown(p, Some(0), Some(0))
        .map_err(|e| format!("cannot chown {}: {e}", p.display()))
}
#[cfg(not(unix))]
fn chown_root(_p: &Path) -> Result<(), String> {
    Ok(())
}
