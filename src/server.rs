//! Sockets and the serving loops: UDP and TCP on loopback, around the pure [`crate::answer`] core.
//!
//! The loops are our own rather than `hickory_server::Server`, which has no TCP connection cap, aborts
//! in-flight work at shutdown and carries the 0.26.3 truncation bug (HICKORY.md §1.3, §1.6, §1.7).
//! Binding is separate from serving so the CLI can report bind errors and tests can bind port 0.

use std::fmt;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr, UdpSocket as StdUdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use arc_swap::ArcSwap;
use hickory_proto::op::ResponseCode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinSet;
use tokio::time::{Instant, sleep, timeout, timeout_at};
use tracing::{debug, warn};

use crate::answer::{self, Limits, Outcome, Transport};
use crate::generation::ZoneView;

/// The default listen address (DESIGN.md "Ports").
pub const DEFAULT_LISTEN: &str = "127.0.0.1:5353";
/// How often port 0 is retried when the kernel's UDP port is taken for TCP.
const PORT_ZERO_ATTEMPTS: usize = 16;
const TCP_BACKLOG: u32 = 1024;
/// Largest DNS message plus its 2-byte length: bounds a UDP receive and one pending TCP message.
const MAX_FRAME: usize = 2 + 65_535;
const TCP_READ_CHUNK: usize = 4096;
/// Pending TCP output is written once it reaches this much, so pipelined answers stay bounded.
const TCP_FLUSH_AT: usize = 16 * 1024;
/// A UDP receive loop wakes at least this often to see a stop signal; also bounds one blocked send.
const UDP_WAKE: Duration = Duration::from_millis(100);

#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Loopback addresses only; port 0 picks a free port (the same for UDP and TCP).
    pub listen: Vec<SocketAddr>,
    /// Longest wait for the next complete message on a TCP connection (and for a write to drain).
    pub tcp_idle_timeout: Duration,
    /// Concurrent TCP connections; a connection over the cap is accepted and closed at once.
    pub tcp_max_connections: usize,
    pub limits: Limits,
    /// After shutdown is signalled, how long already-read queries may take to be answered.
    pub shutdown_grace: Duration,
    /// Receive loops per UDP socket (they share the socket, so replies leave from the same address).
    pub udp_workers: usize,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            listen: vec![SocketAddr::from(([127, 0, 0, 1], 5353))],
            tcp_idle_timeout: Duration::from_secs(10),
            tcp_max_connections: 128,
            limits: Limits::default(),
            shutdown_grace: Duration::from_secs(1),
            udp_workers: std::thread::available_parallelism().map_or(1, |n| n.get().min(4)),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    Udp,
    Tcp,
}

impl fmt::Display for Proto {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Proto::Udp => "UDP",
            Proto::Tcp => "TCP",
        })
    }
}

#[derive(Debug)]
pub enum BindError {
    NoAddresses,
    NotLoopback {
        addr: SocketAddr,
    },
    /// `holder` names the process holding the port when it can be found (Linux only).
    InUse {
        addr: SocketAddr,
        proto: Proto,
        holder: Option<String>,
    },
    Permission {
        addr: SocketAddr,
        proto: Proto,
        source: io::Error,
    },
    Other {
        addr: SocketAddr,
        proto: Proto,
        source: io::Error,
    },
}

impl BindError {
    /// What to do about it, for the CLI's `next:` line.
    pub fn hint(&self) -> String {
        match self {
            BindError::NoAddresses => {
                "give at least one address with --listen, e.g. 127.0.0.1:5353".into()
            }
            BindError::NotLoopback { .. } => {
                "listen on 127.0.0.1 (or another 127.0.0.0/8 address) or ::1".into()
            }
            BindError::InUse { addr, .. } if addr.port() == 5353 => format!(
                "port 5353 is also the mDNS port — Avahi, systemd-resolved's mDNS, or on macOS mDNSResponder may \
                 hold it — try `--listen {}`",
                SocketAddr::new(addr.ip(), 5354)
            ),
            BindError::InUse { addr, .. } => {
                format!(
                    "stop the other server or try `--listen {}`",
                    SocketAddr::new(addr.ip(), addr.port().wrapping_add(1))
                )
            }
            BindError::Permission { addr, .. } if addr.port() < 1024 => {
                "ports below 1024 need privileges; use an unprivileged port such as 5353 or 5354"
                    .into()
            }
            BindError::Permission { .. } => {
                "check that no sandbox or security policy forbids binding this address".into()
            }
            BindError::Other { .. } => "check the address given with --listen".into(),
        }
    }
}

