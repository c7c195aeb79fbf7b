//! `pigsty-dns serve`: take the state dir's server lock, store `--records`, bind, serve the newest good
//! generation, follow new ones (watcher, rescan, SIGHUP, `--follow FILE`), keep the status file current,
//! and stop cleanly on SIGTERM/SIGINT.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use crate::error::{AppError, Class};
use crate::input;
use crate::name::Zone;
use crate::reload::{self, LastError, Live, RESCAN};
use crate::server::{self, BindError, Counters, ServerConfig};
use crate::status_file::{self, ServerState, Status};
use crate::store::{self, Outcome, StateDir};

/// How often moved counters are written to the status file while queries flow.
const COUNTER_FLUSH: Duration = Duration::from_secs(1);
/// A repeated failure (a full disk) is logged once per this interval.
const LOG_AGAIN_AFTER: Duration = Duration::from_secs(60);

/// Logs each distinct message once per [`LOG_AGAIN_AFTER`], not at every retry.
#[derive(Default)]
struct LogOnce {
    seen: std::collections::HashMap<String, std::time::Instant>,
}

impl LogOnce {
    fn warn(&mut self, msg: String) {
        let now = std::time::Instant::now();
        self.seen
            .retain(|_, t| now.duration_since(*t) < LOG_AGAIN_AFTER);
        if let std::collections::hash_map::Entry::Vacant(e) = self.seen.entry(msg) {
            tracing::warn!("{}", e.key());
            e.insert(now);
        }
    }
}

pub struct ServeOptions {
    pub listen: Vec<SocketAddr>,
    pub records: Option<PathBuf>,
    pub follow: bool,
    pub state_dir: Option<PathBuf>,
    pub zone: Zone,
    pub ttl: u32,
    pub negative_ttl: u32,
    pub tcp_idle_timeout: Duration,
    pub tcp_max_connections: usize,
    /// `--allow-transfer`: loopback clients that may AXFR/IXFR.
    pub allow_transfer: Vec<std::net::IpAddr>,
    /// `--notify`: loopback secondaries told of every swap.
    pub notify: Vec<SocketAddr>,
    /// `--tsig-key`: transfers must be signed with this key.
    pub tsig_key: Option<PathBuf>,
}

fn bind_error(e: BindError) -> AppError {
    let class = match &e {
        BindError::InUse { .. } => Class::Resource,
        BindError::NoAddresses | BindError::NotLoopback { .. } => Class::Usage,
        BindError::Permission { .. } => Class::Capability,
        BindError::Other { .. } => Class::Runtime,
    };
    AppError::new(class, e.to_string(), e.hint())
}

/// Validates and stores `file` the way `load` does; returns the serial stored, if any.
fn store_file(
    dir: &StateDir,
    file: &Path,
    zone: &Zone,
    ttl: u32,
    negative_ttl: u32,
) -> Result<Option<u32>, AppError> {
    let (set, input) = input::read(file, zone)?;
    match dir.commit(set, ttl, negative_ttl, input, false)? {
        Outcome::Stored { generation, .. } => {
            tracing::info!(serial = generation.serial, file = %file.display(), "stored a new generation");
            Ok(Some(generation.serial))
        }
        Outcome::Unchanged { serial } => {
            tracing::info!(serial, file = %file.display(), "records unchanged");
            Ok(None)
        }
        Outcome::WouldStore { .. } => Ok(None),
    }
}

