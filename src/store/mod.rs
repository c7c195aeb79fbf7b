//! The state directory: generations written atomically and never overwritten, ownership and mode checks,
//! the newest good generation computed from the files themselves, history and pruning.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::error::{AppError, Class};
use crate::input::records::RecordSet;
use crate::sys::fs::write_new;
use crate::sys::lock::try_lock;
use crate::sys::user::euid;
use crate::zone::generation::{DiffBase, Generation, HeaderClaim, Input};

pub mod place;
mod serial;
pub mod status_file;
pub use serial::{MAX_SERIAL_STEP, PassedOver, fix_for, serial_step_error};
use serial::{next_serial, serial_base};

/// Generations kept after a store; older ones are pruned.
pub const KEEP: usize = 50;
/// A generation file larger than this is never read (100,000 names take about 6 MB in format 2, 17 MB in format 1). `load` refuses
/// to store one that would be larger, so the server never refuses what `load` stored.
pub const MAX_GENERATION_BYTES: u64 = 64 * 1024 * 1024;
const GENERATIONS: &str = "generations";
const WRITER_LOCK: &str = "writer.lock";
const SERVER_LOCK: &str = "serve.lock";
const LOCK_WAIT: Duration = Duration::from_secs(10);
/// How long `serve` waits for the server lock of a holder that may be exiting.
const SERVER_LOCK_WAIT: Duration = Duration::from_secs(2);

/// A store failure, classified the way the CLI reports it.
#[derive(Debug)]
pub enum StoreError {
    /// Owner, mode or digest does not check out (exit 7).
    Integrity { message: String, next: String },
    /// The writer lock is held too long (exit 6).
    Busy { message: String, next: String },
    /// The state dir cannot be chosen (exit 2).
    Usage { message: String, next: String },
    /// Anything the OS refused (exit 1).
    Io { message: String, next: String },
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Integrity { message, .. }
            | StoreError::Busy { message, .. }
            | StoreError::Usage { message, .. }
            | StoreError::Io { message, .. } => f.write_str(message),
        }
    }
}

impl std::error::Error for StoreError {}

impl From<StoreError> for AppError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Integrity { message, next } => {
                AppError::new(Class::Integrity, message, next)
            }
            StoreError::Busy { message, next } => AppError::new(Class::Resource, message, next),
            StoreError::Usage { message, next } => AppError::new(Class::Usage, message, next),
            StoreError::Io { message, next } => AppError::new(Class::Runtime, message, next),
        }
    }
}

impl StoreError {
    fn io(what: String, e: io::Error) -> StoreError {
        StoreError::Io {
            message: format!("{what}: {e}"),
            next: "check the state directory's path, permissions and free space".into(),
        }
    }
}

/// Where the state dir is: the flag, else the one rule of [`place::default_dir`]
/// (`$PIGSTY_DNS_STATE_DIR`, else the platform's per-user state dir).
pub fn resolve(flag: Option<&Path>) -> Result<PathBuf, StoreError> {
    if let Some(p) = flag {
        return Ok(p.to_path_buf());
    }
    place::default_dir(crate::sys::Os::this(), &place::process_env).ok_or_else(|| {
        StoreError::Usage {
            message: "no state directory: HOME is not set".into(),
            next: "give --state-dir DIR or set PIGSTY_DNS_STATE_DIR".into(),
        }
    })
}

/// One generation file found in the state dir.
#[derive(Debug)]
pub struct Entry {
    pub serial: u32,
    pub path: PathBuf,
    /// The checked generation, or why the file is not served.
    pub status: Result<Generation, String>,
}

#[derive(Debug)]
pub enum Outcome {
    /// The newest good generation already has these records.
    Unchanged { serial: u32 },
    /// `--dry-run`: what would be stored.
    WouldStore {
        generation: Generation,
        previous: Option<DiffBase>,
    },
    Stored {
        generation: Generation,
        path: PathBuf,
        previous: Option<DiffBase>,
    },
}

pub struct StateDir {
    root: PathBuf,
}

