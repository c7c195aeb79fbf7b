//! Atomic file writes and removals. A reader sees the old or the new content, never half of one, and a
//! crash after we return cannot lose the change: the file and its directory are fsynced.

use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// A failed file operation: what we tried, on which path, and why.
#[derive(Debug)]
pub struct FsError {
    pub action: &'static str,
    pub path: PathBuf,
    pub source: io::Error,
}

impl fmt::Display for FsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot {} {}: {}",
            self.action,
            crate::output::text::path(&self.path),
            self.source
        )
    }
}

impl std::error::Error for FsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

fn err<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> FsError + 'a {
    move |source| FsError {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// How `write_atomic` creates the file.
#[derive(Debug, Clone, Copy)]
pub struct WriteOptions<'a> {
    pub mode: u32,
    /// Where the temporary file lives (same filesystem as the target); default: the target's
    /// directory. A directory whose every entry is live configuration (macOS `/etc/resolver`) needs
    /// the temporary file elsewhere.
    pub temp_dir: Option<&'a Path>,
    /// chown the file to root:root when we run as root (system configuration).
    pub owner_root: bool,
    /// Create missing parent directories (mode 0755) first.
    pub create_parents: bool,
}

impl WriteOptions<'_> {
    pub const fn private() -> WriteOptions<'static> {
        WriteOptions {
            mode: 0o600,
            temp_dir: None,
            owner_root: false,
            create_parents: false,
        }
    }

    pub const fn mode(mode: u32) -> WriteOptions<'static> {
        WriteOptions {
            mode,
            ..WriteOptions::private()
        }
    }
}

/// What every temporary name for `path` starts with (the process id follows): how a leftover of an
/// interrupted write is recognised.
pub fn temp_prefix(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(".{name}.pigsty-dns-tmp.")
}

/// The temporary name beside (or in `dir` for) `path`, unique to this process.
pub fn temp_path(path: &Path, dir: Option<&Path>) -> PathBuf {
    let dir = dir.or_else(|| path.parent()).unwrap_or(Path::new("."));
    dir.join(format!("{}{}", temp_prefix(path), std::process::id()))
}

/// temp file (`opts.mode`, fsync) → rename into place → fsync the directory. On failure the temporary
/// file is removed and the target is untouched.
pub fn write_atomic(path: &Path, content: &[u8], opts: &WriteOptions<'_>) -> Result<(), FsError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    if opts.create_parents {
        fs::create_dir_all(dir).map_err(err("create", dir))?;
    }
    let tmp = temp_path(path, opts.temp_dir);
    let res = (|| {
        let _ = fs::remove_file(&tmp);
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(opts.mode)
            .open(&tmp)
            .map_err(err("create", &tmp))?;
        f.write_all(content)
            .and_then(|_| f.sync_all())
            .map_err(err("write", &tmp))?;
        // The umask may have narrowed the mode at create.
        fs::set_permissions(&tmp, fs::Permissions::from_mode(opts.mode))
            .map_err(err("set the mode of", &tmp))?;
        if opts.owner_root {
            chown_root(&tmp)?;
        }
        fs::rename(&tmp, path).map_err(err("rename into", path))?;
        sync_dir(dir);
        if let Some(t) = opts.temp_dir.filter(|t| *t != dir) {
            sync_dir(t);
        }
        Ok(())
    })();
    if res.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    res
}

/// temp file (`mode`, fsync) → rename to `path` without replacing (Linux), else hard link to `path`; either
/// fails if `path` exists (a sealed file is never replaced) → unlink temp → fsync the directory. Returns the
/// error kind `AlreadyExists` when taken.
pub fn write_new(path: &Path, content: &[u8], mode: u32) -> Result<(), FsError> {
    write_new_by(path, content, mode, rename_no_replace)
}