pub fn run(o: ServeOptions) -> Result<(), AppError> {
    if o.follow && o.records.is_none() {
        return Err(AppError::new(
            Class::Usage,
            "--follow needs --records FILE",
            "give the file to follow with --records",
        ));
    }
    if let Some((a, why)) = o
        .listen
        .iter()
        .find_map(|a| crate::defaults::reserved_port(a.port()).map(|w| (a, w)))
    {
        return Err(AppError::new(
            Class::Usage,
            format!("--listen {a}: {why}"),
            format!(
                "listen on another port, e.g. --listen {}",
                crate::defaults::with_suggested_port(*a)
            ),
        ));
    }
    let acl = crate::transfer::Acl::new(&o.allow_transfer).map_err(|e| {
        AppError::new(
            Class::Usage,
            e.to_string(),
            "give --allow-transfer 127.0.0.1 (or another 127.0.0.0/8 address, or ::1)",
        )
    })?;
    if let Some(a) = o
        .notify
        .iter()
        .find(|a| !crate::transfer::acl::is_loopback(&a.ip()))
    {
        return Err(AppError::new(
            Class::Usage,
            format!("--notify {a}: not a loopback address; pigsty-dns stays on loopback"),
            "give --notify 127.0.0.1:PORT, the secondary's address on this host",
        ));
    }
    let key = match &o.tsig_key {
        None => None,
        Some(p) => Some(crate::transfer::tsig::Key::load(p).map_err(|e| {
            AppError::new(
                Class::Usage,
                e,
                "give a 0600 key file of yours from `tsig-keygen -a hmac-sha256 NAME` or `keymgr -t NAME hmac-sha256`",
            )
        })?),
    };
    if key.is_some() && acl.is_empty() {
        return Err(AppError::new(
            Class::Usage,
            "--tsig-key without --allow-transfer: no one may transfer",
            "add --allow-transfer ADDR for the secondary's loopback address",
        ));
    }
    reload::settle_allocator();
    let root = store::resolve(o.state_dir.as_deref())?;
    let dir = StateDir::open(&root, true)?;
    let _lock = dir.lock_server()?;
    if let Some(file) = &o.records {
        store_file(&dir, file, &o.zone, o.ttl, o.negative_ttl)?;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| {
            AppError::new(
                Class::Runtime,
                format!("cannot start the runtime: {e}"),
                "check the system's limits",
            )
        })?;
    rt.block_on(serve(o, dir, acl, key))
}

