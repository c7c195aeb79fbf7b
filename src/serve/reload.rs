//! Hot swap: a filesystem watcher on the generations directory, a periodic rescan and SIGHUP all lead to one
//! `refresh`, which verifies any newer generation in full before `ArcSwap::store`. A bad generation is
//! logged and recorded as `last_error`; the last good one keeps being served.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;
use notify::{RecursiveMode, Watcher};
use tokio::sync::mpsc;

use crate::dns::name::Zones;
use crate::store::{self, StateDir};
use crate::zone::generation::Generation;
use crate::zone::view::{ZoneView, ZoneViewError};

/// Why the newest generation or the followed file is not live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LastError {
    /// A generation file was refused, or the directory could not be listed.
    Generation(String),
    /// `serve --follow`: the followed file did not load.
    Followed(String),
}

impl std::fmt::Display for LastError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LastError::Generation(m) | LastError::Followed(m) => f.write_str(m),
        }
    }
}

/// What the server reports about the generation it serves.
#[derive(Debug, Clone, Default)]
pub struct LiveInfo {
    pub generation: Option<PathBuf>,
    pub loaded_at: Option<String>,
    pub loaded_from: Option<String>,
    pub last_error: Option<LastError>,
}

/// The served zones and what is known about them; shared by the server, the watcher and the status
/// writer.
pub struct Served {
    pub zone: Zones,
    pub view: Arc<ArcSwap<ZoneView>>,
    pub info: Mutex<LiveInfo>,
    /// Files already found bad, by (size and inode, ctime): not read again until they change.
    known_bad: Mutex<HashMap<PathBuf, (u64, i64)>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refresh {
    Swapped(u32),
    Unchanged,
}

impl Served {
    pub fn new(zone: Zones) -> Result<Served, ZoneViewError> {
        Ok(Served {
            view: Arc::new(ArcSwap::from_pointee(ZoneView::empty(zone.clone())?)),
            zone,
            info: Mutex::new(LiveInfo::default()),
            known_bad: Mutex::new(HashMap::new()),
        })
    }

    pub fn serial(&self) -> u32 {
        self.view.load().serial()
    }

    pub fn info(&self) -> LiveInfo {
        self.info.lock().map(|i| i.clone()).unwrap_or_default()
    }

    /// Records why the newest generation or the followed file is not live, bounded
    /// ([`crate::output::text::bound`]): the status file holding it is rewritten on every counter flush.
    pub fn set_error(&self, e: Option<LastError>) {
        let e = e.map(|e| match e {
            LastError::Generation(m) => LastError::Generation(crate::output::text::bound(m)),
            LastError::Followed(m) => LastError::Followed(crate::output::text::bound(m)),
        });
        if let Ok(mut i) = self.info.lock() {
            i.last_error = e;
        }
    }

    /// Serves the newest good generation newer than the live one, if there is one. Reads only files
    /// with a higher serial, newest first, and stops at the first that checks out.
    pub fn refresh(&self, dir: &StateDir) -> Refresh {
        let r = self.find_newer(dir);
        if r != Refresh::Unchanged {
            release_freed_memory();
        }
        r
    }

    fn find_newer(&self, dir: &StateDir) -> Refresh {
        let current = self.serial();
        // Checked on every pass, not only at start: the directory may be swapped under us.
        let files = match dir.recheck().and_then(|()| dir.list()) {
            Ok(f) => f,
            Err(e) => {
                let msg = format!("cannot read generations: {e}; still serving serial {current}");
                tracing::warn!("{msg}");
                self.set_error(Some(LastError::Generation(msg)));
                return Refresh::Unchanged;
            }
        };
        // RFC 1982's step is measured from the live serial, or, before the first swap, from the one
        // this state dir's server last served (secondaries may hold it).
        let floor = match current {
            0 => crate::store::status_file::read(dir.root()).map_or(0, |s| s.serial),
            c => c,
        };
        // A newer file refused in this pass stays the last error after an older one is swapped in.
        let mut refused = None;
        for (serial, path) in files.into_iter().filter(|(s, _)| *s > current) {
            let stamp = stamp(&path);
            if self
                .known_bad
                .lock()
                .is_ok_and(|k| stamp.is_some() && k.get(&path) == stamp.as_ref())
            {
                continue;
            }
            let checked = match store::serial_step_error(serial, floor) {
                Some(why) => Err(why),
                None => store::check_file_to_serve(&path),
            };
            match self.accept(checked) {
                Ok((g, view)) => {
                    self.view.store(Arc::new(view));
                    tracing::info!(
                        serial = g.serial,
                        records = g.records.len(),
                        record_digest = %g.record_digest,
                        file = %crate::output::text::path(&path),
                        "serving generation"
                    );
                    if let Ok(mut i) = self.info.lock() {
                        *i = LiveInfo {
                            generation: Some(path),
                            loaded_at: Some(crate::output::rfc3339(SystemTime::now())),
                            loaded_from: Some(g.input.path.clone()),
                            last_error: refused.map(LastError::Generation),
                        };
                    }
                    return Refresh::Swapped(serial);
                }
                Err(why) => {
                    let msg = crate::output::text::bound(format!(
                        "generation {serial} ({}) {why}; still serving serial {current}",
                        crate::output::text::path(&path)
                    ));
                    tracing::warn!("{msg}");
                    refused.get_or_insert_with(|| msg.clone());
                    self.set_error(Some(LastError::Generation(msg)));
                    if let (Some(s), Ok(mut k)) = (stamp, self.known_bad.lock()) {
                        k.insert(path, s);
                    }
                }
            }
        }
        Refresh::Unchanged
    }