/// [`write_new`] with the no-replace rename given (the tests run the link-and-unlink fallback of the
/// platforms without one).
fn write_new_by(
    path: &Path,
    content: &[u8],
    mode: u32,
    rename_no_replace: fn(&Path, &Path) -> io::Result<bool>,
) -> Result<(), FsError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = temp_path(path, None);
    let res = (|| {
        let _ = fs::remove_file(&tmp);
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&tmp)
            .map_err(err("create", &tmp))?;
        f.write_all(content)
            .and_then(|_| f.sync_all())
            .map_err(err("write", &tmp))?;
        fs::set_permissions(&tmp, fs::Permissions::from_mode(mode))
            .map_err(err("set the mode of", &tmp))?;
        if rename_no_replace(&tmp, path).map_err(err("link", path))? {
            return Ok(());
        }
        fs::hard_link(&tmp, path).map_err(err("link", path))
    })();
    let _ = fs::remove_file(&tmp);
    res?;
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(err("sync", dir))
}

/// Moves `from` to `to` unless `to` exists (then `AlreadyExists`), in one step: a reader never sees the
/// file under both names, so never with two links, as it can between a hard link and the unlink of the
/// temporary name (a watcher woken by the link would refuse the file and not be woken again by the
/// unlink of a temporary name). `Ok(false)` where the kernel or filesystem cannot do it (then the caller
/// links and unlinks).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn rename_no_replace(from: &Path, to: &Path) -> io::Result<bool> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
    };
    let (from, to) = (c(from)?, c(to)?);
    // SAFETY: both are NUL-terminated paths that live across the call.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if r == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EINVAL | libc::ENOSYS | libc::ENOTSUP) => Ok(false),
        _ => Err(e),
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
use no_rename_no_replace as rename_no_replace;

/// Where `renameat2` is not to be had (macOS, musl): the caller links and unlinks. Compiled on Linux
/// for its test.
#[cfg(any(not(all(target_os = "linux", target_env = "gnu")), test))]
fn no_rename_no_replace(_from: &Path, _to: &Path) -> io::Result<bool> {
    Ok(false)
}

/// Removes `path` (absent is fine) and fsyncs its directory.
pub fn remove(path: &Path) -> Result<(), FsError> {
    match fs::remove_file(path) {
        Ok(()) => {
            if let Some(d) = path.parent() {
                sync_dir(d);
            }
            Ok(())
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(err("remove", path)(e)),
    }
}

/// Best effort: a directory that cannot be opened for fsync has nothing we could do about it.
pub fn sync_dir(d: &Path) {
    if let Ok(f) = fs::File::open(d) {
        let _ = f.sync_all();
    }
}

pub fn set_mode(p: &Path, mode: u32) -> Result<(), FsError> {
    fs::set_permissions(p, fs::Permissions::from_mode(mode)).map_err(err("set the mode of", p))
}

/// root:root when we are root; a no-op otherwise (a test root prefix owned by the user).
pub fn chown_root(p: &Path) -> Result<(), FsError> {
    if !super::user::is_root() {
        return Ok(());
    }
    std::os::unix::fs::chown(p, Some(0), Some(0)).map_err(err("chown", p))
}

/// What a file another user may write is held to before root (or anyone) reads it: see [`read_guarded`].
pub struct Guard<'a> {
    /// The uid the file must belong to (the state dir's owner, for a reader that is not it).
    pub owner: u32,
    /// Larger files are refused unread.
    pub max_bytes: u64,
    /// Mode bits that must be clear (`0o077`: only the owner may read or write it).
    pub forbidden_mode: u32,
    /// What the file is, for the mode message ("generation files are 0600").
    pub mode_hint: &'a str,
}