async fn serve(
    o: ServeOptions,
    dir: StateDir,
    acl: crate::transfer::Acl,
    key: Option<crate::transfer::tsig::Key>,
) -> Result<(), AppError> {
    let transfers = (!acl.is_empty()).then(|| {
        Arc::new(crate::transfer::Transfers::new(
            acl,
            dir.root(),
            key.clone(),
        ))
    });
    let cfg = ServerConfig {
        listen: o.listen.clone(),
        tcp_idle_timeout: o.tcp_idle_timeout,
        tcp_max_connections: o.tcp_max_connections,
        transfers: transfers.clone(),
        ..ServerConfig::default()
    };
    // Signals first, so a SIGTERM during start-up is not lost.
    let sig = |k| {
        signal(k).map_err(|e| {
            AppError::new(
                Class::Runtime,
                format!("cannot handle signals: {e}"),
                "check the system's limits",
            )
        })
    };
    let (mut term, mut int, mut hup) = (
        sig(SignalKind::terminate())?,
        sig(SignalKind::interrupt())?,
        sig(SignalKind::hangup())?,
    );
    let bound = server::bind(&cfg).map_err(bind_error)?;
    let listen = bound.local_addrs();
    let live = Arc::new(Live::new(o.zone.clone()).map_err(|e| {
        AppError::new(
            Class::Usage,
            format!("--zone {} {e}", o.zone),
            "give a shorter zone",
        )
    })?);
    let dir = Arc::new(dir);
    {
        let (live, dir) = (live.clone(), dir.clone());
        let _ = tokio::task::spawn_blocking(move || live.refresh(&dir)).await;
    }
    if live.serial() == 0 {
        tracing::warn!(state_dir = %dir.root().display(), zone = %o.zone, "no generation yet: serving only the apex (SOA serial 0, NS), NXDOMAIN below it; run pigsty-dns load");
    }
    let counters = Arc::new(Counters::new());
    let started = SystemTime::now();
    let follow = if o.follow {
        o.records.as_ref().and_then(|f| std::path::absolute(f).ok())
    } else {
        None
    };
    let notifier = (!o.notify.is_empty())
        .then(|| Arc::new(crate::transfer::notify::Notifier::new(&o.notify, key)));
    let write_status = {
        let (notifier, transfers) = (notifier.clone(), transfers.clone());
        let (live, dir, counters, listen, zone, follow) = (
            live.clone(),
            dir.clone(),
            counters.clone(),
            listen.clone(),
            o.zone.clone(),
            follow.clone(),
        );
        // The last status written, to rewrite only on a change (an idle daemon writes nothing).
        let last = Arc::new(std::sync::Mutex::new(None::<Status>));
        let errors = Arc::new(std::sync::Mutex::new(LogOnce::default()));
        move |state: ServerState| {
            let view = live.view.load_full();
            let info = live.info();
            let s = Status {
                format: status_file::FORMAT,
                state,
                pid: std::process::id(),
                started: crate::output::rfc3339(started),
                started_unix: started
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(0),
                updated: crate::output::rfc3339(SystemTime::now()),
                listen: listen.clone(),
                zone: zone.to_string(),
                reverse_zone: view.reverse().map(|r| r.zone().to_string()),
                serial: view.serial(),
                secondaries: notifier.as_ref().map(|n| n.snapshot()).unwrap_or_default(),
                transfers: transfers.as_ref().map(|t| t.counters.snapshot()),
                record_digest: view.record_digest().map(String::from),
                records: view.record_count(),
                generation: info.generation.map(|p| p.display().to_string()),
                loaded_at: info.loaded_at,
                loaded_from: info.loaded_from,
                follow: follow.as_ref().map(|p| p.display().to_string()),
                last_error: info.last_error.map(|e| e.to_string()),
                counters: counters.snapshot(),
                nxdomain_names: Some(counters.nxdomain_names()),
            };
            let Ok(mut last) = last.lock() else { return };
            let changed = last.as_ref().is_none_or(|l| {
                Status {
                    updated: s.updated.clone(),
                    ..l.clone()
                } != s
            });
            // A status file deleted under us is written again, so clients can still find this server.
            if !changed && dir.root().join(status_file::FILE).exists() {
                return;
            }
            match status_file::write(dir.root(), &s) {
                Ok(()) => *last = Some(s),
                Err(e) => {
                    if let Ok(mut errors) = errors.lock() {
                        errors.warn(format!("cannot write the status file: {e}"));
                    }
                }
            }
        }
    };
    write_status(ServerState::Running);
    tracing::info!(listen = ?listen, zone = %o.zone, serial = live.serial(), "answering");
    for a in &listen {
        // The line a user can paste to check it, whatever port was chosen.
        tracing::info!("try: dig @{} -p {} {} SOA", a.ip(), a.port(), o.zone);
        if a.port() == crate::defaults::MDNS_PORT {
            tracing::warn!(
                "{a}: 5353 is the mDNS port — macOS never sends unicast DNS to a resolver on it, and an mDNS stack \
                 (Avahi, systemd-resolved's mDNS) cannot start beside this server; prefer --listen {}",
                crate::defaults::with_suggested_port(*a)
            );
        }
    }
    // Bound and loaded: only now may a Type=notify service manager count us as started.
    crate::sd_notify::ready(&format!(
        "serving {} serial {} on {listen:?}",
        o.zone,
        live.serial()
    ));

    // Every wake-up source (directory events, SIGHUP, the followed file, the timer) leads to one refresh.
    let (wake_tx, mut wake_rx) = mpsc::unbounded_channel::<()>();
    let _dir_watcher = match reload::watch_dir(&dir.generations_dir(), None, wake_tx.clone()) {
        Ok(w) => Some(w),
        Err(e) => {
            tracing::warn!(
                "cannot watch {}: {e}; rescanning every {} s instead",
                dir.generations_dir().display(),
                RESCAN.as_secs()
            );
            None
        }
    };
    let (follow_tx, mut follow_rx) = mpsc::unbounded_channel::<()>();
    let _file_watcher = follow.as_ref().and_then(|f| {
        let parent = f.parent()?.to_path_buf();
        reload::watch_dir(&parent, Some(f.clone()), follow_tx.clone())
            .map_err(|e| tracing::warn!("cannot watch {}: {e}; polling it instead", f.display()))
            .ok()
    });
    let (stop_tx, mut stop_rx) = tokio::sync::watch::channel(false);
    // NOTIFY runs beside the swap path, reading only the live view.
    let notifying = notifier
        .clone()
        .map(|n| tokio::spawn(n.run(live.view.clone(), stop_rx.clone())));
    let background = {
        let (live, dir, write_status) = (live.clone(), dir.clone(), write_status.clone());
        let opts = FollowOpts {
            file: follow.clone(),
            zone: o.zone.clone(),
            ttl: o.ttl,
            negative_ttl: o.negative_ttl,
        };
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(RESCAN);
            // Counters reach the status file at most this often, and only when they moved.
            let mut flush = tokio::time::interval(COUNTER_FLUSH);
            let mut last_file = None;
            loop {
                let mut follow_due = false;
                tokio::select! {
                    _ = stop_rx.changed() => break,
                    _ = flush.tick() => { write_status(ServerState::Running); continue; }
                    _ = wake_rx.recv() => {}
                    _ = hup.recv() => { tracing::info!("SIGHUP: rescanning"); follow_due = true; }
                    _ = follow_rx.recv() => follow_due = true,
                    _ = tick.tick() => follow_due = true,
                }
                // Coalesce what is already queued into one pass, without waiting for more: a store is one
                // event that counts (the link of a complete, fsynced file; its temporary name is ignored),
                // so the first event already names a file that can be served. Events of a burst that
                // arrive during the pass wake one more pass, which finds nothing newer or the next serial.
                while wake_rx.try_recv().is_ok() || follow_rx.try_recv().is_ok() {}
                let (live2, dir2, opts2) = (live.clone(), dir.clone(), opts.clone());
                let prev = last_file;
                let joined = tokio::task::spawn_blocking(move || {
                    let seen = if follow_due {
                        opts2.follow_once(&live2, &dir2, prev)
                    } else {
                        prev
                    };
                    live2.refresh(&dir2);
                    seen
                })
                .await;
                if let Ok(seen) = joined {
                    last_file = seen;
                }
                write_status(ServerState::Running);
            }
        })
    };

    let shutdown = async {
        tokio::select! {
            _ = term.recv() => tracing::info!("SIGTERM: stopping"),
            _ = int.recv() => tracing::info!("SIGINT: stopping"),
        }
        crate::sd_notify::stopping();
    };
    let served = bound
        .serve(live.view.clone(), counters.clone(), shutdown)
        .await;
    let _ = stop_tx.send(true);
    let _ = background.await;
    if let Some(n) = notifying {
        let _ = n.await;
    }
    write_status(ServerState::Stopped);
    served.map_err(|e| {
        AppError::new(
            Class::Runtime,
            format!("the server stopped: {e}"),
            "see the log above",
        )
    })?;
    tracing::info!("stopped");
    Ok(())
}

