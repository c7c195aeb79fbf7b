//! The UDP receive loop: one per worker thread, a blocking receive, the answer, a blocking send.

use std::io;
use std::net::UdpSocket as StdUdpSocket;
use std::time::Duration;

use arc_swap::ArcSwap;
use tokio::sync::watch;
use tracing::debug;

use super::{Counters, MAX_FRAME, stopping};
use crate::answer::{self, Limits};
use crate::transfer::Transfers;
use crate::transport::Transport;
use crate::zone_view::ZoneView;

/// A receive loop wakes at least this often to see a stop signal; also bounds one blocked send.
pub(super) const WAKE: Duration = Duration::from_millis(100);

/// Runs on its own (blocking-pool) thread. Off the async runtime, a query costs two system calls and no
/// readiness polling or wake-up of another runtime thread; when idle, the thread sleeps in the receive
/// and wakes every [`WAKE`] to see a stop signal. The buffers are allocated once per loop.
pub(super) fn serve(
    sock: &StdUdpSocket,
    zone: &ArcSwap<ZoneView>,
    counters: &Counters,
    limits: Limits,
    stop: &watch::Receiver<bool>,
    transfers: Option<&Transfers>,
) {
    let mut buf = vec![0u8; MAX_FRAME];
    let mut out = Vec::with_capacity(usize::from(limits.udp_max_payload));
    while !stopping(stop) {
        match sock.recv_from(&mut buf) {
            Ok((n, peer)) => {
                let summary = {
                    let view = zone.load();
                    // IXFR over UDP from an allowed client: the current SOA (RFC 1995 §2).
                    match transfers.and_then(|t| {
                        Some((t, t.request(peer.ip(), &buf[..n], &view, Transport::Udp)?))
                    }) {
                        Some((t, req)) => t.respond_udp(&req, &view, &mut out),
                        None => {
                            answer::answer_into(&view, &buf[..n], Transport::Udp, &limits, &mut out)
                        }
                    }
                };
                match summary {
                    None => counters.dropped(),
                    Some(s) => {
                        counters.record(&s);
                        // The reply leaves from this socket, so from the address the query was sent to.
                        if let Err(e) = sock.send_to(&out, peer) {
                            debug!(%peer, error = %e, "UDP send failed");
                        }
                    }
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(e) => {
                // E.g. an ICMP error reported on the socket: not fatal; pause so a persistent error cannot spin.
                debug!(error = %e, "UDP receive failed");
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
}
