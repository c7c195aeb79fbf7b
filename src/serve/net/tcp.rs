//! TCP (RFC 7766): the accept loop, which keeps the connection cap with the shared [`Table`] (a new
//! connection at the cap evicts the one idle the longest), and one task per connection with 2-byte
//! framing, pipelining, bounded buffers and an idle deadline that shrinks when the table is more than
//! half full.

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use arc_swap::ArcSwap;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::{Instant, sleep, timeout_at};
use tracing::debug;

use super::framing::{Frame, Framer};
use super::slots::{Admission, Lease, STALLED_WRITE, Table};
use super::{Counters, stop_signalled, stopping};
use crate::dns::transport::Transport;
use crate::serve::answer::{self, Limits};
use crate::serve::transfer::{Request, Transfers};
use crate::zone::view::ZoneView;

const READ_CHUNK: usize = 4096;
/// What an evicted connection reads of what its client already sent, to answer it before closing.
const DRAIN_BYTES: usize = 64 * 1024;
/// Pending output is written once it reaches this much, so pipelined answers stay bounded.
const FLUSH_AT: usize = 16 * 1024;

#[derive(Debug, Clone, Copy)]
pub(super) struct Settings {
    /// The idle timeout while the table is at most half full (see [`Table::idle_timeout`]).
    pub idle: Duration,
    pub limits: Limits,
}

/// Every connection is accepted. At the cap it takes the slot of the connection idle the longest
/// ([`Table::admit`]); only when nothing can be evicted is it closed at once, so the client learns
/// immediately (EOF) and can retry instead of hanging in the kernel backlog until its own timeout.
pub(super) async fn accept_loop(
    listener: TcpListener,
    table: Arc<Table>,
    zone: Arc<ArcSwap<ZoneView>>,
    counters: Arc<Counters>,
    settings: Settings,
    mut stop: watch::Receiver<bool>,
    transfers: Option<Arc<Transfers>>,
) {
    fit_descriptors(table.cap());
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            biased;
            _ = stop_signalled(&mut stop) => break,
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let lease = match table.admit() {
                        Admission::Admitted(lease) => lease,
                        Admission::Evicted(lease) => {
                            debug!("TCP connection cap reached; closing the connection idle the longest");
                            counters.tcp_evicted.fetch_add(1, Ordering::Relaxed);
                            lease
                        }
                        Admission::Refused => {
                            counters.tcp_refused.fetch_add(1, Ordering::Relaxed);
                            drop(stream);
                            continue;
                        }
                    };
                    counters.tcp_accepted.fetch_add(1, Ordering::Relaxed);
                    let xfr = transfers.clone().map(|t| (t, peer.ip()));
                    conns.spawn(connection(stream, lease, zone.clone(), counters.clone(), settings, stop.clone(), xfr));
                }
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

/// Descriptors kept beyond the TCP connections: listeners, UDP sockets, the state dir, the watcher.
const SPARE_DESCRIPTORS: u64 = 256;

/// Raises the soft limit on open files (up to the hard one) so that `cap` connections can be
/// accepted: a soft limit of 1,024 (systemd's and most shells' default) would otherwise fail accepts
/// with EMFILE long before the cap. Said once in the log when the hard limit is lower.
fn fit_descriptors(cap: usize) {
    let want = cap as u64 + SPARE_DESCRIPTORS;
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit on a valid rlimit of ours.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 || lim.rlim_cur >= want {
            return;
        }
        let raised = libc::rlimit {
            rlim_cur: want.min(lim.rlim_max),
            rlim_max: lim.rlim_max,
        };
        if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 && raised.rlim_cur >= want {
            return;
        }
    }
    tracing::warn!(
        "the open-file limit ({}) is below the {cap} TCP connections allowed; raise it (ulimit -n, LimitNOFILE=)",
        lim.rlim_max
    );
}

/// Writes `out` (then clears it) within `limit`; each write that moves counts as progress, and the
/// lease says "writing" meanwhile so that the table never evicts a write that moves. Once evicted, the
/// write goes on only while it moves: each piece must be taken within [`STALLED_WRITE`].
async fn write_out(
    stream: &mut TcpStream,
    out: &mut Vec<u8>,
    lease: &Lease,
    limit: Duration,
) -> bool {
    lease.set_writing(true);
    let deadline = Instant::now() + limit;
    let mut done = 0;
    let ok = loop {
        if done == out.len() {
            break true;
        }
        let evicted = lease.is_evicted();
        let by = if evicted {
            deadline.min(Instant::now() + STALLED_WRITE)
        } else {
            deadline
        };
        let written = tokio::select! {
            biased;
            // Evicted meanwhile: go round again with the shorter bound.
            _ = lease.evicted(), if !evicted => continue,
            r = timeout_at(by, stream.write(&out[done..])) => r,
        };
        match written {
            Ok(Ok(n)) if n > 0 => {
                done += n;
                lease.touch(Instant::now());
            }
            Err(_) => {
                // A peer that stopped reading: close with a reset, not a FIN queued behind what the
                // kernel still holds for it (megabytes of a transfer on loopback), which an orphaned
                // socket would keep trying to deliver for minutes.
                reset_on_close(stream);
                break false;
            }
            _ => break false,
        }
    };
    lease.set_writing(false);
    out.clear();
    ok
}