#[derive(Clone)]
struct FollowOpts {
    file: Option<PathBuf>,
    zone: Zone,
    ttl: u32,
    negative_ttl: u32,
}

/// (size, mtime, ctime) of the followed file at the last attempt.
type FileStamp = Option<(u64, i64, i64)>;

impl FollowOpts {
    /// Loads the followed file again if it changed since the last attempt. An invalid edit is logged and
    /// recorded; the last good generation stays.
    fn follow_once(&self, live: &Live, dir: &StateDir, last: FileStamp) -> FileStamp {
        use std::os::unix::fs::MetadataExt;
        let file = self.file.as_ref()?;
        let now = std::fs::metadata(file).ok().map(|m| {
            (
                m.len(),
                m.mtime() * 1_000_000_000 + m.mtime_nsec(),
                m.ctime(),
            )
        });
        if now.is_none() || now == last {
            return if now.is_none() { last } else { now };
        }
        match store_file(dir, file, &self.zone, self.ttl, self.negative_ttl) {
            Ok(_) => {
                if matches!(live.info().last_error, Some(LastError::Followed(_))) {
                    live.set_error(None);
                }
            }
            Err(e) => {
                let msg = format!(
                    "followed file {} not loaded: {}; still serving serial {}",
                    file.display(),
                    e.message,
                    live.serial()
                );
                tracing::warn!("{msg}");
                live.set_error(Some(LastError::Followed(msg)));
            }
        }
        now
    }
}
