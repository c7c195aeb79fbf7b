//! Binding: loopback-only addresses, UDP and TCP on one port (port 0 included), and [`BindError`], which
//! says what went wrong and what to do about it.

use std::fmt;
use std::io;
use std::net::{IpAddr, SocketAddr, UdpSocket as StdUdpSocket};
use std::sync::Arc;

use tokio::net::{TcpListener, TcpSocket};

use super::{Bound, ServerConfig, holder, udp};
use crate::defaults::{LISTEN, MDNS_PORT, with_suggested_port};
use crate::dns::transport::Transport;

/// How often port 0 is retried when the kernel's UDP port is taken for TCP.
const PORT_ZERO_ATTEMPTS: usize = 16;
const TCP_BACKLOG: u32 = 1024;

#[derive(Debug)]
pub enum BindError {
    NoAddresses,
    NotLoopback {
        addr: SocketAddr,
    },
    /// `holder` names the process holding the port when it can be found (Linux only).
    InUse {
        addr: SocketAddr,
        transport: Transport,
        holder: Option<String>,
    },
    Permission {
        addr: SocketAddr,
        transport: Transport,
        source: io::Error,
    },
    Other {
        addr: SocketAddr,
        transport: Transport,
        source: io::Error,
    },
}

impl BindError {
    /// What to do about it, for the CLI's `next:` line.
    pub fn hint(&self) -> String {
        match self {
            BindError::NoAddresses => {
                format!("give at least one address with --listen, e.g. {LISTEN}")
            }
            BindError::NotLoopback { .. } => {
                "listen on 127.0.0.1 (or another 127.0.0.0/8 address) or ::1".into()
            }
            BindError::InUse { addr, .. } if addr.port() == MDNS_PORT => format!(
                "port {MDNS_PORT} is also the mDNS port — Avahi, systemd-resolved's mDNS, or on macOS \
                 mDNSResponder may hold it — try `--listen {}`",
                with_suggested_port(*addr)
            ),
            BindError::InUse { addr, .. } => {
                format!(
                    "stop the other server or try `--listen {}`",
                    SocketAddr::new(addr.ip(), addr.port().wrapping_add(1))
                )
            }
            BindError::Permission { addr, .. } if addr.port() < 1024 => format!(
                "ports below 1024 need privileges; use an unprivileged port such as the default, {}",
                LISTEN.port()
            ),
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
                transport,
                holder: Some(h),
            } => write!(f, "{addr} ({transport}) is already in use by {h}"),
            BindError::InUse {
                addr,
                transport,
                holder: None,
            } => write!(f, "{addr} ({transport}) is already in use"),
            BindError::Permission {
                addr,
                transport,
                source,
            } => {
                write!(f, "no permission to bind {addr} ({transport}): {source}")
            }
            BindError::Other {
                addr,
                transport,
                source,
            } => write!(f, "cannot bind {addr} ({transport}): {source}"),
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

fn classify(addr: SocketAddr, transport: Transport, e: io::Error) -> BindError {
    match e.kind() {
        io::ErrorKind::AddrInUse => BindError::InUse {
            addr,
            transport,
            holder: holder::find(transport, addr.port()),
        },
        io::ErrorKind::PermissionDenied => BindError::Permission {
            addr,
            transport,
            source: e,
        },
        _ => BindError::Other {
            addr,
            transport,
            source: e,
        },
    }
}

/// No SO_REUSEADDR, no SO_REUSEPORT: nobody else can bind a UDP socket beside ours and take a share of
/// the queries. A blocking socket with timeouts: each UDP receive loop runs on its own thread.
fn bind_udp(addr: SocketAddr) -> Result<StdUdpSocket, BindError> {
    let sock = StdUdpSocket::bind(addr).map_err(|e| classify(addr, Transport::Udp, e))?;
    sock.set_read_timeout(Some(udp::WAKE))
        .and_then(|()| sock.set_write_timeout(Some(udp::WAKE)))
        .map_err(|e| classify(addr, Transport::Udp, e))?;
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
        let tcp = bind_tcp(addr).map_err(|e| classify(addr, Transport::Tcp, e))?;
        return Ok((udp, tcp, addr));
    }
    // Port 0: let the kernel pick a UDP port, then take the same port for TCP; retry if TCP has it.
    let mut last = None;
    for _ in 0..PORT_ZERO_ATTEMPTS {
        let udp = bind_udp(addr)?;
        let actual = udp
            .local_addr()
            .map_err(|e| classify(addr, Transport::Udp, e))?;
        match bind_tcp(actual) {
            Ok(tcp) => return Ok((udp, tcp, actual)),
            Err(e) if e.kind() == io::ErrorKind::AddrInUse => last = Some(actual),
            Err(e) => return Err(classify(actual, Transport::Tcp, e)),
        }
    }
    Err(BindError::InUse {
        addr: last.unwrap_or(addr),
        transport: Transport::Tcp,
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
            transport,
            holder,
        } = &e
        else {
            panic!("{e}")
        };
        assert_eq!((*addr, *transport), (taken, Transport::Udp));
        if cfg!(target_os = "linux") {
            // The holder is this very test process.
            let h = holder.as_deref().unwrap_or_default();
            assert!(h.contains(&format!("pid {}", std::process::id())), "{h}");
        }
        assert!(e.hint().contains("--listen"), "{}", e.hint());
        let mdns = BindError::InUse {
            addr: "127.0.0.1:5353".parse().unwrap(),
            transport: Transport::Udp,
            holder: None,
        };
        assert!(
            mdns.hint().contains("mDNS") && mdns.hint().contains("127.0.0.1:5354"),
            "{}",
            mdns.hint()
        );
    }
}