/// A directory we keep state in must be ours and writable by no one else.
fn check_dir(path: &Path) -> Result<(), StoreError> {
    let m = fs::symlink_metadata(path).map_err(|e| {
        StoreError::io(
            format!("cannot read {}", crate::output::text::path(path)),
            e,
        )
    })?;
    if !m.is_dir() {
        return Err(StoreError::Integrity {
            message: format!(
                "state directory {} is not a directory",
                crate::output::text::path(path)
            ),
            next: "give --state-dir a directory of your own".into(),
        });
    }
    if m.uid() != euid() {
        return Err(StoreError::Integrity {
            message: format!(
                "state directory {} is owned by uid {}, not by you (uid {})",
                crate::output::text::path(path),
                m.uid(),
                euid()
            ),
            next: "use a state directory you own (--state-dir), or fix its owner".into(),
        });
    }
    if m.mode() & 0o022 != 0 {
        return Err(StoreError::Integrity {
            message: format!(
                "state directory {} has mode {:o}: others can write to it",
                crate::output::text::path(path),
                m.mode() & 0o7777
            ),
            next: format!(
                "chmod 700 {}",
                crate::output::text::shell_quote(&path.display().to_string())
            ),
        });
    }
    Ok(())
}

impl StateDir {
    /// Opens the state dir, creating it (0700) when `create` is set; without it a missing dir reads as empty.
    pub fn open(root: &Path, create: bool) -> Result<StateDir, StoreError> {
        let gens = root.join(GENERATIONS);
        if create {
            if let Some(parent) = root.parent().filter(|p| !p.as_os_str().is_empty()) {
                fs::create_dir_all(parent).map_err(|e| {
                    StoreError::io(
                        format!("cannot create {}", crate::output::text::path(parent)),
                        e,
                    )
                })?;
            }
            for dir in [root, gens.as_path()] {
                match fs::DirBuilder::new().mode(0o700).create(dir) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                    Err(e) => {
                        return Err(StoreError::io(
                            format!("cannot create {}", crate::output::text::path(dir)),
                            e,
                        ));
                    }
                }
            }
        }
        if !create && !root.exists() {
            // Nothing stored yet: reads see an empty history.
            return Ok(StateDir {
                root: root.to_path_buf(),
            });
        }
        check_dir(root)?;
        if gens.exists() || create {
            check_dir(&gens)?;
        }
        Ok(StateDir {
            root: root.to_path_buf(),
        })
    }

    /// The ownership and mode checks of [`StateDir::open`] again, for a reader that holds the
    /// directory for long (the server's rescan): a `generations` swapped later for a symlink or a
    /// directory others may write is refused as `load` and `history` refuse it.
    pub fn recheck(&self) -> Result<(), StoreError> {
        check_dir(&self.root)?;
        let gens = self.generations_dir();
        match fs::symlink_metadata(&gens) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            _ => check_dir(&gens),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn generations_dir(&self) -> PathBuf {
        self.root.join(GENERATIONS)
    }

    /// The generation files by name only (serial, path), newest serial first; nothing is read.
    pub fn list(&self) -> Result<Vec<(u32, PathBuf)>, StoreError> {
        let dir = self.generations_dir();
        let mut out = Vec::new();
        let rd = match fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
            Err(e) => {
                return Err(StoreError::io(
                    format!("cannot list {}", crate::output::text::path(&dir)),
                    e,
                ));
            }
        };
        for item in rd {
            let item = item.map_err(|e| {
                StoreError::io(
                    format!("cannot list {}", crate::output::text::path(&dir)),
                    e,
                )
            })?;
            if let Some((serial, _)) = item.file_name().to_str().and_then(parse_file_name) {
                out.push((serial, item.path()));
            }
        }
        out.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        Ok(out)
    }

    /// Every generation file, newest serial first, each checked as the server checks it: the file,
    /// and its serial against the one the state dir's server last served (RFC 1982's step).
    pub fn scan(&self) -> Result<Vec<Entry>, StoreError> {
        let served = status_file::read(&self.root).map(|s| s.serial).unwrap_or(0);
        Ok(self
            .list()?
            .into_iter()
            .map(|(serial, path)| Entry {
                serial,
                status: match serial_step_error(serial, served) {
                    Some(why) => Err(why),
                    None => check_file(&path),
                },
                path,
            })
            .collect())
    }

    /// The stored generation of `serial`, every check as the server applies them, the file held to its
    /// name (the one verified path of every reader by serial: transfers, IXFR's history). Where several
    /// files carry the name of `serial`, the first that checks out; otherwise why the first does not.
    pub fn generation(&self, serial: u32) -> Result<Generation, String> {
        let list = self.list().map_err(|e| e.to_string())?;
        let mut first_error = None;
        for (_, path) in list.iter().filter(|(s, _)| *s == serial) {
            match check_file_to_serve(path) {
                Ok(g) => return Ok(g),
                Err(e) => {
                    first_error.get_or_insert_with(|| format!("generation {serial} {e}"));
                }
            }
        }
        Err(first_error.unwrap_or_else(|| format!("generation {serial} is not stored")))
    }

    /// Takes the one-server-per-state-dir lock for the life of the returned file. flock is dropped by
    /// the kernel when the holder dies, so a killed server never blocks a restart.
    pub fn lock_server(&self) -> Result<File, StoreError> {
        let path = self.root.join(SERVER_LOCK);
        let mut f = open_lock_file(&path)?;
        // A holder that was just killed keeps the lock until the kernel has torn it down: give it a
        // moment before calling the state dir busy.
        let deadline = Instant::now() + SERVER_LOCK_WAIT;
        let taken = loop {
            let taken = try_lock(&f).map_err(|e| {
                StoreError::io(
                    format!("cannot lock {}", crate::output::text::path(&path)),
                    e,
                )
            })?;
            if taken || Instant::now() >= deadline {
                break taken;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        if !taken {
            let mut holder = String::new();
            let _ = f.read_to_string(&mut holder);
            let holder = holder.trim();
            let who = if holder.is_empty() {
                "another pigsty-dns serve".to_string()
            } else {
                format!("pigsty-dns serve (pid {holder})")
            };
            return Err(StoreError::Busy {
                message: format!(
                    "{who} is already serving from {}",
                    crate::output::text::path(&self.root)
                ),
                next: "stop that server first, or give this one its own --state-dir".into(),
            });
        }
        let _ = f.set_len(0);
        let _ = f.write_all(format!("{}\n", std::process::id()).as_bytes());
        Ok(f)
    }

    /// The newest generation that checks out; bad files are skipped (the caller may log them from `scan`).
    pub fn newest_good(&self) -> Result<Option<(Generation, PathBuf)>, StoreError> {
        Ok(self
            .scan()?
            .into_iter()
            .find_map(|e| e.status.ok().map(|g| (g, e.path))))
    }

    /// Seals `set` as the next serial unless the newest good generation has the same records and, when a
    /// server of this state dir runs, it is what that server serves. The next serial is above every file
    /// on disk and above the serial the state dir's server last served (its status file), so a deleted
    /// file never lets a serial repeat and a server never sees a new generation below its own. (Over 80
    /// lines: every step runs under the one writer lock, in the order the no-replace rule needs.)
    pub fn commit(
        &self,
        set: RecordSet,
        ttl: u32,
        negative_ttl: u32,
        input: Input,
        dry_run: bool,
    ) -> Result<Outcome, StoreError> {
        let _lock = if dry_run { None } else { Some(self.lock()?) };
        // Names only, then files newest first until one checks out: the older files are not read, so a
        // small change costs one read of the previous generation, not of the whole history.
        let files = self.list()?;
        let server = status_file::read(&self.root);
        let served = server.as_ref().map(|s| s.serial).unwrap_or(0);
        let base = serial_base(&files, served);
        let next = next_serial(&files, &base, served)?;
        // Files above the base are never served: neither the change test nor the diff reads them.
        let (newest, files) = files.split_at(base.index);
        let (newest, files) = (newest.to_vec(), files.to_vec());
        let generation = Generation::seal_set(
            set,
            ttl,
            negative_ttl,
            next,
            crate::output::rfc3339(SystemTime::now()),
            input,
        );
        let live_digest = server
            .as_ref()
            .filter(|s| s.is_running())
            .map(|s| s.record_digest.as_deref());
        let unchanged = |record_digest: &str| {
            record_digest == generation.record_digest
                && live_digest.is_none_or(|d| d == Some(record_digest))
        };
        // A change is told by the newest header whose self-digest holds, before anything of its lines
        // is read: the diff base is then read after the new file is in place, while the server
        // already swaps it in. Where that header says "maybe unchanged", or in a dry run, the base
        // is read first, as it decides.
        if !dry_run
            && base
                .claim
                .as_ref()
                .is_some_and(|c| !unchanged(&c.record_digest))
        {
            let path = self.write(&generation)?;
            let previous = files.iter().find_map(|(_, p)| diff_base(p).ok());
            self.prune(&[newest, files].concat());
            return Ok(Outcome::Stored {
                generation,
                path,
                previous,
            });
        }
        let previous = files.iter().find_map(|(_, p)| diff_base(p).ok());
        // "Unchanged" stores nothing, so it rests on a fully checked file: the newest that checks out
        // in full (the diff base is not checked against `load`'s rules; see `decode_diff_base`).
        // Every check, as the server reads it: the sources are checked, not kept (no diff shows them).
        let previous = match previous {
            Some(p) if unchanged(&p.record_digest) => {
                let good = files.iter().find_map(|(_, p)| check_file_to_serve(p).ok());
                if let Some(g) = good.as_ref().filter(|g| unchanged(&g.record_digest)) {
                    return Ok(Outcome::Unchanged { serial: g.serial });
                }
                good.as_ref().map(DiffBase::from)
            }
            other => other,
        };
        if dry_run {
            return Ok(Outcome::WouldStore {
                generation,
                previous,
            });
        }
        let path = self.write(&generation)?;
        self.prune(&[newest, files].concat());
        Ok(Outcome::Stored {
            generation,
            path,
            previous,
        })
    }

    /// The files above the newest generation that sets the next serial: never served, and each with
    /// why and its fix (for `load`'s report).
    pub fn passed_over(&self) -> Result<Vec<PassedOver>, StoreError> {
        let served = status_file::read(&self.root).map(|s| s.serial).unwrap_or(0);
        Ok(serial_base(&self.list()?, served).passed_over)
    }

    /// temp file (0600, fsync) → no-replace rename (or link) to the final name, which fails if it exists →
    /// fsync dir ([`write_new`]).
    fn write(&self, g: &Generation) -> Result<PathBuf, StoreError> {
        let (bytes, self_digest) = g.encode_with_digest();
        let final_path = self
            .generations_dir()
            .join(file_name(g.serial, &self_digest));
        let over = if bytes.len() as u64 > MAX_GENERATION_BYTES {
            Some(format!(
                "is {} bytes, above the {MAX_GENERATION_BYTES}-byte limit",
                bytes.len()
            ))
        } else {
            g.check_string_count(&bytes).err()
        };
        if let Some(why) = over {
            return Err(StoreError::Usage {
                message: format!("the generation of serial {} {why}", g.serial),
                next: "split the records into fewer names or fewer sources".into(),
            });
        }
        write_new(&final_path, &bytes, 0o600).map_err(|e| {
            let what = if e.action == "sync" {
                format!("cannot sync {}", crate::output::text::path(&e.path))
            } else {
                format!("cannot store {}", crate::output::text::path(&final_path))
            };
            StoreError::io(what, e.source)
        })?;
        Ok(final_path)
    }

    /// Keeps the newest [`KEEP`] files (the new one included). Failures only cost disk space.
    fn prune(&self, before: &[(u32, PathBuf)]) {
        for (_, path) in before.iter().skip(KEEP - 1) {
            let _ = fs::remove_file(path);
        }
        // Temp files of writers that died: every writer holds the lock, so none is in use now.
        if let Ok(rd) = fs::read_dir(self.generations_dir()) {
            for item in rd.flatten() {
                if item
                    .file_name()
                    .to_str()
                    .is_some_and(|n| n.starts_with(".tmp-") || n.contains(".pigsty-dns-tmp."))
                {
                    let _ = fs::remove_file(item.path());
                }
            }
        }
    }

    /// The writer lock (flock, so a killed writer never leaves it held), waited for a bounded time.
    fn lock(&self) -> Result<File, StoreError> {
        let path = self.root.join(WRITER_LOCK);
        let f = open_lock_file(&path)?;
        let start = Instant::now();
        loop {
            if try_lock(&f).map_err(|e| {
                StoreError::io(
                    format!("cannot lock {}", crate::output::text::path(&path)),
                    e,
                )
            })? {
                return Ok(f);
            }
            if start.elapsed() > LOCK_WAIT {
                return Err(StoreError::Busy {
                    message: format!(
                        "another pigsty-dns load has held {} for {} s",
                        crate::output::text::path(&path),
                        LOCK_WAIT.as_secs()
                    ),
                    next: "wait for the other load to finish, then run this again".into(),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A lock file is never truncated on open: the server lock holds the holder's pid for the error message.
fn open_lock_file(path: &Path) -> Result<File, StoreError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
        .map_err(|e| {
            StoreError::io(
                format!("cannot open {}", crate::output::text::path(path)),
                e,
            )
        })
}

pub fn file_name(serial: u32, self_digest: &str) -> String {
    format!(
        "gen-{serial:010}-{}.json",
        &self_digest[..16.min(self_digest.len())]
    )
}

/// `gen-0000000042-0123456789abcdef.json` → (42, "0123456789abcdef"); temp names and anything else → None.
pub fn parse_file_name(name: &str) -> Option<(u32, String)> {
    let rest = name.strip_prefix("gen-")?.strip_suffix(".json")?;
    let (serial, digest) = rest.split_once('-')?;
    if serial.len() != 10 || !serial.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if digest.len() != 16
        || !digest
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        return None;
    }
    Some((serial.parse().ok()?, digest.to_string()))
}

/// Reads and checks one generation file, including that its name matches its serial and self-digest.
pub fn check_file(path: &Path) -> Result<Generation, String> {
    check_file_of(path, euid())
}

/// `check_file` for a file that must belong to `owner` (root reading a daemon user's state dir).
pub fn check_file_of(path: &Path, owner: u32) -> Result<Generation, String> {
    check_named(path, owner, Generation::decode_with_digest)
}

type Decode<T> = fn(&[u8]) -> Result<(T, String), String>;

fn check_named(path: &Path, owner: u32, decode: Decode<Generation>) -> Result<Generation, String> {
    check_named_as(path, owner, decode, |g| g.serial)
}

/// [`check_named`] of whatever `decode` reads, whose serial `serial` tells.
fn check_named_as<T>(
    path: &Path,
    owner: u32,
    decode: Decode<T>,
    serial_of: fn(&T) -> u32,
) -> Result<T, String> {
    let name = path.file_name().and_then(|n| n.to_str());
    let Some((serial, digest_prefix)) = name.and_then(parse_file_name) else {
        return Err("is not named like a generation file".into());
    };
    // Bounded whatever a reason quotes: it is logged, kept in the status file and printed again.
    let (g, self_digest) = read_checked(path, owner, decode).map_err(crate::output::text::bound)?;
    if serial_of(&g) != serial {
        Err(format!(
            "holds serial {} under the name of serial {serial}",
            serial_of(&g)
        ))
    } else if !self_digest.starts_with(&digest_prefix) {
        Err("has a self-digest that does not match its file name".into())
    } else {
        Ok(g)
    }
}

/// [`check_file`] for the server: every check, the records' sources not kept
/// ([`Generation::decode_to_serve`]).
pub fn check_file_to_serve(path: &Path) -> Result<Generation, String> {
    check_named(path, euid(), Generation::decode_to_serve)
}

/// [`check_file`] of only what a file's header claims ([`Generation::decode_claim`]): the same file,
/// name and self-digest checks, nothing of the lines.
fn claim(path: &Path) -> Result<HeaderClaim, String> {
    check_named_as(path, euid(), Generation::decode_claim, |c| c.serial)
}

/// [`check_file`] with the contents read only as `load`'s diff base ([`Generation::decode_diff_base`]):
/// the same file, name, self-digest and record-digest checks, not the per-record ones.
fn diff_base(path: &Path) -> Result<DiffBase, String> {
    check_named_as(path, euid(), Generation::decode_diff_base, |b| b.serial)
}

/// Reads one generation file only if it is a regular file of `owner`, mode 0600, one link, not too
/// large, and its contents check out; and the self-digest the file carries. Callers go through
/// [`check_named_as`], which also holds the file to its name.
fn read_checked<T>(path: &Path, owner: u32, decode: Decode<T>) -> Result<(T, String), String> {
    let bytes = crate::sys::fs::read_guarded(
        path,
        &crate::sys::fs::Guard {
            owner,
            max_bytes: MAX_GENERATION_BYTES,
            forbidden_mode: 0o077,
            mode_hint: "generation files are 0600",
        },
    )?;
    decode(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_round_trip_and_temp_names_are_ignored() {
        let n = file_name(42, "0123456789abcdef0123");
        assert_eq!(n, "gen-0000000042-0123456789abcdef.json");
        assert_eq!(parse_file_name(&n), Some((42, "0123456789abcdef".into())));
        assert_eq!(parse_file_name(".tmp-1-2"), None);
        assert_eq!(parse_file_name("gen-42-0123456789abcdef.json"), None);
        assert_eq!(
            parse_file_name("gen-0000000042-0123456789ABCDEF.json"),
            None
        );
    }
}
