//! NOTIFY (RFC 1996): on every swap, each `serve --notify ADDR:PORT` secondary is told, for the
//! forward and the reverse zone, that a new serial is there, so it asks for a transfer at once instead
//! of at its next SOA refresh. The zones are notified independently (one unanswered never delays the
//! other) and a failure keeps every zone's error. Each NOTIFY is retried with back-off until it is acknowledged (a
//! NOTIFY response with our ID) or [`TRIES`] have passed; a newer swap replaces the retries of an older
//! one. It runs in its own task and only reads the live view, so it never holds up a swap or an answer.
//! With `--tsig-key` each NOTIFY is signed with the key and the answer must verify with it: a secondary
//! that takes NOTIFY only with the key (Knot `acl` with `key`, NSD `allow-notify: ADDR KEY`) follows at once.
//!
//! The swap is seen by watching the view's serial ([`POLL`]), not by a hook in the reload path.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwap;
use hickory_proto::op::{Message, MessageType, OpCode, Query, ResponseCode};
use hickory_proto::rr::{Name, RecordType};
use tokio::net::UdpSocket;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::{sleep, timeout};

use super::tsig::Key;
pub use crate::store::status_file::SecondaryStatus;
use crate::zone::view::ZoneView;

/// How often the live serial is looked at.
pub const POLL: Duration = Duration::from_millis(50);
/// Sends of one NOTIFY before giving up (RFC 1996 §3.6: retry a few times).
pub const TRIES: u32 = 5;
/// Wait for the first acknowledgement; doubled after each unanswered try (0.5 + 1 + 2 + 4 + 8 s).
pub const FIRST_WAIT: Duration = Duration::from_millis(500);

#[derive(Debug)]
pub struct Notifier {
    secondaries: Mutex<Vec<SecondaryStatus>>,
    key: Option<Key>,
}

impl Notifier {
    pub fn new(targets: &[SocketAddr], key: Option<Key>) -> Notifier {
        Notifier {
            key,
            secondaries: Mutex::new(
                targets
                    .iter()
                    .map(|a| SecondaryStatus {
                        address: *a,
                        acknowledged_serial: None,
                        pending_serial: None,
                        last_error: None,
                        failures: 0,
                    })
                    .collect(),
            ),
        }
    }

    pub fn snapshot(&self) -> Vec<SecondaryStatus> {
        self.secondaries
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default()
    }

    fn update(&self, i: usize, f: impl FnOnce(&mut SecondaryStatus)) {
        if let Ok(mut s) = self.secondaries.lock()
            && let Some(s) = s.get_mut(i)
        {
            f(s);
        }
    }

    /// Watches the live serial until `stop`, notifying every secondary of each new one (the first
    /// included: a secondary started before us learns of our serial at once).
    pub async fn run(
        self: Arc<Self>,
        zone: Arc<ArcSwap<ZoneView>>,
        mut stop: watch::Receiver<bool>,
    ) {
        let count = self.snapshot().len();
        let mut running: Vec<Option<JoinHandle<()>>> = (0..count).map(|_| None).collect();
        let mut last = 0u32;
        loop {
            let view = zone.load_full();
            if view.serial() != last && view.serial() != 0 {
                last = view.serial();
                // Every served forward zone, then the reverse zone: one NOTIFY each.
                let mut zones: Vec<String> = view
                    .zones()
                    .iter()
                    .map(|z| z.as_str().to_string())
                    .collect();
                zones.extend(view.reverse().map(|r| r.zone().to_string()));
                for (i, slot) in running.iter_mut().enumerate() {
                    if let Some(h) = slot.take() {
                        h.abort();
                    }
                    let (me, zones) = (self.clone(), zones.clone());
                    *slot = Some(tokio::spawn(async move { me.notify(i, last, zones).await }));
                }
            }
            tokio::select! {
                _ = stop.changed() => break,
                _ = sleep(POLL) => {}
            }
        }
        for h in running.into_iter().flatten() {
            h.abort();
        }
    }

