//! The UDP receive loop: one per worker thread. On Linux a batch of datagrams per system call each way
//! (`recvmmsg`, then `sendmmsg` of the answers); elsewhere a blocking receive, the answer, a blocking send.
//! Both apply the same per-datagram rules: every datagram is answered (or dropped and counted) on its own,
//! and its reply goes to its own source address.

use std::io;
use std::net::{IpAddr, UdpSocket as StdUdpSocket};
use std::time::Duration;

use arc_swap::ArcSwap;
use tokio::sync::watch;
use tracing::debug;

use super::Counters;
use crate::dns::transport::Transport;
use crate::serve::answer::{self, Limits, Summary};
use crate::serve::transfer::Transfers;
use crate::zone::view::ZoneView;

/// A receive loop wakes at least this often to see a stop signal; also bounds one blocked send.
pub(super) const WAKE: Duration = Duration::from_millis(100);

/// Runs on its own (blocking-pool) thread, off the async runtime: no readiness polling or wake-up of
/// another runtime thread; when idle, the thread sleeps in the receive and wakes every [`WAKE`] to see a
/// stop signal. The buffers are allocated once per loop.
pub(super) fn serve(
    sock: &StdUdpSocket,
    zone: &ArcSwap<ZoneView>,
    counters: &Counters,
    limits: Limits,
    stop: &watch::Receiver<bool>,
    transfers: Option<&Transfers>,
) {
    #[cfg(target_os = "linux")]
    batched::serve(sock, zone, counters, limits, stop, transfers);
    #[cfg(not(target_os = "linux"))]
    single(sock, zone, counters, limits, stop, transfers);
}

/// One datagram's answer into `out`, counted; `false` if it is dropped (not a query). The zone is loaded
/// once per datagram, so each answer sees exactly one generation.
fn answer_one(
    zone: &ArcSwap<ZoneView>,
    query: &[u8],
    limits: &Limits,
    counters: &Counters,
    out: &mut Vec<u8>,
    transfers: Option<(&Transfers, IpAddr)>,
) -> bool {
    let summary: Option<Summary> = {
        let view = zone.load();
        // IXFR over UDP (and a signed SOA query) from an allowed client: the transfer module answers
        // it (RFC 1995 §2: the current SOA); every other datagram is a query for `decide`.
        match transfers
            .and_then(|(t, peer)| Some((t, t.request(peer, query, &view, Transport::Udp)?)))
        {
            Some((t, req)) => t.respond_udp(&req, &view, out),
            None => answer::answer_into(&view, query, Transport::Udp, limits, out),
        }
    };
    match summary {
        None => {
            counters.dropped();
            false
        }
        Some(s) => {
            counters.record_answer(&s, out);
            true
        }
    }
}