    fn accept(
        &self,
        checked: Result<Generation, String>,
    ) -> Result<(Generation, ZoneView), String> {
        let g = checked?;
        let sealed = g.served_zones()?;
        // The server answers its own zones (`--zone`) from any generation whose first zone is its
        // first, or a single label would mean another name. A generation of fewer zones (one written
        // before zone sets) keeps serving, the other zones' apexes only, until the next load; one of
        // more zones (a load with the new default under a unit rendered with one zone) serves the
        // zones this server has, and says what it leaves out.
        if sealed.first() != self.zone.first() {
            return Err(format!(
                "is sealed for {} {sealed}, and this server serves {} (--zone): their first zones, \
                 where a single label goes, differ",
                if sealed.len() > 1 { "zones" } else { "zone" },
                self.zone
            ));
        }
        let left_out: Vec<&str> = sealed
            .iter()
            .filter(|z| !self.zone.iter().any(|s| s == *z))
            .map(|z| z.as_str())
            .collect();
        if !left_out.is_empty() {
            tracing::warn!(
                serial = g.serial,
                "generation {} is sealed for zones {sealed}; this server serves {} (--zone) and \
                 leaves out {}: restart it with --zone for each (pigsty-dns service install again \
                 renders the unit with the default zones)",
                g.serial,
                self.zone,
                left_out.join(", ")
            );
        }
        let view = ZoneView::from_generation_in(&g, &self.zone).map_err(|e| e.to_string())?;
        Ok((g, view))
    }
}

/// Reading and checking a generation parses the whole file (16 MB at 100,000 names) into short-lived
/// structures; glibc keeps that memory in its heap after it is freed. Hand it back once per swap, so the
/// server's resident size is its index, not its last parse.
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free heap pages to the kernel; it has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Fixes glibc's mmap threshold at its default (128 KiB), so every large buffer (a generation file's bytes,
/// the index's arena, entries and table) is mapped on its own and unmapped when freed. Left dynamic, glibc
/// raises the threshold to the largest block freed so far: after the first swap the next index lands in
/// the heap among the short-lived allocations of a parse, and the heap stays fragmented (measured: 14.7 MiB
/// after one swap, 33.7 MiB after 103 at 100,000 names). Call once, before the first generation is read.
///
/// It also keeps every thread on the main arena. A swap parses on a blocking-pool thread, and glibc gives
/// such a thread an arena of its own, whose free top `malloc_trim` never hands back (it trims only the
/// main arena's top): 3.2 MiB stayed resident after each swap at 100,000 names, all of it free. The UDP
/// path allocates nothing per query (its buffers are made once per loop), and small allocations come from
/// each thread's cache before any arena lock, so one arena costs no measurable CPU per query
/// (bench/RESULTS.md, issue 37).
pub fn settle_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; it has no preconditions.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

fn stamp(path: &Path) -> Option<(u64, i64)> {
    // ctime moves on any change, a chmod or chown included, so a repaired file is read again.
    std::fs::symlink_metadata(path).ok().map(|m| {
        (
            m.len() ^ m.ino().rotate_left(32),
            m.ctime() * 1_000_000_000 + m.ctime_nsec(),
        )
    })
}

/// A wake-up channel holds at most one pending wake: a pass rescans everything, so a second queued wake
/// would add nothing, and a flood of events (10^6 renames) costs no memory in between.
pub fn wake_channel() -> (mpsc::Sender<()>, mpsc::Receiver<()>) {
    mpsc::channel(1)
}

/// Wakes `tx` ([`wake_channel`]) on every change in `dir` that is not a temporary file; a wake already
/// pending absorbs the event. The returned watcher must be kept.
pub fn watch_dir(
    dir: &Path,
    only: Option<PathBuf>,
    tx: mpsc::Sender<()>,
) -> notify::Result<notify::RecommendedWatcher> {
    let mut w = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        let Ok(event) = res else {
            // A lost event is covered by the periodic rescan.
            let _ = tx.try_send(());
            return;
        };
        // Reading is no change — and our own rescan opens the directory, so counting that as one
        // would wake the server in a loop.
        if matches!(event.kind, notify::EventKind::Access(_)) {
            return;
        }
        // The unlink of a writer's temporary name counts too: where a store links and then unlinks (no
        // no-replace rename), a pass woken by the link may have seen the file with two links.
        let removed = matches!(event.kind, notify::EventKind::Remove(_));
        let relevant = event.paths.iter().any(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            match &only {
                Some(file) => p == file || p.file_name() == file.file_name(),
                None => !name.starts_with('.') || removed,
            }
        });
        if relevant || event.paths.is_empty() {
            // Full means a wake is pending already.
            let _ = tx.try_send(());
        }
    })?;
    w.watch(dir, RecursiveMode::NonRecursive)?;
    Ok(w)
}

/// The least time between the end of one pass and the start of the next one woken by file events,
/// once the pass budget is spent (`serve::pass_budget`): under a flood of events the server makes at
/// most about 1/PASS_GAP passes a second (plus the budget) instead of one per burst.
pub const PASS_GAP: Duration = Duration::from_millis(50);

/// How often the generations directory is rescanned even without events (the bound is 5 s).
pub const RESCAN: Duration = Duration::from_secs(2);
