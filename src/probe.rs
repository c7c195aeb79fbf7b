//! The SOA probe that `load`, `status` (and later `route` and `service`) use to ask a running server which
//! generation is live: hickory's own DNS client, one address, one protocol, no cache, bounded time.

use std::net::SocketAddr;
use std::str::FromStr;
use std::time::Duration;

use hickory_server::net::client::{Client, ClientHandle};
use hickory_server::net::runtime::TokioRuntimeProvider;
use hickory_server::net::tcp::TcpClientStream;
use hickory_server::net::udp::UdpClientStream;
use hickory_server::proto::op::ResponseCode;
use hickory_server::proto::rr::{DNSClass, Name, RData, RecordType};

use crate::name::Zone;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Udp,
    Tcp,
}

impl std::fmt::Display for Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Protocol::Udp => "UDP",
            Protocol::Tcp => "TCP",
        })
    }
}

/// The zone's SOA as the server answered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SoaAnswer {
    pub serial: u32,
    pub authoritative: bool,
}

/// Asks `addr` for `<zone> SOA` over one protocol. An error is a sentence saying what went wrong.
pub async fn soa(
    addr: SocketAddr,
    protocol: Protocol,
    zone: &Zone,
    timeout: Duration,
) -> Result<SoaAnswer, String> {
    soa_or_refusal(addr, protocol, zone, timeout).await?
}

/// Like [`soa`], but tells "nobody answered" (the outer error) from "a server answered without the
/// zone's SOA" (the inner error), e.g. REFUSED from a server of another zone.
pub async fn soa_or_refusal(
    addr: SocketAddr,
    protocol: Protocol,
    zone: &Zone,
    timeout: Duration,
) -> Result<Result<SoaAnswer, String>, String> {
    let name = Name::from_str(&format!("{zone}.")).map_err(|e| format!("bad zone name: {e}"))?;
    let work = async {
        let provider = TokioRuntimeProvider::new();
        let (mut client, background) = match protocol {
            Protocol::Udp => {
                let stream = UdpClientStream::builder(addr, provider)
                    .with_timeout(Some(timeout))
                    .build();
                let (client, bg) = Client::<TokioRuntimeProvider>::from_sender(stream);
                (client, tokio::spawn(bg))
            }
            Protocol::Tcp => {
                let (connect, sender) = TcpClientStream::new(addr, None, Some(timeout), provider);
                let stream = connect
                    .await
                    .map_err(|e| format!("no TCP connection to {addr}: {e}"))?;
                let (client, bg) =
                    Client::<TokioRuntimeProvider>::with_timeout(stream, sender, timeout);
                (client, tokio::spawn(bg))
            }
        };
        let result = client.query(name, DNSClass::IN, RecordType::SOA).await;
        background.abort();
        let response = result.map_err(|e| format!("no answer over {protocol} from {addr}: {e}"))?;
        let meta = &response.metadata;
        if meta.response_code != ResponseCode::NoError {
            return Ok(Err(format!(
                "{addr} answered {zone} SOA with {} over {protocol}",
                meta.response_code
            )));
        }
        let serial = response.answers.iter().find_map(|r| match &r.data {
            RData::SOA(soa) => Some(soa.serial),
            _ => None,
        });
        Ok(serial
            .map(|serial| SoaAnswer {
                serial,
                authoritative: meta.authoritative,
            })
            .ok_or_else(|| {
                format!("{addr} answered {zone} SOA over {protocol} without an SOA record")
            }))
    };
    // The client's own timeouts cover each exchange; this bounds the whole probe, connect included.
    match tokio::time::timeout(timeout + Duration::from_millis(500), work).await {
        Ok(r) => r,
        Err(_) => Err(format!(
            "no answer over {protocol} from {addr} within {} ms",
            timeout.as_millis()
        )),
    }
}

/// Runs a probe (or any client future) from synchronous code — the CLI commands — on a small runtime of
/// its own. The error is a sentence.
pub fn block_on<F: std::future::Future>(f: F) -> Result<F::Output, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map(|rt| rt.block_on(f))
        .map_err(|e| format!("cannot start the DNS client: {e}"))
}
