//! Many UDP queries at once from several sockets, so the server's receive loops take datagrams in
//! batches: every query must be answered on its own (its id, its question, its address or NXDOMAIN, its
//! EDNS, its own TC decision), to the socket that sent it, and every non-query must be dropped and counted.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::util::*;
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::{RData, RecordType};
use pigsty_dns::serve::net::ServerConfig;

const SOCKETS: usize = 6;
const PER_SOCKET: usize = 600;
/// Queries in flight per socket: all sockets together stay well inside the server's default receive
/// buffer, so on loopback nothing is lost and a missing answer is a bug, not congestion.
const WINDOW: usize = 24;
const NAMES: usize = 500;
/// Every this-many-th datagram is a response (QR=1), which the server must drop and count.
const NON_QUERY_EVERY: usize = 11;

fn host(i: usize) -> (String, [u8; 4]) {
    (
        format!("host-{i}.pigsty.test"),
        [10, 20, (i / 250) as u8, (i % 250) as u8 + 1],
    )
}

/// The `seq`-th datagram of socket `s`: its id, its bytes, and what it must get back (`None`: nothing).
/// What a query must get back: its name, its address (`None`: NXDOMAIN), whether it carried EDNS.
type Want = (String, Option<Ipv4Addr>, bool);

fn datagram(s: usize, seq: usize) -> (u16, Vec<u8>, Option<Want>) {
    let id = (s * PER_SOCKET + seq) as u16;
    let (name, addr) = if seq % 5 == 4 {
        (format!("nx-{s}-{seq}.pigsty.test"), None)
    } else {
        let (n, a) = host((s * 37 + seq) % NAMES);
        (n, Some(Ipv4Addr::from(a)))
    };
    let edns = seq.is_multiple_of(3);
    let mut m = query(id, &format!("{name}."), RecordType::A);
    if edns {
        m = with_edns(m, 1232, false);
    }
    let mut bytes = m.to_vec().unwrap();
    if seq % NON_QUERY_EVERY == NON_QUERY_EVERY - 1 {
        bytes[2] |= 0x80; // QR=1: a response, never answered
        return (id, bytes, None);
    }
    (id, bytes, Some((name, addr, edns)))
}

/// Answers a client got: NOERROR, NXDOMAIN, and of those, how many with TC=1.
#[derive(Debug, Default, Clone, Copy)]
struct Got {
    noerror: u64,
    nxdomain: u64,
    truncated: u64,
}

/// One client socket: keeps WINDOW queries in flight, checks every reply, returns what it got. Bounded:
/// gives up after WAIT without progress.
fn client(s: usize, server: SocketAddr) -> Got {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut expected: HashMap<u16, Want> = HashMap::new();
    let (mut next, mut answered, mut got) = (0, 0, Got::default());
    let queries = (0..PER_SOCKET)
        .filter(|seq| seq % NON_QUERY_EVERY != NON_QUERY_EVERY - 1)
        .count();
    let mut buf = vec![0u8; 65_535];
    let mut progress = Instant::now();
    while answered < queries {
        while next < PER_SOCKET && expected.len() < WINDOW {
            let (id, bytes, want) = datagram(s, next);
            sock.send_to(&bytes, server).unwrap();
            if let Some(w) = want {
                expected.insert(id, w);
            }
            next += 1;
        }
        assert!(
            progress.elapsed() < WAIT,
            "socket {s}: {} queries unanswered after {WAIT:?}: {:?}",
            expected.len(),
            expected.keys().collect::<Vec<_>>()
        );
        let Ok((n, from)) = sock.recv_from(&mut buf) else {
            continue;
        };
        progress = Instant::now();
        assert_eq!(from, server, "the reply comes from the address queried");
        let m = Message::from_vec(&buf[..n]).expect("the answer decodes");
        let (name, addr, edns) = expected.remove(&m.metadata.id).unwrap_or_else(|| {
            panic!("socket {s} got an answer it did not ask for (or twice): {m}")
        });
        assert_eq!(m.queries.len(), 1, "{m}");
        assert_eq!(m.queries[0].name().to_ascii(), format!("{name}."), "{m}");
        assert_eq!(
            m.edns.is_some(),
            edns,
            "EDNS in the answer iff in the query: {m}"
        );
        if m.metadata.truncation {
            // Over the UDP limit: header, question and OPT only, the rcode kept.
            let rcode = if addr.is_some() {
                ResponseCode::NoError
            } else {
                ResponseCode::NXDomain
            };
            assert_eq!(m.metadata.response_code, rcode, "{m}");
            assert!(m.answers.is_empty() && m.authorities.is_empty(), "{m}");
            got.truncated += 1;
        }
        match addr {
            _ if m.metadata.truncation => {}
            Some(a) => {
                assert_eq!(m.metadata.response_code, ResponseCode::NoError, "{m}");
                let addrs: Vec<_> = m
                    .answers
                    .iter()
                    .filter_map(|r| match &r.data {
                        RData::A(x) => Some(x.0),
                        _ => None,
                    })
                    .collect();
                assert_eq!(addrs, vec![a], "{m}");
            }
            None => {
                assert_eq!(m.metadata.response_code, ResponseCode::NXDomain, "{m}");
                assert!(m.answers.is_empty(), "{m}");
            }
        }
        if addr.is_some() {
            got.noerror += 1;
        } else {
            got.nxdomain += 1;
        }
        answered += 1;
    }
    got
}

