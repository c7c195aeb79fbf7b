//! The change journal: what a route install wrote, so uninstall removes exactly that. It lives in a
//! root-owned directory of its own (not the user's state dir, not a service's state dir).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::detect::Os;
use super::files;
use super::plan::Step;

pub const FORMAT: u32 = 1;
pub const FILE: &str = "journal.json";

pub fn default_dir(os: Os) -> &'static str {
    match os {
        Os::Macos => "/Library/Application Support/pigsty-dns-route",
        _ => "/var/lib/pigsty-dns-route",
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
    /// `applying` while a run is in progress, `installed` once verified.
    pub state: String,
    pub adapter: String,
    pub zone: String,
    pub server: String,
    pub variant: Option<String>,
    pub link: Option<String>,
    pub link_address: Option<String>,
    pub link_kind: Option<String>,
    pub root: String,
    pub files: Vec<JournalFile>,
    /// Directories this install created (removed again if empty).
    pub created_dirs: Vec<String>,
    pub pre_undo: Vec<Step>,
    pub undo: Vec<Step>,
    pub written_at: String,
}

pub fn path(dir: &Path) -> PathBuf {
    dir.join(FILE)
}

pub fn read(dir: &Path) -> Result<Option<Journal>, String> {
    let p = path(dir);
    match std::fs::read(&p) {
        Ok(bytes) => {
            let j: Journal = serde_json::from_slice(&bytes)
                .map_err(|e| format!("{} is not a route journal: {e}", p.display()))?;
            if j.format != FORMAT {
                return Err(format!(
                    "{} has journal format {}, this pigsty-dns reads format {FORMAT}",
                    p.display(),
                    j.format
                ));
            }
            Ok(Some(j))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", p.display())),
    }
}

pub fn write(dir: &Path, j: &Journal) -> Result<(), String> {
    if !dir.exists() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755));
        }
    }
    let text = crate::commands::to_json(j);
    files::write_atomic(&path(dir), text.as_bytes())
}

pub fn remove(dir: &Path) -> Result<(), String> {
    files::remove(&path(dir))?;
    // The directory is ours alone; leave it if something else is in it.
    let _ = std::fs::remove_dir(dir);
    Ok(())
}