    async fn notify(&self, i: usize, serial: u32, zones: Vec<String>) {
        let Some(target) = self.snapshot().get(i).map(|s| s.address) else {
            return;
        };
        self.update(i, |s| s.pending_serial = Some(serial));
        // Each zone on its own: one that goes unanswered never holds up the other's NOTIFY, and each
        // failure is kept. The set is dropped (its tasks aborted) when a newer swap aborts this one.
        let mut set = tokio::task::JoinSet::new();
        for zone in zones {
            let key = self.key.clone();
            set.spawn(async move {
                notify_one(target, &zone, key.as_ref())
                    .await
                    .map_err(|e| format!("NOTIFY {zone} serial {serial}: {e}"))
            });
        }
        let mut failures = Vec::new();
        while let Some(done) = set.join_next().await {
            match done {
                Ok(Ok(())) => {}
                Ok(Err(e)) => failures.push(e),
                Err(e) => failures.push(format!("NOTIFY serial {serial}: {e}")),
            }
        }
        failures.sort();
        let failure =
            (!failures.is_empty()).then(|| crate::output::text::bound(failures.join("; ")));
        match failure {
            None => {
                tracing::info!(secondary = %target, serial, "NOTIFY acknowledged");
                self.update(i, |s| {
                    s.acknowledged_serial = Some(serial);
                    s.pending_serial = None;
                    s.last_error = None;
                });
            }
            Some(e) => {
                tracing::warn!(secondary = %target, "{e}");
                self.update(i, |s| {
                    s.pending_serial = None;
                    s.last_error = Some(e);
                    s.failures += 1;
                });
            }
        }
    }
}

/// Sends one NOTIFY for `zone` until it is acknowledged or [`TRIES`] are used up.
async fn notify_one(target: SocketAddr, zone: &str, key: Option<&Key>) -> Result<(), String> {
    let name = Name::from_ascii(format!("{zone}.")).map_err(|e| e.to_string())?;
    let bind: SocketAddr = if target.is_ipv4() {
        ([127, 0, 0, 1], 0).into()
    } else {
        (std::net::Ipv6Addr::LOCALHOST, 0).into()
    };
    let sock = UdpSocket::bind(bind).await.map_err(|e| e.to_string())?;
    sock.connect(target).await.map_err(|e| e.to_string())?;
    let mut wait = FIRST_WAIT;
    let mut last = String::from("no answer");
    for _ in 0..TRIES {
        let id: u16 = rand_id();
        let mut m = Message::new(id, MessageType::Query, OpCode::Notify);
        m.metadata.authoritative = true;
        m.add_query(Query::query(name.clone(), RecordType::SOA));
        let mut verifier = match key {
            Some(k) => Some(k.sign_request(&mut m)?),
            None => None,
        };
        let bytes = m.to_vec().map_err(|e| e.to_string())?;
        if let Err(e) = sock.send(&bytes).await {
            last = format!("cannot send: {e}");
            sleep(wait).await;
            wait *= 2;
            continue;
        }
        let mut buf = [0u8; 1500];
        let deadline = tokio::time::Instant::now() + wait;
        // Stray datagrams (a late answer to an earlier try) are skipped until the deadline.
        loop {
            match timeout(deadline - tokio::time::Instant::now(), sock.recv(&mut buf)).await {
                Err(_) => break,
                Ok(Err(e)) => {
                    // ICMP port unreachable: nobody listens there (yet); wait out this try.
                    last = format!("cannot reach it: {e}");
                    sleep(deadline - tokio::time::Instant::now()).await;
                    break;
                }
                Ok(Ok(n)) => {
                    let Ok(r) = Message::from_vec(&buf[..n]) else {
                        continue;
                    };
                    if r.metadata.id != id
                        || r.metadata.message_type != MessageType::Response
                        || r.metadata.op_code != OpCode::Notify
                    {
                        continue;
                    }
                    // An answer that does not verify with our key could be anyone's: not an acknowledgement.
                    if let Some(v) = verifier.as_mut()
                        && let Err(e) = v.verify(&buf[..n])
                    {
                        last = format!(
                            "answered {}, not signed with the key ({e})",
                            r.metadata.response_code
                        );
                        continue;
                    }
                    if r.metadata.response_code == ResponseCode::NoError {
                        return Ok(());
                    }
                    // NOTAUTH/REFUSED: the secondary does not take NOTIFY from us; retrying may help
                    // if it is still loading its configuration.
                    last = format!("answered {}", r.metadata.response_code);
                    break;
                }
            }
        }
        wait *= 2;
    }
    Err(format!("{last} after {TRIES} tries"))
}

fn rand_id() -> u16 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
    );
    h.finish() as u16
}