impl fmt::Display for BindError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BindError::NoAddresses => write!(f, "no listen address given"),
            BindError::NotLoopback { addr } => {
                write!(
                    f,
                    "{addr} is not a loopback address; this server is for the local machine only"
                )
            }
            BindError::InUse {
                addr,
                proto,
                holder: Some(h),
            } => write!(f, "{addr} ({proto}) is already in use by {h}"),
            BindError::InUse {
                addr,
                proto,
                holder: None,
            } => write!(f, "{addr} ({proto}) is already in use"),
            BindError::Permission {
                addr,
                proto,
                source,
            } => {
                write!(f, "no permission to bind {addr} ({proto}): {source}")
            }
            BindError::Other {
                addr,
                proto,
                source,
            } => write!(f, "cannot bind {addr} ({proto}): {source}"),
        }
    }
}

impl std::error::Error for BindError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BindError::Permission { source, .. } | BindError::Other { source, .. } => Some(source),
            _ => None,
        }
    }
}

fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

fn classify(addr: SocketAddr, proto: Proto, e: io::Error) -> BindError {
    match e.kind() {
        io::ErrorKind::AddrInUse => BindError::InUse {
            addr,
            proto,
            holder: holder::find(proto, addr.port()),
        },
        io::ErrorKind::PermissionDenied => BindError::Permission {
            addr,
            proto,
            source: e,
        },
        _ => BindError::Other {
            addr,
            proto,
            source: e,
        },
    }
}

/// No SO_REUSEADDR, no SO_REUSEPORT: nobody else can bind beside us (DESIGN.md "Ports").
/// A blocking socket with timeouts: each UDP receive loop runs on its own thread (see [`udp_loop`]).
fn bind_udp(addr: SocketAddr) -> Result<StdUdpSocket, BindError> {
    let sock = StdUdpSocket::bind(addr).map_err(|e| classify(addr, Proto::Udp, e))?;
    sock.set_read_timeout(Some(UDP_WAKE))
        .and_then(|()| sock.set_write_timeout(Some(UDP_WAKE)))
        .map_err(|e| classify(addr, Proto::Udp, e))?;
    Ok(sock)
}

/// SO_REUSEADDR only, so a restart is not blocked by TIME_WAIT.
fn bind_tcp(addr: SocketAddr) -> io::Result<TcpListener> {
    let sock = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    sock.set_reuseaddr(true)?;
    sock.bind(addr)?;
    sock.listen(TCP_BACKLOG)
}

fn bind_pair(addr: SocketAddr) -> Result<(StdUdpSocket, TcpListener, SocketAddr), BindError> {
    if addr.port() != 0 {
        let udp = bind_udp(addr)?;
        let tcp = bind_tcp(addr).map_err(|e| classify(addr, Proto::Tcp, e))?;
        return Ok((udp, tcp, addr));
    }
    // Port 0: let the kernel pick a UDP port, then take the same port for TCP; retry if TCP has it.
    let mut last = None;
    for _ in 0..PORT_ZERO_ATTEMPTS {
        let udp = bind_udp(addr)?;
        let actual = udp
            .local_addr()
            .map_err(|e| classify(addr, Proto::Udp, e))?;
        match bind_tcp(actual) {
            Ok(tcp) => return Ok((udp, tcp, actual)),
            Err(e) if e.kind() == io::ErrorKind::AddrInUse => last = Some(actual),
            Err(e) => return Err(classify(actual, Proto::Tcp, e)),
        }
    }
    Err(BindError::InUse {
        addr: last.unwrap_or(addr),
        proto: Proto::Tcp,
        holder: None,
    })
}

