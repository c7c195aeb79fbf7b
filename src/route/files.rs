//! Files pigsty-dns writes for a route: the ownership marker, the root prefix, how they are written
//! (through `sys::fs`), and the test for "still exactly what pigsty-dns wrote" that uninstall uses
//! when the journal is gone.

use std::fs;
use std::path::{Path, PathBuf};

use crate::digest::sha256_hex;
use crate::sys::fs::{self as sys_fs, WriteOptions};

pub const MARKER: &str = "# Written by pigsty-dns (route install); `pigsty-dns route uninstall` removes it. Do not edit.";
const TAG: &str = "# pigsty-dns-route ";

/// The full file: marker, a tag line (adapter, link, digest of the body), then the body.
pub fn wrap(adapter: &str, link: Option<&str>, body: &str) -> String {
    let link = link.map(|l| format!(" link={l}")).unwrap_or_default();
    format!(
        "{MARKER}\n{TAG}adapter={adapter}{link} body-sha256={}\n{body}",
        sha256_hex(body.as_bytes())
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
        intact: digest.as_deref() == Some(sha256_hex(body.as_bytes()).as_str()),
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

/// How every route file (and the journal) is written: mode 0644, root-owned when we are root, the
/// temporary file in `temp_dir` or, by default, beside the target.
pub fn config(temp_dir: Option<&Path>) -> WriteOptions<'_> {
    WriteOptions {
        temp_dir,
        owner_root: true,
        ..WriteOptions::mode(0o644)
    }
}

/// Creates the missing parents of `path` (0755, root-owned when we are root) and returns those it
/// created, outermost first, so uninstall can remove them again.
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
        sys_fs::set_mode(d, 0o755).map_err(|e| e.to_string())?;
        sys_fs::chown_root(d).map_err(|e| e.to_string())?;
    }
    Ok(missing)
}
