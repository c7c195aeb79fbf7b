//! The status file a running server keeps in its state dir (`status.json`): its format, and the one
//! way to read and write it. The server writes it; `status`, `load`, `route` and `service` read it — the
//! only channel besides DNS itself between the daemon and the other commands.

use std::net::SocketAddr;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::output::to_json;
use crate::sys::fs::{FsError, WriteOptions, write_atomic};
use crate::sys::user::pid_alive;

/// Version of the status file format.
pub const FORMAT: u32 = 1;
pub const FILE: &str = "status.json";

/// What the server says of itself. A killed server leaves `Running` with a dead pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServerState {
    Running,
    /// After a clean exit.
    Stopped,
}

impl std::fmt::Display for ServerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ServerState::Running => "running",
            ServerState::Stopped => "stopped",
        })
    }
}

/// Answer counters since the server started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountersSnapshot {
    pub noerror: u64,
    pub nxdomain: u64,
    pub refused: u64,
    pub formerr: u64,
    pub notimp: u64,
    pub servfail: u64,
    pub badvers: u64,
    pub other: u64,
    /// Packets not answered at all (too short, or QR=1).
    pub dropped: u64,
    /// UDP answers sent with TC=1.
    pub truncated: u64,
    pub tcp_accepted: u64,
    /// TCP connections closed at once: the cap was reached and no connection could be evicted.
    pub tcp_refused: u64,
    /// TCP connections closed to make room for a new one at the cap (the one idle the longest).
    /// Absent from the status files of older servers (read as 0).
    #[serde(default)]
    pub tcp_evicted: u64,
}

/// The transfer counters (`crate::serve::transfer::TransferCounters`) as the status file holds them (since
/// the server started).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransferCountersSnapshot {
    pub axfr: u64,
    pub ixfr: u64,
    pub ixfr_as_axfr: u64,
    pub ixfr_current: u64,
    pub signed_soa: u64,
    pub tsig_unsigned: u64,
    pub tsig_badkey: u64,
    pub tsig_badsig: u64,
    pub tsig_badtime: u64,
    pub failed: u64,
}

/// What the status file says of one secondary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecondaryStatus {
    pub address: SocketAddr,
    /// The serial of the last NOTIFY it acknowledged, for every zone served.
    pub acknowledged_serial: Option<u32>,
    /// The serial being notified, until it is acknowledged or given up.
    pub pending_serial: Option<u32>,
    /// The last failure (no answer after every try, or an error rcode); cleared by an acknowledgement.
    pub last_error: Option<String>,
    /// NOTIFYs given up since the start (every try unanswered or refused). Absent from older files.
    #[serde(default)]
    pub failures: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Status {
    pub format: u32,
    pub state: ServerState,
    pub pid: u32,
    pub started: String,
    pub started_unix: u64,
    pub updated: String,
    /// The addresses actually bound (UDP and TCP on each).
    pub listen: Vec<SocketAddr>,
    /// The first served zone (where a single label goes).
    pub zone: String,
    /// Every served zone in order, the first `zone`, when there are several; absent for one zone (and
    /// from servers before zone sets). [`Status::zones`] reads either.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zones: Vec<String>,
    /// The reverse zone served beside `zone` from the same generation (`C.B.A.in-addr.arpa`); `None`
    /// with no generation, one sealed before reverse zones, or a server from before them.
    #[serde(default)]
    pub reverse_zone: Option<String>,
    /// The live serial; 0 when no generation is served yet.
    pub serial: u32,
    /// The `--notify` secondaries and the last serial each acknowledged (absent without `--notify`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secondaries: Vec<SecondaryStatus>,
    /// Transfers served and refused since the start (absent without `--allow-transfer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfers: Option<TransferCountersSnapshot>,
    pub record_digest: Option<String>,
    pub records: usize,
    /// The generation file served.
    pub generation: Option<String>,
    pub loaded_at: Option<String>,
    /// The input file (or rollback) the live generation was made from.
    pub loaded_from: Option<String>,
    /// The file `serve --follow` watches.
    pub follow: Option<String>,
    /// Why the newest generation or the followed file is not live, if it is not.
    pub last_error: Option<String>,
    pub counters: CountersSnapshot,
    /// The last names answered NXDOMAIN over UDP, oldest first (`serve::net::counters::NXDOMAIN_NAMES` at
    /// most): where the route's checks find their own random probe names. `None` from a server before it.
    #[serde(default)]
    pub nxdomain_names: Option<Vec<String>>,
}

impl Status {
    /// Every zone the server serves, the first first.
    pub fn zones(&self) -> Vec<&str> {
        if self.zones.is_empty() {
            vec![self.zone.as_str()]
        } else {
            self.zones.iter().map(String::as_str).collect()
        }
    }

    /// Claims to run and its process exists.
    pub fn is_running(&self) -> bool {
        self.state == ServerState::Running && pid_alive(self.pid)
    }
}

/// Atomic (0600, fsynced): a reader sees the old or the new status, never half of one.
pub fn write(state_dir: &Path, s: &Status) -> Result<(), FsError> {
    write_atomic(
        &state_dir.join(FILE),
        to_json(s).as_bytes(),
        &WriteOptions::private(),
    )
}