/// Runs the burst against a server with `cfg` and checks the counters against what the clients got.
async fn burst(cfg: ServerConfig) -> Got {
    let hosts: Vec<(String, [u8; 4])> = (0..NAMES).map(host).collect();
    let records: Vec<(&str, [u8; 4])> = hosts.iter().map(|(n, a)| (n.as_str(), *a)).collect();
    let srv = start_with(cfg, view(3, &records));
    let addr = srv.addr;
    let totals = tokio::task::spawn_blocking(move || {
        std::thread::scope(|scope| {
            let clients: Vec<_> = (0..SOCKETS)
                .map(|s| scope.spawn(move || client(s, addr)))
                .collect();
            clients
                .into_iter()
                .map(|c| c.join().expect("a client thread did not panic"))
                .fold(Got::default(), |t, c| Got {
                    noerror: t.noerror + c.noerror,
                    nxdomain: t.nxdomain + c.nxdomain,
                    truncated: t.truncated + c.truncated,
                })
        })
    })
    .await
    .unwrap();

    // Every datagram was counted once: answers by rcode, non-queries as dropped.
    let non_queries = (0..PER_SOCKET)
        .filter(|seq| seq % NON_QUERY_EVERY == NON_QUERY_EVERY - 1)
        .count()
        * SOCKETS;
    let c = &srv.counters;
    // Dropped datagrams raise no reply, so wait (bounded) for the server to have counted them all.
    let deadline = Instant::now() + WAIT;
    while (c.dropped.load(Ordering::Relaxed) as usize) < non_queries && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(c.noerror.load(Ordering::Relaxed), totals.noerror);
    assert_eq!(c.nxdomain.load(Ordering::Relaxed), totals.nxdomain);
    assert_eq!(c.truncated.load(Ordering::Relaxed), totals.truncated);
    assert_eq!(
        totals.noerror + totals.nxdomain,
        (SOCKETS * PER_SOCKET - non_queries) as u64
    );
    assert_eq!(c.dropped.load(Ordering::Relaxed) as usize, non_queries);
    srv.stop().await;
    totals
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_from_several_sockets_is_answered_query_by_query_to_each_source() {
    let got = burst(test_config()).await;
    assert_eq!(got.truncated, 0, "one-address answers fit in 512 bytes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_under_a_small_udp_limit_truncates_only_the_answers_over_it() {
    // 60 bytes: an A answer without OPT fits, one with OPT or an NXDOMAIN with its SOA does not, so
    // every batch mixes truncated and complete answers.
    let cfg = udp_capped(60);
    let got = burst(cfg).await;
    assert!(
        got.truncated > 0 && got.truncated < got.noerror + got.nxdomain,
        "{got:?}"
    );
}