/// A receive error that is not a timeout, e.g. an ICMP error reported on the socket: not fatal; pause so
/// a persistent error cannot spin.
fn receive_failed(e: &io::Error) {
    if !matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    ) {
        debug!(error = %e, "UDP receive failed");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The portable loop (macOS and every non-Linux build). Compiled on Linux for its test, so a macOS
/// build never meets code no build here compiled.
#[cfg(any(not(target_os = "linux"), test))]
fn single(
    sock: &StdUdpSocket,
    zone: &ArcSwap<ZoneView>,
    counters: &Counters,
    limits: Limits,
    stop: &watch::Receiver<bool>,
    transfers: Option<&Transfers>,
) {
    let mut buf = vec![0u8; super::MAX_FRAME];
    let mut out = Vec::with_capacity(usize::from(limits.udp_max_payload));
    while !super::stopping(stop) {
        match sock.recv_from(&mut buf) {
            Ok((n, peer)) => {
                let t = transfers.map(|t| (t, peer.ip()));
                if answer_one(zone, &buf[..n], &limits, counters, &mut out, t) {
                    // The reply leaves from this socket, so from the address the query was sent to.
                    if let Err(e) = sock.send_to(&out, peer) {
                        debug!(%peer, error = %e, "UDP send failed");
                    }
                }
            }
            Err(e) => receive_failed(&e),
        }
    }
}

#[cfg(target_os = "linux")]
mod batched {
    use std::io;
    use std::mem::{size_of, zeroed};
    use std::net::{SocketAddr, UdpSocket as StdUdpSocket};
    use std::os::fd::AsRawFd;
    use std::ptr;

    use arc_swap::ArcSwap;
    use tokio::sync::watch;
    use tracing::debug;

    use super::super::{Counters, MAX_FRAME, stopping};
    use super::{answer_one, receive_failed};
    use crate::serve::answer::Limits;
    use crate::serve::transfer::Transfers;
    use crate::zone::view::ZoneView;

    /// Datagrams per `recvmmsg`. Under load a batch fills and the two system calls are shared by that
    /// many queries; when idle the receive returns after the first datagram (`MSG_WAITFORONE`), so a
    /// lone query waits for nothing. Each slot can hold the largest datagram, but a page of it becomes
    /// resident only when a datagram that long arrives.
    const BATCH: usize = 32;

    /// Receives up to [`BATCH`] datagrams, answers each, sends the answers in one `sendmmsg` (per
    /// datagram: to its own source, from this socket, so from the address the query was sent to).
    /// (Over 80 lines: the `mmsghdr` arrays and the buffers they point into are set up and used in one
    /// scope, so the pointers never outlive what they point at.)
    pub(super) fn serve(
        sock: &StdUdpSocket,
        zone: &ArcSwap<ZoneView>,
        counters: &Counters,
        limits: Limits,
        stop: &watch::Receiver<bool>,
        transfers: Option<&Transfers>,
    ) {
        let fd = sock.as_raw_fd();
        // vec![0; n] is a zeroed allocation: fresh pages, not written here.
        let mut bufs = vec![0u8; BATCH * MAX_FRAME];
        let mut outs: Vec<Vec<u8>> = (0..BATCH)
            .map(|_| Vec::with_capacity(usize::from(limits.udp_max_payload)))
            .collect();
        // SAFETY (all of this function's unsafe): sockaddr_storage, iovec and mmsghdr are plain C
        // structs for which all-zero is valid; every pointer stored in them points into `bufs`,
        // `peers`, `outs` or `send_iov`, locals that outlive every system call using them and are not
        // moved or resized while the headers point at them (`outs[i]` is only written between calls,
        // and its pointer is taken afresh after).
        let mut peers: [libc::sockaddr_storage; BATCH] = unsafe { zeroed() };
        let mut recv_iov: [libc::iovec; BATCH] = unsafe { zeroed() };
        let mut recv: [libc::mmsghdr; BATCH] = unsafe { zeroed() };
        let mut send_iov: [libc::iovec; BATCH] = unsafe { zeroed() };
        let mut send: [libc::mmsghdr; BATCH] = unsafe { zeroed() };
        let base = bufs.as_mut_ptr();
        for i in 0..BATCH {
            recv_iov[i] = libc::iovec {
                iov_base: unsafe { base.add(i * MAX_FRAME) }.cast(),
                iov_len: MAX_FRAME,
            };
            recv[i].msg_hdr.msg_iov = &mut recv_iov[i];
            recv[i].msg_hdr.msg_iovlen = 1;
        }
        while !stopping(stop) {
            for (h, peer) in recv.iter_mut().zip(peers.iter_mut()) {
                h.msg_hdr.msg_name = ptr::from_mut(peer).cast();
                h.msg_hdr.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
                h.msg_hdr.msg_flags = 0;
                h.msg_len = 0;
            }
            // Blocks (up to the socket's read timeout, WAKE) for the first datagram, then takes what
            // is already queued without waiting.
            let got = unsafe {
                libc::recvmmsg(
                    fd,
                    recv.as_mut_ptr(),
                    BATCH as libc::c_uint,
                    libc::MSG_WAITFORONE,
                    ptr::null_mut(),
                )
            };
            let got = match usize::try_from(got) {
                Ok(n) => n,
                Err(_) => {
                    receive_failed(&io::Error::last_os_error());
                    continue;
                }
            };
            let mut answers = 0;
            for i in 0..got {
                // A slot holds MAX_FRAME bytes, more than any UDP payload, so no datagram is cut short.
                let n = recv[i].msg_len as usize;
                let query = &bufs[i * MAX_FRAME..i * MAX_FRAME + n];
                // The source address is decoded only when transfers are configured (the ACL needs it).
                let t = transfers.and_then(|t| Some((t, addr_of(&peers[i])?.ip())));
                if answer_one(zone, query, &limits, counters, &mut outs[i], t) {
                    send_iov[answers] = libc::iovec {
                        iov_base: outs[i].as_mut_ptr().cast(),
                        iov_len: outs[i].len(),
                    };
                    let h = &mut send[answers].msg_hdr;
                    h.msg_name = ptr::from_mut(&mut peers[i]).cast();
                    h.msg_namelen = recv[i].msg_hdr.msg_namelen;
                    h.msg_iov = &mut send_iov[answers];
                    h.msg_iovlen = 1;
                    answers += 1;
                }
            }
            send_all(fd, &mut send[..answers], &peers);
        }
    }

    /// Sends every prepared answer. `sendmmsg` stops at the first failure: what it reports as sent is
    /// done, and a datagram that fails on its own (a call that sends nothing) is logged and given up, as
    /// one failed `send_to` is, so one bad destination cannot hold back the others.
    fn send_all(fd: libc::c_int, msgs: &mut [libc::mmsghdr], peers: &[libc::sockaddr_storage]) {
        let mut at = 0;
        while at < msgs.len() {
            let rest = &mut msgs[at..];
            // SAFETY: see serve(); the headers point at live buffers and addresses.
            let sent =
                unsafe { libc::sendmmsg(fd, rest.as_mut_ptr(), rest.len() as libc::c_uint, 0) };
            match usize::try_from(sent) {
                Ok(n) if n > 0 => at += n,
                _ => {
                    let e = io::Error::last_os_error();
                    if e.kind() == io::ErrorKind::Interrupted {
                        continue;
                    }
                    let peer = peer_of(&msgs[at], peers);
                    debug!(?peer, error = %e, "UDP send failed");
                    at += 1;
                }
            }
        }
    }

    /// The destination of a prepared answer, for the log.
    fn peer_of(m: &libc::mmsghdr, peers: &[libc::sockaddr_storage]) -> Option<SocketAddr> {
        let p = m
            .msg_hdr
            .msg_name
            .cast::<libc::sockaddr_storage>()
            .cast_const();
        addr_of(peers.iter().find(|s| ptr::eq(*s, p))?)
    }

    /// The socket address the kernel wrote into `s`.
    fn addr_of(s: &libc::sockaddr_storage) -> Option<SocketAddr> {
        // SAFETY: the family says which struct the kernel wrote into the storage.
        match i32::from(s.ss_family) {
            libc::AF_INET => {
                let a = unsafe { &*ptr::from_ref(s).cast::<libc::sockaddr_in>() };
                Some(SocketAddr::from((
                    u32::from_be(a.sin_addr.s_addr).to_be_bytes(),
                    u16::from_be(a.sin_port),
                )))
            }
            libc::AF_INET6 => {
                let a = unsafe { &*ptr::from_ref(s).cast::<libc::sockaddr_in6>() };
                Some(SocketAddr::from((
                    a.sin6_addr.s6_addr,
                    u16::from_be(a.sin6_port),
                )))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dns::name::Zone;
    use crate::dns::probe;

    /// The loop macOS runs, serving real queries over loopback: the apex SOA authoritatively, a name
    /// it does not have as no address, each answered to its own source and counted.
    #[test]
    fn the_portable_loop_serves_real_queries() {
        let sock = StdUdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(WAKE)).unwrap();
        let addr = sock.local_addr().unwrap();
        let zone = Zone::parse("pigsty.test").unwrap();
        let view = ArcSwap::from_pointee(ZoneView::empty(zone.clone()).unwrap());
        let counters = Counters::new();
        let (stop, stopped) = watch::channel(false);
        let wait = Duration::from_secs(2);
        std::thread::scope(|s| {
            let looping = s.spawn(|| {
                single(&sock, &view, &counters, Limits::default(), &stopped, None);
            });
            let soa = probe::block_on(probe::soa(addr, Transport::Udp, &zone, wait))
                .unwrap()
                .unwrap();
            assert!(soa.authoritative);
            assert_eq!(soa.serial, 0);
            for _ in 0..3 {
                let a = probe::block_on(probe::a(addr, Transport::Udp, "meta.pigsty.test", wait))
                    .unwrap();
                assert_eq!(a.unwrap(), None);
            }
            stop.send(true).unwrap();
            looping.join().unwrap();
        });
        let c = counters.snapshot();
        assert_eq!((c.noerror, c.nxdomain), (1, 3), "{c:?}");
    }
}
