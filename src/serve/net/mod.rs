//! Sockets and the serving loops: UDP and TCP on loopback, around the pure [`crate::serve::answer`] core.
//!
//! The loops are our own rather than `hickory_server::Server`, which (in 0.26.3) has no TCP connection
//! cap, aborts in-flight work at shutdown and leaves junk bytes after a rolled-back record in truncated
//! UDP replies. Binding ([`bind`]) is separate from serving ([`Bound::serve`]) so the CLI can report
//! bind errors and tests can bind port 0.

mod bind;
mod counters;
pub mod framing;
mod holder;
mod slots;
mod tcp;
mod udp;

pub use bind::{BindError, bind};
pub use counters::Counters;

use std::future::Future;
use std::io;
use std::net::{SocketAddr, UdpSocket as StdUdpSocket};
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::timeout;
use tracing::warn;

use crate::defaults;
use crate::serve::answer::Limits;
use crate::serve::transfer::Transfers;
use crate::zone::view::ZoneView;

/// Largest DNS message plus its 2-byte length: bounds a UDP receive and one pending TCP message.
const MAX_FRAME: usize = 2 + 65_535;

#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Loopback addresses only; port 0 picks a free port (the same for UDP and TCP).
    pub listen: Vec<SocketAddr>,
    /// Longest wait for the next complete message on a TCP connection (and for a write to drain);
    /// halved while more than half of `tcp_max_connections` are open.
    pub tcp_idle_timeout: Duration,
    /// Concurrent TCP connections, across all listen addresses. At the cap a new connection takes the
    /// place of the one idle the longest (one writing answers only if that write has stalled); only if
    /// none can be evicted is it accepted and closed at once.
    pub tcp_max_connections: usize,
    pub limits: Limits,
    /// After shutdown is signalled, how long already-read queries may take to be answered.
    pub shutdown_grace: Duration,
    /// Receive loops per UDP socket (they share the socket, so replies leave from the same address).
    pub udp_workers: usize,
    /// Zone transfers for `--allow-transfer` clients; `None`: every AXFR/IXFR goes to the query rules.
    pub transfers: Option<Arc<Transfers>>,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            listen: vec![defaults::LISTEN],
            tcp_idle_timeout: Duration::from_secs(defaults::TCP_IDLE_TIMEOUT_SECS),
            tcp_max_connections: defaults::TCP_MAX_CONNECTIONS,
            limits: Limits::default(),
            shutdown_grace: Duration::from_secs(1),
            udp_workers: std::thread::available_parallelism().map_or(1, |n| n.get().min(4)),
            transfers: None,
        }
    }
}

/// Sockets bound and listening, not yet served.
#[derive(Debug)]
pub struct Bound {
    udp: Vec<Arc<StdUdpSocket>>,
    tcp: Vec<TcpListener>,
    addrs: Vec<SocketAddr>,
    cfg: ServerConfig,
}

impl Bound {
    /// The addresses actually bound, one per configured address, in order (UDP and TCP share each).
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.addrs.clone()
    }

    /// Serves until `shutdown` completes, then stops receiving and accepting, lets already-read queries
    /// be answered for up to `shutdown_grace`, and returns. Each query loads the zone once, so it sees
    /// exactly one generation; swap generations in with `ArcSwap::store`.
    pub async fn serve(
        self,
        zone: Arc<ArcSwap<ZoneView>>,
        counters: Arc<Counters>,
        shutdown: impl Future,
    ) -> io::Result<()> {
        let (stop_tx, stop_rx) = watch::channel(false);
        let mut tasks = JoinSet::new();
        let limits = self.cfg.limits;
        for sock in &self.udp {
            for _ in 0..self.cfg.udp_workers.max(1) {
                let (sock, zone, counters, stop, transfers) = (
                    sock.clone(),
                    zone.clone(),
                    counters.clone(),
                    stop_rx.clone(),
                    self.cfg.transfers.clone(),
                );
                tasks.spawn_blocking(move || {
                    udp::serve(&sock, &zone, &counters, limits, &stop, transfers.as_deref())
                });
            }
        }
        let settings = tcp::Settings {
            idle: self.cfg.tcp_idle_timeout,
            limits,
        };
        // One table for every listener: the cap counts all TCP connections.
        let table = Arc::new(slots::Table::new(self.cfg.tcp_max_connections));
        for listener in self.tcp {
            tasks.spawn(tcp::accept_loop(
                listener,
                table.clone(),
                zone.clone(),
                counters.clone(),
                settings,
                stop_rx.clone(),
                self.cfg.transfers.clone(),
            ));
        }
        drop(stop_rx);

        let result = tokio::select! {
            _ = shutdown => Ok(()),
            // The loops only end when told to; one ending early is a bug (or a panic) worth reporting.
            Some(ended) = tasks.join_next() => Err(io::Error::other(match ended {
                Ok(()) => "a serving loop stopped unexpectedly".to_string(),
                Err(e) => format!("a serving loop failed: {e}"),
            })),
        };
        let _ = stop_tx.send(true);
        let drained = timeout(self.cfg.shutdown_grace, async {
            while tasks.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            warn!(grace = ?self.cfg.shutdown_grace, "shutdown grace elapsed; closing the remaining connections");
        }
        tasks.shutdown().await;
        result
    }
}

/// A stop signal that has been sent (or whose sender is gone).
fn stopping(stop: &watch::Receiver<bool>) -> bool {
    *stop.borrow() || stop.has_changed().is_err()
}

async fn stop_signalled(stop: &mut watch::Receiver<bool>) {
    // An error means the sender is gone: stop as well.
    let _ = stop.wait_for(|s| *s).await;
}
