//! Helpers shared by the serve_* integration tests: a small zone, a server on 127.0.0.1:0 that always
//! stops by itself, and raw UDP/TCP exchanges with hickory-proto message encode/decode.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use hickory_proto::op::{Edns, Message, Query};
use hickory_proto::rr::{Name, RData, RecordType};
use pigsty_dns::serve::net::{self, Counters, ServerConfig};
use pigsty_dns::zone::view::ZoneView;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UdpSocket};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::timeout;

pub use pigsty_dns::zone::view::fixtures::{NEG, TTL};
/// Every exchange and every server is bounded by this.
pub const WAIT: Duration = Duration::from_secs(3);
/// A server stops by itself after this, even if a test forgets or panics.
pub const SERVER_LIFETIME: Duration = Duration::from_secs(60);

pub fn view(serial: u32, records: &[(&str, [u8; 4])]) -> ZoneView {
    pigsty_dns::zone::view::fixtures::view_with(records, serial)
}

pub fn default_view() -> ZoneView {
    view(
        1,
        &[
            ("a.b.pigsty.test", [10, 10, 10, 11]),
            ("meta.pigsty.test", [10, 10, 10, 10]),
        ],
    )
}

pub fn test_config() -> ServerConfig {
    ServerConfig {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        tcp_idle_timeout: Duration::from_secs(5),
        shutdown_grace: Duration::from_millis(500),
        ..ServerConfig::default()
    }
}

/// [`test_config`] with answers over UDP capped at `cap` bytes.
pub fn udp_capped(cap: usize) -> ServerConfig {
    ServerConfig {
        limits: pigsty_dns::serve::answer::Limits {
            udp_cap: Some(cap),
            ..pigsty_dns::serve::answer::Limits::default()
        },
        ..test_config()
    }
}

pub struct Running {
    pub addr: SocketAddr,
    pub zone: Arc<ArcSwap<ZoneView>>,
    pub counters: Arc<Counters>,
    stop: Option<oneshot::Sender<()>>,
    handle: Option<JoinHandle<std::io::Result<()>>>,
}

pub fn start(cfg: ServerConfig) -> Running {
    start_with(cfg, default_view())
}

pub fn start_with(cfg: ServerConfig, view: ZoneView) -> Running {
    let bound = net::bind(&cfg).expect("bind 127.0.0.1:0");
    let addr = bound.local_addrs()[0];
    let zone = Arc::new(ArcSwap::from_pointee(view));
    let counters = Arc::new(Counters::new());
    let (tx, rx) = oneshot::channel::<()>();
    let shutdown = async move {
        tokio::select! {
            _ = rx => {}
            _ = tokio::time::sleep(SERVER_LIFETIME) => {}
        }
    };
    let handle = tokio::spawn(bound.serve(zone.clone(), counters.clone(), shutdown));
    Running {
        addr,
        zone,
        counters,
        stop: Some(tx),
        handle: Some(handle),
    }
}

impl Running {
    /// Signals shutdown and checks that serve() returns Ok within the grace period (plus slack).
    pub async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        let handle = self.handle.take().unwrap();
        let res = timeout(WAIT, handle)
            .await
            .expect("serve() returns promptly after shutdown");
        res.expect("serve task did not panic")
            .expect("serve() returns Ok");
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // A test that panicked still stops its server.
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
}

pub fn query(id: u16, name: &str, rtype: RecordType) -> Message {
    let mut m = Message::query();
    m.metadata.id = id;
    m.metadata.recursion_desired = true;
    m.add_query(Query::query(Name::from_ascii(name).unwrap(), rtype));
    m
}

pub fn with_edns(mut m: Message, payload: u16, dnssec_ok: bool) -> Message {
    let mut e = Edns::new();
    e.set_max_payload(payload);
    e.set_dnssec_ok(dnssec_ok);
    m.set_edns(e);
    m
}

pub async fn udp_raw(server: SocketAddr, bytes: &[u8]) -> Option<Vec<u8>> {
    let sock = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    sock.send_to(bytes, server).await.unwrap();
    udp_recv(&sock, server, WAIT).await
}

pub async fn udp_recv(sock: &UdpSocket, server: SocketAddr, wait: Duration) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; 65_535];
    let (n, from) = timeout(wait, sock.recv_from(&mut buf)).await.ok()?.unwrap();
    assert_eq!(
        from, server,
        "reply comes from the address the query was sent to"
    );
    buf.truncate(n);
    Some(buf)
}

pub async fn udp(server: SocketAddr, m: &Message) -> Message {
    let bytes = udp_raw(server, &m.to_vec().unwrap())
        .await
        .expect("a UDP answer");
    Message::from_vec(&bytes).expect("the answer decodes")
}

pub fn frame(bytes: &[u8]) -> Vec<u8> {
    let mut v = (bytes.len() as u16).to_be_bytes().to_vec();
    v.extend_from_slice(bytes);
    v
}

/// Reads one framed message; `None` on EOF (or a reset) before a complete one.
pub async fn read_frame(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut len = [0u8; 2];
    timeout(WAIT, s.read_exact(&mut len))
        .await
        .expect("no TCP stall")
        .ok()?;
    let mut body = vec![0u8; usize::from(u16::from_be_bytes(len))];
    timeout(WAIT, s.read_exact(&mut body))
        .await
        .expect("no TCP stall")
        .ok()?;
    Some(body)
}

pub async fn tcp_raw(server: SocketAddr, bytes: &[u8]) -> Vec<u8> {
    let mut s = TcpStream::connect(server).await.unwrap();
    s.write_all(&frame(bytes)).await.unwrap();
    read_frame(&mut s).await.expect("a TCP answer")
}

pub async fn tcp(server: SocketAddr, m: &Message) -> Message {
    Message::from_vec(&tcp_raw(server, &m.to_vec().unwrap()).await).expect("the answer decodes")
}

/// Waits until the peer closes the connection (EOF or reset), bounded.
pub async fn closed_within(s: &mut TcpStream, wait: Duration) -> bool {
    let mut buf = [0u8; 64];
    loop {
        match timeout(wait, s.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue,
        }
    }
}

/// The PTR targets of the answer section, in order.
pub fn ptr_of(m: &Message) -> Vec<String> {
    m.answers
        .iter()
        .filter_map(|r| match &r.data {
            RData::PTR(p) => Some(p.0.to_ascii()),
            _ => None,
        })
        .collect()
}

/// The A addresses of the answer section, in order.
pub fn a_of(m: &Message) -> Vec<std::net::Ipv4Addr> {
    m.answers
        .iter()
        .filter_map(|r| match &r.data {
            RData::A(a) => Some(a.0),
            _ => None,
        })
        .collect()
}