/// The bytes of `path` only if it is a regular file (not a symlink: `O_NOFOLLOW`; a FIFO or device is
/// never waited on: `O_NONBLOCK`) of `guard.owner` with one link, none of `guard.forbidden_mode`, at
/// most `guard.max_bytes`. Every check is made on the open file, so a swap after it cannot matter.
/// Errors read after the path: "is a symlink".
pub fn read_guarded(path: &Path, guard: &Guard<'_>) -> Result<Vec<u8>, String> {
    use std::io::Read;
    use std::os::unix::fs::MetadataExt;
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                "is a symlink".to_string()
            } else {
                format!("cannot be read ({e})")
            }
        })?;
    let m = f.metadata().map_err(|e| format!("cannot be read ({e})"))?;
    if !m.is_file() {
        return Err("is not a regular file".into());
    }
    let owner = guard.owner;
    if m.uid() != owner {
        return Err(format!(
            "is owned by uid {}, not by this user (uid {owner})",
            m.uid(),
        ));
    }
    if m.mode() & guard.forbidden_mode != 0 {
        return Err(format!(
            "has mode {:o}; {}",
            m.mode() & 0o7777,
            guard.mode_hint
        ));
    }
    if m.nlink() != 1 {
        return Err(format!("has {} hard links; it must have one", m.nlink()));
    }
    let max = guard.max_bytes;
    if m.len() > max {
        return Err(format!("is {} bytes, above the {max}-byte limit", m.len()));
    }
    let mut bytes = Vec::with_capacity(m.len() as usize);
    // Bounded again: a file that grows after the check is read no further than the limit.
    f.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot be read ({e})"))?;
    if bytes.len() as u64 > max {
        return Err(format!("grew above the {max}-byte limit while read"));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn write_new_without_a_no_replace_rename_links_and_never_replaces() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sealed");
        write_new_by(&p, b"first", 0o600, no_rename_no_replace).unwrap();
        let e = write_new_by(&p, b"second", 0o600, no_rename_no_replace).unwrap_err();
        assert_eq!(e.source.kind(), io::ErrorKind::AlreadyExists, "{e:?}");
        assert_eq!(fs::read_to_string(&p).unwrap(), "first");
        assert_eq!(fs::metadata(&p).unwrap().mode() & 0o777, 0o600);
        assert_eq!(fs::metadata(&p).unwrap().nlink(), 1);
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn write_atomic_replaces_with_the_mode_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        fs::write(&p, "old").unwrap();
        write_atomic(&p, b"new", &WriteOptions::mode(0o640)).unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(fs::metadata(&p).unwrap().mode() & 0o777, 0o640);
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn write_atomic_can_keep_its_temp_file_elsewhere() {
        let d = tempfile::tempdir().unwrap();
        let live = d.path().join("live");
        let side = d.path().join("side");
        fs::create_dir(&live).unwrap();
        fs::create_dir(&side).unwrap();
        let p = live.join("f");
        let opts = WriteOptions {
            temp_dir: Some(&side),
            ..WriteOptions::mode(0o644)
        };
        assert!(temp_path(&p, Some(&side)).starts_with(&side));
        let name = temp_path(&p, Some(&side));
        let name = name.file_name().unwrap().to_string_lossy();
        assert!(name.starts_with(&temp_prefix(&p)), "{name}");
        write_atomic(&p, b"x", &opts).unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "x");
        assert_eq!(fs::read_dir(&side).unwrap().count(), 0);
    }

    #[test]
    fn write_new_never_replaces() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("g");
        write_new(&p, b"one", 0o600).unwrap();
        let m = fs::metadata(&p).unwrap();
        use std::os::unix::fs::MetadataExt;
        assert_eq!((m.nlink(), m.mode() & 0o7777), (1, 0o600));
        let e = write_new(&p, b"two", 0o600).unwrap_err();
        assert_eq!(e.source.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read_to_string(&p).unwrap(), "one");
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_failed_write_leaves_the_target_alone() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("missing-dir").join("f");
        let e = write_atomic(&p, b"x", &WriteOptions::private()).unwrap_err();
        assert!(e.to_string().starts_with("cannot create"), "{e}");
        remove(&p).unwrap();
    }
}
