//! TCP (RFC 7766): the accept loop with its connection cap, and one task per connection with 2-byte
//! framing, pipelining, bounded buffers and an idle deadline.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use arc_swap::ArcSwap;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinSet;
use tokio::time::{Instant, sleep, timeout, timeout_at};
use tracing::debug;

use super::framing::{Frame, Framer};
use super::{Counters, stop_signalled, stopping};
use crate::answer::{self, Limits};
use crate::transport::Transport;
use crate::zone_view::ZoneView;

const READ_CHUNK: usize = 4096;
/// Pending output is written once it reaches this much, so pipelined answers stay bounded.
const FLUSH_AT: usize = 16 * 1024;

#[derive(Debug, Clone, Copy)]
pub(super) struct Settings {
    pub idle: Duration,
    pub max_connections: usize,
    pub limits: Limits,
}

/// Over the cap, a connection is accepted and closed at once: the client learns immediately (EOF) and
/// can retry, instead of hanging in the kernel backlog until its own timeout.
pub(super) async fn accept_loop(
    listener: TcpListener,
    zone: Arc<ArcSwap<ZoneView>>,
    counters: Arc<Counters>,
    settings: Settings,
    mut stop: watch::Receiver<bool>,
) {
    let permits = Arc::new(Semaphore::new(settings.max_connections));
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            biased;
            _ = stop_signalled(&mut stop) => break,
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => match permits.clone().try_acquire_owned() {
                    Ok(permit) => {
                        counters.tcp_accepted.fetch_add(1, Ordering::Relaxed);
                        conns.spawn(connection(stream, permit, zone.clone(), counters.clone(), settings, stop.clone()));
                    }
                    Err(_) => {
                        counters.tcp_refused.fetch_add(1, Ordering::Relaxed);
                        drop(stream);
                    }
                },
                Err(e) => {
                    // EMFILE and friends: back off instead of spinning on the same error.
                    debug!(error = %e, "TCP accept failed");
                    sleep(Duration::from_millis(50)).await;
                }
            },
        }
    }
    drop(listener);
    // Connections answer what they already read and close; serve() bounds this with the grace period.
    while conns.join_next().await.is_some() {}
}

async fn write_bounded(stream: &mut TcpStream, out: &mut Vec<u8>, idle: Duration) -> bool {
    let ok = matches!(timeout(idle, stream.write_all(out)).await, Ok(Ok(())));
    out.clear();
    ok
}

/// One connection: 2-byte framing, pipelined queries answered in order, at most one pending message
/// buffered, and a deadline for the next *complete* message (so a half-sent message that stalls is cut
/// as well as an idle connection).
async fn connection(
    mut stream: TcpStream,
    _permit: OwnedSemaphorePermit,
    zone: Arc<ArcSwap<ZoneView>>,
    counters: Arc<Counters>,
    settings: Settings,
    mut stop: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let mut input = Framer::with_capacity(READ_CHUNK);
    let mut out: Vec<u8> = Vec::new();
    let mut scratch: Vec<u8> = Vec::with_capacity(512);
    let mut chunk = vec![0u8; READ_CHUNK];
    let mut deadline = Instant::now() + settings.idle;
    loop {
        let mut close = false;
        while let Some(frame) = input.next_frame() {
            let Frame::Message(msg) = frame else {
                // A zero-length message cannot be a query: close the connection.
                close = true;
                break;
            };
            let summary = {
                let view = zone.load();
                answer::answer_into(&view, msg, Transport::Tcp, &settings.limits, &mut scratch)
            };
            match summary {
                None => counters.dropped(),
                Some(s) => {
                    counters.record(&s);
                    // answer_into never returns more than 65535 bytes over TCP.
                    out.extend_from_slice(&(scratch.len() as u16).to_be_bytes());
                    out.extend_from_slice(&scratch);
                }
            }
            deadline = Instant::now() + settings.idle;
            if out.len() >= FLUSH_AT && !write_bounded(&mut stream, &mut out, settings.idle).await {
                return;
            }
        }
        input.compact();
        if !out.is_empty() && !write_bounded(&mut stream, &mut out, settings.idle).await {
            return;
        }
        if close || stopping(&stop) {
            return;
        }
        let read = tokio::select! {
            biased;
            // Shutdown: what was read is answered above; a partial message cannot be.
            _ = stop_signalled(&mut stop) => return,
            r = timeout_at(deadline, stream.read(&mut chunk)) => r,
        };
        match read {
            Ok(Ok(0)) | Ok(Err(_)) => return,
            Err(_) => {
                debug!("TCP connection idle past the timeout; closing");
                return;
            }
            Ok(Ok(n)) => {
                // Only an incomplete message stays buffered, so this never exceeds MAX_FRAME + one chunk.
                input.push(&chunk[..n]);
            }
        }
    }
}