/// `SO_LINGER` of zero: the close that follows sends a reset and drops the unsent data at once (it
/// does not block: only a non-zero linger time makes `close` wait).
fn reset_on_close(stream: &TcpStream) {
    use std::os::fd::AsRawFd;
    let off = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: a valid socket descriptor and a `linger` of the size passed.
    unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&off as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}

/// One connection: 2-byte framing, pipelined queries answered in order, at most one pending message
/// buffered, and a deadline for the next *complete* message (so a half-sent message that stalls is cut
/// as well as an idle connection). The timeout is the one in force ([`Table::idle_timeout`]) each time
/// the connection starts or resumes waiting, counted from the last complete message (or the accept).
async fn connection(
    stream: TcpStream,
    lease: Lease,
    zone: Arc<ArcSwap<ZoneView>>,
    counters: Arc<Counters>,
    settings: Settings,
    mut stop: watch::Receiver<bool>,
    transfers: Option<(Arc<Transfers>, IpAddr)>,
) {
    let _ = stream.set_nodelay(true);
    let mut c = Conn {
        stream,
        lease,
        zone,
        counters,
        settings,
        transfers,
        out: Vec::new(),
        scratch: Vec::with_capacity(512),
        last_message: Instant::now(),
    };
    let mut input = Framer::with_capacity(READ_CHUNK);
    let mut chunk = vec![0u8; READ_CHUNK];
    loop {
        let Some(close) = c.answer_buffered(&mut input).await else {
            return;
        };
        input.compact();
        if !c.flush().await {
            return;
        }
        if close || stopping(&stop) {
            return;
        }
        // Evicted while answering or writing (a transfer, a stalled write): what the client sent
        // meanwhile is still in the kernel's buffer, unread, and is answered before the close.
        if c.lease.is_evicted() {
            c.drain(&mut input, &mut chunk).await;
            return;
        }
        let deadline = c.last_message + c.idle();
        let read = tokio::select! {
            biased;
            // Shutdown: what was read is answered above; a partial message cannot be.
            _ = stop_signalled(&mut stop) => return,
            // Evicted for a new connection: what the client already sent is answered first.
            _ = c.lease.evicted() => {
                c.drain(&mut input, &mut chunk).await;
                return;
            }
            r = timeout_at(deadline, c.stream.read(&mut chunk)) => r,
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

/// One connection's state between reads.
struct Conn {
    stream: TcpStream,
    lease: Lease,
    zone: Arc<ArcSwap<ZoneView>>,
    counters: Arc<Counters>,
    settings: Settings,
    transfers: Option<(Arc<Transfers>, IpAddr)>,
    /// Answers not yet written.
    out: Vec<u8>,
    scratch: Vec<u8>,
    last_message: Instant,
}

impl Conn {
    fn idle(&self) -> Duration {
        self.lease.idle_timeout(self.settings.idle)
    }

    /// Writes what is pending; `false`: the connection must close.
    async fn flush(&mut self) -> bool {
        let idle = self.idle();
        self.out.is_empty() || write_out(&mut self.stream, &mut self.out, &self.lease, idle).await
    }

    /// Answers every complete message buffered in `input`, in order. `Some(true)`: close after
    /// writing (a zero-length message); `None`: the connection is gone.
    async fn answer_buffered(&mut self, input: &mut Framer) -> Option<bool> {
        while let Some(frame) = input.next_frame() {
            let Frame::Message(msg) = frame else {
                // A zero-length message cannot be a query: close the connection.
                return Some(true);
            };
            // A transfer request from an allowed client: answered (in order) by the transfer module.
            let view = self.zone.load();
            if let Some((xfr, peer)) = &self.transfers
                && let Some(req) = xfr.request(*peer, msg, &view, Transport::Tcp)
            {
                // Owned, as the transfer outlives this iteration (and a guard must not be held across await).
                let view = arc_swap::Guard::into_inner(view);
                let (xfr, idle) = (xfr.clone(), self.idle());
                if !self.flush().await
                    || !transfer(
                        &mut self.stream,
                        &mut self.out,
                        &self.lease,
                        idle,
                        xfr,
                        req,
                        view,
                    )
                    .await
                {
                    return None;
                }
                self.touch();
                continue;
            }
            let summary = answer::answer_into(
                &view,
                msg,
                Transport::Tcp,
                &self.settings.limits,
                &mut self.scratch,
            );
            match summary {
                None => self.counters.dropped(),
                Some(s) => {
                    self.counters.record(&s);
                    // answer_into never returns more than 65535 bytes over TCP.
                    self.out
                        .extend_from_slice(&(self.scratch.len() as u16).to_be_bytes());
                    self.out.extend_from_slice(&self.scratch);
                }
            }
            self.touch();
            if self.out.len() >= FLUSH_AT && !self.flush().await {
                return None;
            }
        }
        Some(false)
    }

    /// Before an evicted connection closes: reads what the kernel already holds for it (without
    /// waiting, at most [`DRAIN_BYTES`]) and answers every complete query in it, so a query sent before
    /// the eviction is never lost with the connection. Only a partial message is.
    async fn drain(&mut self, input: &mut Framer, chunk: &mut [u8]) {
        let mut read = 0;
        while read < DRAIN_BYTES {
            match read_now(&self.stream, chunk) {
                Ok(n) if n > 0 => {
                    input.push(&chunk[..n]);
                    read += n;
                    if self.answer_buffered(input).await.is_none() {
                        return;
                    }
                    input.compact();
                }
                _ => break,
            }
        }
        let _ = self.flush().await;
    }

    fn touch(&mut self) {
        self.last_message = Instant::now();
        self.lease.touch(self.last_message);
    }
}

/// What the kernel holds for `stream` now, read without waiting. Not tokio's `try_read`: it answers
/// WouldBlock without asking the kernel while tokio has not yet seen the socket become readable, as
/// when the eviction is noticed before the I/O driver's turn that reports a query already received.
fn read_now(stream: &TcpStream, buf: &mut [u8]) -> std::io::Result<usize> {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid socket descriptor and a buffer of the length passed.
    let n = unsafe {
        libc::recv(
            stream.as_raw_fd(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            libc::MSG_DONTWAIT,
        )
    };
    usize::try_from(n).map_err(|_| std::io::Error::last_os_error())
}

/// Zone transfers sent at once; a further one waits (its request read) for a slot.
const MAX_TRANSFERS: usize = 32;
static TRANSFER_SLOTS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(MAX_TRANSFERS);
/// `SO_SNDBUF` of a socket sending a transfer (Linux doubles it for its bookkeeping): enough to keep
/// loopback busy, far below the megabytes the kernel would otherwise queue for a client that never reads.
const TRANSFER_SNDBUF: libc::c_int = 64 * 1024;

/// Caps the kernel's send queue of a transfer's socket; a failure only leaves the default.
fn cap_send_buffer(stream: &TcpStream) {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid socket descriptor and an int of the size passed.
    unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            (&TRANSFER_SNDBUF as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// Sends one transfer, one message at a time (so a client that stops reading holds one message, and
/// is cut by the write deadline like any stalled write). The messages are built off the async threads:
/// the first one may read the state dir. `false`: the connection must close.
async fn transfer(
    stream: &mut TcpStream,
    out: &mut Vec<u8>,
    lease: &Lease,
    idle: Duration,
    xfr: Arc<Transfers>,
    req: Request,
    view: Arc<ZoneView>,
) -> bool {
    // Bounded kernel memory (risk 9): at most MAX_TRANSFERS at once, each socket's send buffer capped,
    // so clients that never read pin at most MAX_TRANSFERS × (2 × TRANSFER_SNDBUF + one message).
    // The wait is ours, not the client's idling: it lasts while the running transfers move (a stalled
    // one is cut by its write deadline), and ends if this connection is evicted.
    let permit = tokio::select! {
        p = TRANSFER_SLOTS.acquire() => p,
        _ = lease.evicted() => return false,
    };
    let Ok(_permit) = permit else {
        return false;
    };
    cap_send_buffer(stream);
    let built = tokio::task::spawn_blocking(move || xfr.respond(&req, &view)).await;
    let Ok(mut messages) = built else {
        return false;
    };
    loop {
        let (next, rest) = match tokio::task::spawn_blocking(move || {
            let next = messages
                .next_message()
                .map(|m| m.and_then(|m| m.to_vec().map_err(|e| e.to_string())));
            (next, messages)
        })
        .await
        {
            Ok(pair) => pair,
            Err(_) => return false,
        };
        messages = rest;
        let bytes = match next {
            None => return true,
            Some(Ok(b)) if b.len() <= usize::from(u16::MAX) => b,
            Some(Ok(_)) | Some(Err(_)) => {
                debug!("transfer aborted: a message could not be written");
                return false;
            }
        };
        out.extend_from_slice(&(bytes.len() as u16).to_be_bytes());
        out.extend_from_slice(&bytes);
        if !write_out(stream, out, lease, idle).await {
            return false;
        }
    }
}
