//! The DNS client every command uses to ask a running server something — the zone SOA (`load`,
//! `status`, `route`, `service`: which generation is live) or one name's A record (`route` compares it
//! with the native lookup path): hickory's own client, one address, one transport, no cache, bounded time.

use std::fmt;
use std::net::{Ipv4Addr, SocketAddr};
use std::str::FromStr;
use std::time::Duration;

use hickory_net::client::{Client, ClientHandle};
use hickory_net::runtime::TokioRuntimeProvider;
use hickory_net::tcp::TcpClientStream;
use hickory_net::udp::UdpClientStream;
use hickory_proto::op::ResponseCode;
use hickory_proto::rr::{DNSClass, Name, RData, Record, RecordType};

use crate::dns::name::Zone;
use crate::dns::transport::Transport;

/// Why a probe has no answer for the caller. Each carries a sentence saying what went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeError {
    /// Nobody answered: no connection, no reply in time, or no client runtime.
    Unreachable(String),
    /// A server answered, but not with what was asked (REFUSED from a server of another zone, no SOA).
    Answered(String),
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeError::Unreachable(s) | ProbeError::Answered(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for ProbeError {}

/// The zone's SOA as the server answered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SoaAnswer {
    pub serial: u32,
    pub authoritative: bool,
}

/// What a server said to one question.
struct Reply {
    rcode: ResponseCode,
    authoritative: bool,
    answers: Vec<Record>,
}

async fn exchange(
    addr: SocketAddr,
    transport: Transport,
    name: &str,
    rtype: RecordType,
    timeout: Duration,
) -> Result<Reply, ProbeError> {
    let qname = Name::from_str(&format!("{}.", name.trim_end_matches('.')))
        .map_err(|e| ProbeError::Unreachable(format!("bad name {name:?}: {e}")))?;
    let work = async {
        let provider = TokioRuntimeProvider::new();
        let (mut client, background) = match transport {
            Transport::Udp => {
                let stream = UdpClientStream::builder(addr, provider)
                    .with_timeout(Some(timeout))
                    .build();
                let (client, bg) = Client::<TokioRuntimeProvider>::from_sender(stream);
                (client, tokio::spawn(bg))
            }
            Transport::Tcp => {
                let (connect, sender) = TcpClientStream::new(addr, None, Some(timeout), provider);
                let stream = connect.await.map_err(|e| {
                    ProbeError::Unreachable(format!("no TCP connection to {addr}: {e}"))
                })?;
                let (client, bg) =
                    Client::<TokioRuntimeProvider>::with_timeout(stream, sender, timeout);
                (client, tokio::spawn(bg))
            }
        };
        let result = client.query(qname, DNSClass::IN, rtype).await;
        background.abort();
        let response = result.map_err(|e| {
            ProbeError::Unreachable(format!("no answer over {transport} from {addr}: {e}"))
        })?;
        Ok(Reply {
            rcode: response.metadata.response_code,
            authoritative: response.metadata.authoritative,
            answers: response.answers.clone(),
        })
    };
    // The client's own timeouts cover each exchange; this bounds the whole probe, connect included.
    match tokio::time::timeout(timeout + Duration::from_millis(500), work).await {
        Ok(r) => r,
        Err(_) => Err(ProbeError::Unreachable(format!(
            "no answer over {transport} from {addr} within {} ms",
            timeout.as_millis()
        ))),
    }
}

/// Asks `addr` for `<zone> SOA` over one transport.
pub async fn soa(
    addr: SocketAddr,
    transport: Transport,
    zone: &Zone,
    timeout: Duration,
) -> Result<SoaAnswer, ProbeError> {
    let reply = exchange(addr, transport, zone.as_str(), RecordType::SOA, timeout).await?;
    if reply.rcode != ResponseCode::NoError {
        return Err(ProbeError::Answered(format!(
            "{addr} answered {zone} SOA with {} over {transport}",
            reply.rcode
        )));
    }
    reply
        .answers
        .iter()
        .find_map(|r| match &r.data {
            RData::SOA(soa) => Some(SoaAnswer {
                serial: soa.serial,
                authoritative: reply.authoritative,
            }),
            _ => None,
        })
        .ok_or_else(|| {
            ProbeError::Answered(format!(
                "{addr} answered {zone} SOA over {transport} without an SOA record"
            ))
        })
}

/// Asks `addr` for `name A`: the first address, or None when the answer has none.
pub async fn a(
    addr: SocketAddr,
    transport: Transport,
    name: &str,
    timeout: Duration,
) -> Result<Option<Ipv4Addr>, ProbeError> {
    let reply = exchange(addr, transport, name, RecordType::A, timeout).await?;
    Ok(reply.answers.iter().find_map(|r| match &r.data {
        RData::A(a) => Some(a.0),
        _ => None,
    }))
}

/// Runs a probe (or any client future) from synchronous code — the CLI commands — on a small runtime of
/// its own.
pub fn block_on<F: std::future::Future>(f: F) -> Result<F::Output, ProbeError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map(|rt| rt.block_on(f))
        .map_err(|e| ProbeError::Unreachable(format!("cannot start the DNS client: {e}")))
}