/// Binds every configured address (UDP and TCP on the same port). Must be called within a Tokio runtime:
/// the sockets are registered with its reactor, and the TCP listener is listening when this returns.
pub fn bind(cfg: &ServerConfig) -> Result<Bound, BindError> {
    if cfg.listen.is_empty() {
        return Err(BindError::NoAddresses);
    }
    if let Some(&addr) = cfg.listen.iter().find(|a| !is_loopback(a.ip())) {
        return Err(BindError::NotLoopback { addr });
    }
    let mut bound = Bound {
        udp: Vec::new(),
        tcp: Vec::new(),
        addrs: Vec::new(),
        cfg: cfg.clone(),
    };
    for &addr in &cfg.listen {
        let (udp, tcp, actual) = bind_pair(addr)?;
        bound.udp.push(Arc::new(udp));
        bound.tcp.push(tcp);
        bound.addrs.push(actual);
    }
    Ok(bound)
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
                let (sock, zone, counters, stop) = (
                    sock.clone(),
                    zone.clone(),
                    counters.clone(),
                    stop_rx.clone(),
                );
                tasks.spawn_blocking(move || udp_loop(&sock, &zone, &counters, limits, &stop));
            }
        }
        let tcp = TcpSettings {
            idle: self.cfg.tcp_idle_timeout,
            max_connections: self.cfg.tcp_max_connections,
            limits,
        };
        for listener in self.tcp {
            tasks.spawn(tcp_accept_loop(
                listener,
                zone.clone(),
                counters.clone(),
                tcp,
                stop_rx.clone(),
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

/// One UDP receive loop on its own (blocking-pool) thread: a blocking receive, the answer, a blocking
/// send. Off the async runtime, a query costs two system calls and no readiness polling or wake-up of
/// another runtime thread; when idle, the thread sleeps in the receive and wakes every [`UDP_WAKE`] to
/// see a stop signal.
fn udp_loop(
    sock: &StdUdpSocket,
    zone: &ArcSwap<ZoneView>,
    counters: &Counters,
    limits: Limits,
    stop: &watch::Receiver<bool>,
) {
    let mut buf = vec![0u8; MAX_FRAME];
    let mut out = Vec::with_capacity(usize::from(limits.udp_max_payload));
    while !stopping(stop) {
        match sock.recv_from(&mut buf) {
            Ok((n, peer)) => {
                let outcome = {
                    let view = zone.load();
                    answer::answer_into(&view, &buf[..n], Transport::Udp, &limits, &mut out)
                };
                match outcome {
                    None => counters.dropped(),
                    Some(o) => {
                        counters.record(&o);
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

#[derive(Debug, Clone, Copy)]
struct TcpSettings {
    idle: Duration,
    max_connections: usize,
    limits: Limits,
}

/// Over the cap, a connection is accepted and closed at once: the client learns immediately (EOF) and
/// can retry, instead of hanging in the kernel backlog until its own timeout.
async fn tcp_accept_loop(
    listener: TcpListener,
    zone: Arc<ArcSwap<ZoneView>>,
    counters: Arc<Counters>,
    settings: TcpSettings,
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
                        conns.spawn(tcp_conn(stream, permit, zone.clone(), counters.clone(), settings, stop.clone()));
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

/// One RFC 7766 connection: 2-byte framing, pipelined queries answered in order, at most one pending
/// message buffered, and a deadline for the next *complete* message (so a half-sent message that stalls
/// is cut as well as an idle connection).
async fn tcp_conn(
    mut stream: TcpStream,
    _permit: OwnedSemaphorePermit,
    zone: Arc<ArcSwap<ZoneView>>,
    counters: Arc<Counters>,
    settings: TcpSettings,
    mut stop: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let mut input: Vec<u8> = Vec::with_capacity(TCP_READ_CHUNK);
    let mut out: Vec<u8> = Vec::new();
    let mut scratch: Vec<u8> = Vec::with_capacity(512);
    let mut chunk = vec![0u8; TCP_READ_CHUNK];
    let mut deadline = Instant::now() + settings.idle;
    loop {
        let mut consumed = 0;
        let mut close = false;
        while let Some(len) = input
            .get(consumed..consumed + 2)
            .map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])))
        {
            if len == 0 {
                // A zero-length message cannot be a query: close the connection.
                close = true;
                break;
            }
            let Some(msg) = input.get(consumed + 2..consumed + 2 + len) else {
                break;
            };
            let outcome = {
                let view = zone.load();
                answer::answer_into(&view, msg, Transport::Tcp, &settings.limits, &mut scratch)
            };
            match outcome {
                None => counters.dropped(),
                Some(o) => {
                    counters.record(&o);
                    // answer_into never returns more than 65535 bytes over TCP.
                    out.extend_from_slice(&(scratch.len() as u16).to_be_bytes());
                    out.extend_from_slice(&scratch);
                }
            }
            consumed += 2 + len;
            deadline = Instant::now() + settings.idle;
            if out.len() >= TCP_FLUSH_AT
                && !write_bounded(&mut stream, &mut out, settings.idle).await
            {
                return;
            }
        }
        input.drain(..consumed);
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
                input.extend_from_slice(&chunk[..n]);
            }
        }
    }
}

/// Answer counters for the status file.
#[derive(Debug, Default)]
pub struct Counters {
    pub noerror: AtomicU64,
    pub nxdomain: AtomicU64,
    pub refused: AtomicU64,
    pub formerr: AtomicU64,
    pub notimp: AtomicU64,
    pub servfail: AtomicU64,
    pub badvers: AtomicU64,
    pub other: AtomicU64,
    /// Packets not answered at all (too short, or QR=1).
    pub dropped: AtomicU64,
    /// UDP answers sent with TC=1.
    pub truncated: AtomicU64,
    pub tcp_accepted: AtomicU64,
    /// TCP connections closed at once because the connection cap was reached.
    pub tcp_refused: AtomicU64,
}

pub use crate::status_file::CountersSnapshot;

impl Counters {
    pub fn new() -> Counters {
        Counters::default()
    }

    pub fn record(&self, o: &Outcome) {
        let c = match o.rcode {
            ResponseCode::NoError => &self.noerror,
            ResponseCode::NXDomain => &self.nxdomain,
            ResponseCode::Refused => &self.refused,
            ResponseCode::FormErr => &self.formerr,
            ResponseCode::NotImp => &self.notimp,
            ResponseCode::ServFail => &self.servfail,
            ResponseCode::BADVERS => &self.badvers,
            _ => &self.other,
        };
        c.fetch_add(1, Ordering::Relaxed);
        if o.truncated {
            self.truncated.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn dropped(&self) {
        self.dropped.fetch_add(1, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> CountersSnapshot {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        CountersSnapshot {
            noerror: g(&self.noerror),
            nxdomain: g(&self.nxdomain),
            refused: g(&self.refused),
            formerr: g(&self.formerr),
            notimp: g(&self.notimp),
            servfail: g(&self.servfail),
            badvers: g(&self.badvers),
            other: g(&self.other),
            dropped: g(&self.dropped),
            truncated: g(&self.truncated),
            tcp_accepted: g(&self.tcp_accepted),
            tcp_refused: g(&self.tcp_refused),
        }
    }
}

/// Who holds a port, for the bind error. Linux: /proc/net/{udp,tcp}[6] gives the socket inode, and
/// /proc/<pid>/fd links name the process (only our own processes are visible without privileges).
mod holder {
    use super::Proto;

    #[cfg(target_os = "linux")]
    pub fn find(proto: Proto, port: u16) -> Option<String> {
        let tables: &[&str] = match proto {
            Proto::Udp => &["/proc/net/udp", "/proc/net/udp6"],
            Proto::Tcp => &["/proc/net/tcp", "/proc/net/tcp6"],
        };
        let mut sockets = Vec::new();
        for table in tables {
            let Ok(text) = std::fs::read_to_string(table) else {
                continue;
            };
            for line in text.lines().skip(1) {
                let f: Vec<&str> = line.split_whitespace().collect();
                let (Some(local), Some(state), Some(uid), Some(inode)) =
                    (f.get(1), f.get(3), f.get(7), f.get(9))
                else {
                    continue;
                };
                let Some(p) = local
                    .rsplit(':')
                    .next()
                    .and_then(|h| u16::from_str_radix(h, 16).ok())
                else {
                    continue;
                };
                // TCP: only listeners (state 0A) hold the port.
                if p != port || (proto == Proto::Tcp && *state != "0A") {
                    continue;
                }
                sockets.push((uid.to_string(), format!("socket:[{inode}]")));
            }
        }
        let (uid, _) = sockets.first()?.clone();
        if let Some(found) = process_with_socket(&sockets) {
            return Some(found);
        }
        Some(format!("a process of uid {uid} (not visible to this user)"))
    }

    #[cfg(target_os = "linux")]
    fn process_with_socket(sockets: &[(String, String)]) -> Option<String> {
        // Bounded by the number of processes and their descriptors; only runs after a failed bind.
        for entry in std::fs::read_dir("/proc").ok()?.flatten() {
            let pid = entry.file_name();
            let Some(pid) = pid
                .to_str()
                .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
            else {
                continue;
            };
            let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
                continue;
            };
            for fd in fds.flatten() {
                let Ok(link) = std::fs::read_link(fd.path()) else {
                    continue;
                };
                if sockets.iter().any(|(_, s)| link.as_os_str() == s.as_str()) {
                    let comm =
                        std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
                    return Some(format!("{} (pid {pid})", comm.trim()));
                }
            }
        }
        None
    }

    #[cfg(not(target_os = "linux"))]
    pub fn find(_proto: Proto, _port: u16) -> Option<String> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn refuses_non_loopback_and_empty_lists() {
        for addr in ["0.0.0.0:0", "10.0.0.1:5353", "[::]:0", "[2001:db8::1]:53"] {
            let cfg = ServerConfig {
                listen: vec![addr.parse().unwrap()],
                ..ServerConfig::default()
            };
            let e = bind(&cfg).unwrap_err();
            assert!(matches!(e, BindError::NotLoopback { .. }), "{addr}: {e}");
            assert!(e.to_string().contains("for the local machine only"), "{e}");
        }
        let e = bind(&ServerConfig {
            listen: vec![],
            ..ServerConfig::default()
        })
        .unwrap_err();
        assert!(matches!(e, BindError::NoAddresses));
    }

    #[tokio::test]
    async fn port_zero_binds_udp_and_tcp_on_the_same_port() {
        let cfg = ServerConfig {
            listen: vec!["127.0.0.1:0".parse().unwrap()],
            ..ServerConfig::default()
        };
        let b = bind(&cfg).unwrap();
        let addr = b.local_addrs()[0];
        assert_ne!(addr.port(), 0);
        assert_eq!(b.udp[0].local_addr().unwrap(), addr);
        assert_eq!(b.tcp[0].local_addr().unwrap(), addr);
    }

    #[tokio::test]
    async fn address_in_use_is_reported_with_a_hint() {
        let first = bind(&ServerConfig {
            listen: vec!["127.0.0.1:0".parse().unwrap()],
            ..ServerConfig::default()
        })
        .unwrap();
        let taken = first.local_addrs()[0];
        let e = bind(&ServerConfig {
            listen: vec![taken],
            ..ServerConfig::default()
        })
        .unwrap_err();
        let BindError::InUse {
            addr,
            proto,
            holder,
        } = &e
        else {
            panic!("{e}")
        };
        assert_eq!((*addr, *proto), (taken, Proto::Udp));
        if cfg!(target_os = "linux") {
            // The holder is this very test process.
            let h = holder.as_deref().unwrap_or_default();
            assert!(h.contains(&format!("pid {}", std::process::id())), "{h}");
        }
        assert!(e.hint().contains("--listen"), "{}", e.hint());
        let mdns = BindError::InUse {
            addr: "127.0.0.1:5353".parse().unwrap(),
            proto: Proto::Udp,
            holder: None,
        };
        assert!(
            mdns.hint().contains("mDNS") && mdns.hint().contains("127.0.0.1:5354"),
            "{}",
            mdns.hint()
        );
    }

    #[test]
    fn counters_count_by_rcode() {
        let c = Counters::new();
        c.record(&Outcome {
            rcode: ResponseCode::NoError,
            truncated: true,
        });
        c.record(&Outcome {
            rcode: ResponseCode::BADVERS,
            truncated: false,
        });
        c.record(&Outcome {
            rcode: ResponseCode::YXDomain,
            truncated: false,
        });
        c.dropped();
        let s = c.snapshot();
        assert_eq!(
            (s.noerror, s.badvers, s.other, s.dropped, s.truncated),
            (1, 1, 1, 1, 1)
        );
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.contains("\"badvers\":1"), "{json}");
    }
}