/// A status file is a few KiB (16 NXDOMAIN names, bounded messages); anything far larger is not one.
pub const MAX_BYTES: u64 = 1024 * 1024;

/// The status file, if there is one of this format that passes [`read_checked`]'s checks.
pub fn read(state_dir: &Path) -> Option<Status> {
    read_checked(state_dir).ok().flatten()
}

/// The status file of `state_dir`: `Ok(None)` when there is none, `Err` (after the path: "is a
/// symlink") when it is refused. Root reads it from state dirs other users own, so it is read as
/// generation files are ([`crate::sys::fs::read_guarded`]): a regular file of the directory's owner
/// (who runs the server), one link, not writable by others, at most [`MAX_BYTES`], in a directory
/// others cannot write; and every string in it is made inert for a terminal
/// ([`crate::output::text::shown_message`]), whoever prints it later.
pub fn read_checked(state_dir: &Path) -> Result<Option<Status>, String> {
    use std::os::unix::fs::MetadataExt;
    let path = state_dir.join(FILE);
    match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        _ => {}
    }
    let dir = std::fs::metadata(state_dir).map_err(|e| format!("cannot be read ({e})"))?;
    if dir.mode() & 0o022 != 0 {
        return Err(format!(
            "is in a directory of mode {:o} (others can write to it)",
            dir.mode() & 0o7777
        ));
    }
    let bytes = crate::sys::fs::read_guarded(
        &path,
        &crate::sys::fs::Guard {
            owner: dir.uid(),
            max_bytes: MAX_BYTES,
            forbidden_mode: 0o022,
            mode_hint: "the server writes it 0600",
        },
    )?;
    let s = serde_json::from_slice::<Status>(&bytes).map_err(|e| {
        format!(
            "is not a status file ({})",
            crate::output::text::shown(&e.to_string())
        )
    })?;
    if s.format != FORMAT {
        return Err(format!("has format {}, not {FORMAT}", s.format));
    }
    Ok(Some(inert(s)))
}

/// Every string of a status file escaped for a terminal. Identity for what a server writes (its
/// paths, times and messages hold no control characters), so `zone` and the rest still compare.
fn inert(mut s: Status) -> Status {
    use crate::output::text::shown_message as t;
    let opt = |o: &mut Option<String>| {
        if let Some(v) = o.as_mut() {
            *v = t(v);
        }
    };
    for v in [&mut s.started, &mut s.updated, &mut s.zone] {
        *v = t(v);
    }
    for v in &mut s.zones {
        *v = t(v);
    }
    for o in [
        &mut s.reverse_zone,
        &mut s.record_digest,
        &mut s.generation,
        &mut s.loaded_at,
        &mut s.loaded_from,
        &mut s.follow,
        &mut s.last_error,
    ] {
        opt(o);
    }
    for n in &mut s.secondaries {
        opt(&mut n.last_error);
    }
    if let Some(names) = s.nxdomain_names.as_mut() {
        for n in names {
            *n = t(n);
        }
    }
    s
}

/// The status file of a server that is still alive.
pub fn running(state_dir: &Path) -> Option<Status> {
    read(state_dir).filter(Status::is_running)
}

/// The address a client asks: `--server`, else what this state dir's server bound (running, or last
/// running), else `$PIGSTY_DNS_LISTEN`, else the default.
pub fn server_addr(flag: Option<SocketAddr>, state_dir: Option<&Path>) -> SocketAddr {
    flag.or_else(|| {
        state_dir
            .and_then(read)
            .and_then(|s| s.listen.first().copied())
    })
    .unwrap_or_else(crate::defaults::listen_from_env)
}

pub fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Status {
        Status {
            format: FORMAT,
            state: ServerState::Running,
            pid: std::process::id(),
            started: "t".into(),
            started_unix: 1,
            updated: "t".into(),
            listen: vec!["127.0.0.1:1".parse().unwrap()],
            zone: "pigsty.test".into(),
            zones: Vec::new(),
            reverse_zone: Some("10.10.10.in-addr.arpa".into()),
            serial: 3,
            secondaries: Vec::new(),
            transfers: Some(TransferCountersSnapshot {
                ixfr: 2,
                ..Default::default()
            }),
            record_digest: None,
            records: 0,
            generation: None,
            loaded_at: None,
            loaded_from: None,
            follow: None,
            last_error: None,
            counters: CountersSnapshot::default(),
            nxdomain_names: Some(vec!["x.pigsty.test".into()]),
        }
    }

    #[test]
    fn round_trip_keeps_the_state_word_and_the_mode() {
        use std::os::unix::fs::MetadataExt;
        let d = tempfile::tempdir().unwrap();
        write(d.path(), &sample()).unwrap();
        let raw = std::fs::read_to_string(d.path().join(FILE)).unwrap();
        assert!(raw.contains("\"state\": \"running\""), "{raw}");
        let m = std::fs::metadata(d.path().join(FILE)).unwrap();
        assert_eq!(m.mode() & 0o777, 0o600);
        let back = running(d.path()).unwrap();
        assert_eq!(back, sample());
        assert_eq!(
            server_addr(None, Some(d.path())),
            "127.0.0.1:1".parse().unwrap()
        );
    }
}
