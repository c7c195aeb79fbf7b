//! `pigsty-dns serve`: take the state dir's server lock, store `--records`, bind, serve the newest good
//! generation, follow new ones (watcher, rescan, SIGHUP, `--follow FILE`), keep the status file current,
//! and stop cleanly on SIGTERM/SIGINT.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use crate::dns::name::Zones;
use crate::error::{AppError, Class};
use crate::input;
use crate::input::inventory::Reading;
use crate::serve::net::{self, BindError, Counters, ServerConfig};
use crate::serve::reload::{self, LastError, RESCAN, Served};
use crate::store::status_file::{self, ServerState, Status};
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
    pub zone: Zones,
    pub ttl: u32,
    pub negative_ttl: u32,
    /// How `--records` is read (`--identity-only`, `--entry`).
    pub reading: Reading,
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
    zone: &Zones,
    ttl: u32,
    negative_ttl: u32,
    reading: &Reading,
) -> Result<Option<u32>, AppError> {
    let (set, input, info) = input::read_as(file, zone, reading)?;
    for note in &info.notes {
        tracing::info!(file = %crate::output::text::path(file), "{note}");
    }
    match dir.commit(set, ttl, negative_ttl, input, false)? {
        Outcome::Stored { generation, .. } => {
            tracing::info!(serial = generation.serial, file = %crate::output::text::path(file), "stored a new generation");
            Ok(Some(generation.serial))
        }
        Outcome::Unchanged { serial } => {
            tracing::info!(serial, file = %crate::output::text::path(file), "records unchanged");
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
    let acl = crate::serve::transfer::Acl::new(&o.allow_transfer).map_err(|e| {
        AppError::new(
            Class::Usage,
            e.to_string(),
            "give --allow-transfer 127.0.0.1 (or another 127.0.0.0/8 address, or ::1)",
        )
    })?;
    if let Some(a) = o
        .notify
        .iter()
        .find(|a| !crate::serve::transfer::acl::is_loopback(&a.ip()))
    {
        return Err(AppError::new(
            Class::Usage,
            format!("--notify {a}: not a loopback address; pigsty-dns stays on loopback"),
            "give --notify 127.0.0.1:PORT, the secondary's address on this host",
        ));
    }
    let key = match &o.tsig_key {
        None => None,
        Some(p) => Some(crate::serve::transfer::tsig::Key::load(p).map_err(|e| {
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
        store_file(&dir, file, &o.zone, o.ttl, o.negative_ttl, &o.reading)?;
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

type Notifier = crate::serve::transfer::notify::Notifier;
type Transfers = crate::serve::transfer::Transfers;

/// The server, once the state dir is ours: bind → load the newest good generation → notify → run the
/// loops until a signal → drain. (Over 80 lines: the start-up order is the point, read in one place.)
async fn serve(
    o: ServeOptions,
    dir: StateDir,
    acl: crate::serve::transfer::Acl,
    key: Option<crate::serve::transfer::tsig::Key>,
) -> Result<(), AppError> {
    let transfers =
        (!acl.is_empty()).then(|| Arc::new(Transfers::new(acl, dir.root(), key.clone())));
    // Signals first, so a SIGTERM during start-up is not lost.
    let mut signals = Signals::new()?;
    let bound = net::bind(&server_config(&o, transfers.clone())).map_err(bind_error)?;
    let listen = bound.local_addrs();
    let (live, dir) = load_newest(&o.zone, dir).await?;
    let counters = Arc::new(Counters::new());
    let started = SystemTime::now();
    let follow = if o.follow {
        o.records.as_ref().and_then(|f| std::path::absolute(f).ok())
    } else {
        None
    };
    let notifier = (!o.notify.is_empty()).then(|| Arc::new(Notifier::new(&o.notify, key)));
    let status = Arc::new(StatusWriter {
        live: live.clone(),
        dir: dir.clone(),
        counters: counters.clone(),
        notifier: notifier.clone(),
        transfers,
        listen: listen.clone(),
        zone: o.zone.clone(),
        follow: follow.clone(),
        started,
        last: std::sync::Mutex::new(None),
        errors: std::sync::Mutex::new(LogOnce::default()),
    });
    status.write(ServerState::Running);
    announce(&listen, &o.zone, live.serial());

    let wake = Wake::watch(&dir, follow.as_ref());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    // NOTIFY runs beside the swap path, reading only the live view.
    let notifying = notifier
        .clone()
        .map(|n| tokio::spawn(n.run(live.view.clone(), stop_rx.clone())));
    let opts = FollowOpts {
        file: follow.clone(),
        zone: o.zone.clone(),
        ttl: o.ttl,
        negative_ttl: o.negative_ttl,
        reading: o.reading.clone(),
    };
    let background = tokio::spawn(refresh_loop(
        live.clone(),
        dir,
        opts,
        status.clone(),
        wake,
        signals.hup,
        stop_rx,
    ));

    let shutdown = async {
        tokio::select! {
            _ = signals.term.recv() => tracing::info!("SIGTERM: stopping"),
            _ = signals.int.recv() => tracing::info!("SIGINT: stopping"),
        }
        crate::serve::sd_notify::stopping();
    };
    let served = bound.serve(live.view.clone(), counters, shutdown).await;
    // Drain: the refresh loop and NOTIFY stop, then the status file says so.
    let _ = stop_tx.send(true);
    let _ = background.await;
    if let Some(n) = notifying {
        let _ = n.await;
    }
    status.write(ServerState::Stopped);
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

fn server_config(o: &ServeOptions, transfers: Option<Arc<Transfers>>) -> ServerConfig {
    ServerConfig {
        listen: o.listen.clone(),
        tcp_idle_timeout: o.tcp_idle_timeout,
        tcp_max_connections: o.tcp_max_connections,
        transfers,
        ..ServerConfig::default()
    }
}

/// The signals `serve` acts on: SIGTERM and SIGINT stop it, SIGHUP rescans.
struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> Result<Signals, AppError> {
        let sig = |k| {
            signal(k).map_err(|e| {
                AppError::new(
                    Class::Runtime,
                    format!("cannot handle signals: {e}"),
                    "check the system's limits",
                )
            })
        };
        Ok(Signals {
            term: sig(SignalKind::terminate())?,
            int: sig(SignalKind::interrupt())?,
            hup: sig(SignalKind::hangup())?,
        })
    }
}

/// The live zone with the newest good generation of `dir` in it (or the empty zone, with a warning).
async fn load_newest(
    zone: &Zones,
    dir: StateDir,
) -> Result<(Arc<Served>, Arc<StateDir>), AppError> {
    let live = Arc::new(Served::new(zone.clone()).map_err(|e| {
        AppError::new(
            Class::Usage,
            format!("--zone {zone} {e}"),
            "give a shorter zone",
        )
    })?);
    let dir = Arc::new(dir);
    {
        let (live, dir) = (live.clone(), dir.clone());
        let _ = tokio::task::spawn_blocking(move || live.refresh(&dir)).await;
    }
    if live.serial() == 0 {
        tracing::warn!(state_dir = %crate::output::text::path(dir.root()), zone = %zone, "no generation yet: serving only the apex (SOA serial 0, NS), NXDOMAIN below it; run pigsty-dns load");
    }
    Ok((live, dir))
}

/// Logs what is served and how to try it, then tells a Type=notify service manager we are ready.
fn announce(listen: &[SocketAddr], zone: &Zones, serial: u32) {
    tracing::info!(listen = ?listen, zone = %zone, serial = serial, "answering");
    for a in listen {
        // The line a user can paste to check it, whatever port was chosen.
        for z in zone {
            tracing::info!("try: dig @{} -p {} {} SOA", a.ip(), a.port(), z);
        }
        if a.port() == crate::defaults::MDNS_PORT {
            tracing::warn!(
                "{a}: 5353 is the mDNS port — macOS never sends unicast DNS to a resolver on it, and an mDNS stack \
                 (Avahi, systemd-resolved's mDNS) cannot start beside this server; prefer --listen {}",
                crate::defaults::with_suggested_port(*a)
            );
        }
    }
    // Bound and loaded: only now may a Type=notify service manager count us as started.
    crate::serve::sd_notify::ready(&format!("serving {zone} serial {serial} on {listen:?}"));
}

/// Writes the status file from the live state, only when something but the time changed.
struct StatusWriter {
    live: Arc<Served>,
    dir: Arc<StateDir>,
    counters: Arc<Counters>,
    notifier: Option<Arc<Notifier>>,
    transfers: Option<Arc<Transfers>>,
    listen: Vec<SocketAddr>,
    zone: Zones,
    follow: Option<PathBuf>,
    started: SystemTime,
    /// The last status written, to rewrite only on a change (an idle daemon writes nothing).
    last: std::sync::Mutex<Option<Status>>,
    errors: std::sync::Mutex<LogOnce>,
}

impl StatusWriter {
    fn write(&self, state: ServerState) {
        let s = self.status(state);
        let Ok(mut last) = self.last.lock() else {
            return;
        };
        let changed = last.as_ref().is_none_or(|l| {
            Status {
                updated: s.updated.clone(),
                ..l.clone()
            } != s
        });
        // A status file deleted under us is written again, so clients can still find this server.
        if !changed && self.dir.root().join(status_file::FILE).exists() {
            return;
        }
        match status_file::write(self.dir.root(), &s) {
            Ok(()) => *last = Some(s),
            Err(e) => {
                if let Ok(mut errors) = self.errors.lock() {
                    errors.warn(format!("cannot write the status file: {e}"));
                }
            }
        }
    }

    fn status(&self, state: ServerState) -> Status {
        let view = self.live.view.load_full();
        let info = self.live.info();
        Status {
            format: status_file::FORMAT,
            state,
            pid: std::process::id(),
            started: crate::output::rfc3339(self.started),
            started_unix: self
                .started
                .duration_since(SystemTime::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            updated: crate::output::rfc3339(SystemTime::now()),
            listen: self.listen.clone(),
            zone: self.zone.first().to_string(),
            zones: if self.zone.len() > 1 {
                self.zone.iter().map(|z| z.to_string()).collect()
            } else {
                Vec::new()
            },
            reverse_zone: view.reverse().map(|r| r.zone().to_string()),
            serial: view.serial(),
            secondaries: self
                .notifier
                .as_ref()
                .map(|n| n.snapshot())
                .unwrap_or_default(),
            transfers: self.transfers.as_ref().map(|t| t.counters.snapshot()),
            record_digest: view.record_digest().map(String::from),
            records: view.record_count(),
            generation: info.generation.map(|p| p.display().to_string()),
            loaded_at: info.loaded_at,
            loaded_from: info.loaded_from,
            follow: self.follow.as_ref().map(|p| p.display().to_string()),
            last_error: info.last_error.map(|e| e.to_string()),
            counters: self.counters.snapshot(),
            nxdomain_names: Some(self.counters.nxdomain_names()),
        }
    }
}

/// The wake-up sources besides SIGHUP and the timer: directory events and the followed file. The
/// watchers are held here, since dropping one stops it.
struct Wake {
    dir_rx: mpsc::Receiver<()>,
    follow_rx: mpsc::Receiver<()>,
    _dir_watcher: Option<notify::RecommendedWatcher>,
    _file_watcher: Option<notify::RecommendedWatcher>,
    // The senders live as long as the receivers, so a source without a watcher never wakes (a
    // closed channel would be ready at once, and the loop would spin).
    _dir_tx: mpsc::Sender<()>,
    _follow_tx: mpsc::Sender<()>,
}

impl Wake {
    fn watch(dir: &StateDir, follow: Option<&PathBuf>) -> Wake {
        let (wake_tx, dir_rx) = reload::wake_channel();
        let _dir_watcher = match reload::watch_dir(&dir.generations_dir(), None, wake_tx.clone()) {
            Ok(w) => Some(w),
            Err(e) => {
                tracing::warn!(
                    "cannot watch {}: {e}; rescanning every {} s instead",
                    crate::output::text::path(&dir.generations_dir()),
                    RESCAN.as_secs()
                );
                None
            }
        };
        let (follow_tx, follow_rx) = reload::wake_channel();
        let _file_watcher = follow.and_then(|f| {
            let parent = f.parent()?.to_path_buf();
            reload::watch_dir(&parent, Some(f.clone()), follow_tx.clone())
                .map_err(|e| {
                    tracing::warn!(
                        "cannot watch {}: {e}; polling it instead",
                        crate::output::text::path(f)
                    )
                })
                .ok()
        });
        Wake {
            dir_rx,
            follow_rx,
            _dir_watcher,
            _file_watcher,
            _dir_tx: wake_tx,
            _follow_tx: follow_tx,
        }
    }
}

/// Every wake-up source (directory events, SIGHUP, the followed file, the timer) leads to one refresh,
/// until `stop`; moved counters reach the status file in between.
async fn refresh_loop(
    live: Arc<Served>,
    dir: Arc<StateDir>,
    opts: FollowOpts,
    status: Arc<StatusWriter>,
    mut wake: Wake,
    mut hup: tokio::signal::unix::Signal,
    mut stop_rx: tokio::sync::watch::Receiver<bool>,
) {
    let mut tick = tokio::time::interval(RESCAN);
    // Counters reach the status file at most this often, and only when they moved.
    let mut flush = tokio::time::interval(COUNTER_FLUSH);
    let mut last_file = None;
    let mut last_pass = tokio::time::Instant::now();
    let mut budget = super::pass_budget::PassBudget::default();
    loop {
        let mut follow_due = false;
        let mut by_event = false;
        tokio::select! {
            _ = stop_rx.changed() => break,
            _ = flush.tick() => { status.write(ServerState::Running); continue; }
            _ = wake.dir_rx.recv() => by_event = true,
            _ = hup.recv() => { tracing::info!("SIGHUP: rescanning"); follow_due = true; }
            _ = wake.follow_rx.recv() => { follow_due = true; by_event = true; }
            _ = tick.tick() => follow_due = true,
        }
        // File events start a pass at once while the pass budget lasts, then no sooner than
        // PASS_GAP after the last one ended: a flood of events costs a bounded number of passes,
        // whatever its rate, and a single change does not wait.
        if by_event {
            let now = std::time::Instant::now();
            let at = budget.start_at(now, last_pass.into_std());
            if at > now {
                tokio::select! {
                    _ = stop_rx.changed() => break,
                    _ = tokio::time::sleep_until(tokio::time::Instant::from_std(at)) => {}
                }
            }
        }
        budget.started(std::time::Instant::now());
        // Coalesce what is pending (one wake per source at most) into this pass: a store is one
        // event that counts (the link of a complete, fsynced file; its temporary name is ignored),
        // so the first event already names a file that can be served. Events of a burst that
        // arrive during the pass leave one wake, which finds nothing newer or the next serial.
        if wake.follow_rx.try_recv().is_ok() {
            follow_due = true;
        }
        let _ = wake.dir_rx.try_recv();
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
        last_pass = tokio::time::Instant::now();
        // Counted by tests/it/serve_flood.rs: the bound on passes is what keeps a flood cheap.
        tracing::debug!(by_event, follow_due, "reload pass");
        status.write(ServerState::Running);
    }
}

#[derive(Clone)]
struct FollowOpts {
    file: Option<PathBuf>,
    zone: Zones,
    ttl: u32,
    negative_ttl: u32,
    reading: Reading,
}

/// (size, mtime, ctime) of the followed file at the last attempt.
type FileStamp = Option<(u64, i64, i64)>;

impl FollowOpts {
    /// Loads the followed file again if it changed since the last attempt. An invalid edit is logged and
    /// recorded; the last good generation stays.
    fn follow_once(&self, live: &Served, dir: &StateDir, last: FileStamp) -> FileStamp {
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
        match store_file(
            dir,
            file,
            &self.zone,
            self.ttl,
            self.negative_ttl,
            &self.reading,
        ) {
            Ok(_) => {
                if matches!(live.info().last_error, Some(LastError::Followed(_))) {
                    live.set_error(None);
                }
            }
            Err(e) => {
                // One log line: the first problem, and how many more `check` would list.
                let n = e.others();
                let more = match n {
                    0 => String::new(),
                    1 => " (and 1 more problem: pigsty-dns check lists them all)".into(),
                    n => format!(" (and {n} more problems: pigsty-dns check lists them all)"),
                };
                let msg = format!(
                    "followed file {} not loaded: {}{more}; still serving serial {}",
                    crate::output::text::path(file),
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
