//! Every answering rule through real UDP and TCP sockets against a server on 127.0.0.1:0.

use std::net::Ipv4Addr;
use std::time::Duration;

use crate::util::*;
use hickory_proto::op::{Message, MessageType, OpCode, ResponseCode};
use hickory_proto::rr::rdata::opt::EdnsOption;
use hickory_proto::rr::{DNSClass, RData, RecordType};
use pigsty_dns::serve::net::ServerConfig;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

fn assert_negative(m: &Message, rcode: ResponseCode, serial: u32) {
    assert_eq!(m.metadata.response_code, rcode, "{m}");
    assert!(m.metadata.authoritative);
    assert!(m.answers.is_empty());
    assert_eq!(m.authorities.len(), 1);
    assert_eq!(m.authorities[0].ttl, NEG);
    let RData::SOA(soa) = &m.authorities[0].data else {
        panic!("{m}")
    };
    assert_eq!(soa.serial, serial);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_every_rule_over_udp_and_tcp() {
    let srv = start(test_config());
    for over_tcp in [false, true] {
        let ask = |m: Message| async move {
            if over_tcp {
                tcp(srv.addr, &m).await
            } else {
                udp(srv.addr, &m).await
            }
        };

        let m = ask(query(1, "meta.pigsty.test.", RecordType::A)).await;
        assert_eq!(m.metadata.response_code, ResponseCode::NoError);
        assert!(
            m.metadata.authoritative
                && m.metadata.recursion_desired
                && !m.metadata.recursion_available
        );
        assert_eq!(a_of(&m), vec![Ipv4Addr::new(10, 10, 10, 10)]);
        assert_eq!(m.answers[0].ttl, TTL);

        let m = ask(query(2, "nope.pigsty.test.", RecordType::A)).await;
        assert_negative(&m, ResponseCode::NXDomain, 1);
        let m = ask(query(3, "b.pigsty.test.", RecordType::A)).await;
        assert_negative(&m, ResponseCode::NoError, 1);
        let m = ask(query(4, "meta.pigsty.test.", RecordType::AAAA)).await;
        assert_negative(&m, ResponseCode::NoError, 1);

        let m = ask(query(5, "pigsty.test.", RecordType::SOA)).await;
        let RData::SOA(soa) = &m.answers[0].data else {
            panic!("{m}")
        };
        assert_eq!((soa.serial, m.answers[0].ttl), (1, TTL));
        let m = ask(query(6, "pigsty.test.", RecordType::NS)).await;
        let RData::NS(ns) = &m.answers[0].data else {
            panic!("{m}")
        };
        assert_eq!(ns.0.to_ascii(), "localhost.");
        let m = ask(query(7, "meta.pigsty.test.", RecordType::ANY)).await;
        assert_eq!(a_of(&m), vec![Ipv4Addr::new(10, 10, 10, 10)]);

        for m in [
            query(8, "example.com.", RecordType::A),
            query(9, "pigsty.test.", RecordType::AXFR),
        ] {
            let r = ask(m).await;
            assert_eq!(r.metadata.response_code, ResponseCode::Refused);
            assert!(!r.metadata.authoritative && r.answers.is_empty() && r.authorities.is_empty());
        }
        let mut chaos = query(10, "version.bind.", RecordType::TXT);
        chaos.queries[0].set_query_class(DNSClass::CH);
        assert_eq!(
            ask(chaos).await.metadata.response_code,
            ResponseCode::Refused
        );

        let mut notify = query(11, "pigsty.test.", RecordType::SOA);
        notify.metadata.op_code = OpCode::Notify;
        let r = ask(notify).await;
        assert_eq!(r.metadata.response_code, ResponseCode::NotImp);
        assert!(!r.metadata.recursion_desired);

        let mut none = query(12, "meta.pigsty.test.", RecordType::A);
        none.queries.clear();
        let r = ask(none).await;
        assert_eq!(r.metadata.response_code, ResponseCode::FormErr);
        assert_eq!(r.metadata.id, 12);
    }
    let s = srv.counters.snapshot();
    assert!(
        s.noerror >= 10 && s.nxdomain == 2 && s.refused == 6 && s.notimp == 2 && s.formerr == 2,
        "{s:?}"
    );
    srv.stop().await;
}

#[tokio::test]
async fn mixed_case_is_echoed_byte_for_byte() {
    let srv = start(test_config());
    let q = query(0x2020, "mEtA.PiGsTy.tEsT.", RecordType::A)
        .to_vec()
        .unwrap();
    let qlen = q.len() - 12;
    for reply in [
        udp_raw(srv.addr, &q).await.unwrap(),
        tcp_raw(srv.addr, &q).await,
    ] {
        assert_eq!(&reply[12..12 + qlen], &q[12..], "question echoed as sent");
        let m = Message::from_vec(&reply).unwrap();
        assert_eq!(a_of(&m), vec![Ipv4Addr::new(10, 10, 10, 10)]);
    }
    srv.stop().await;
}

#[tokio::test]
async fn edns_echo_badvers_unknown_option_and_do() {
    let srv = start(test_config());
    let mut q = with_edns(query(1, "meta.pigsty.test.", RecordType::A), 4096, true);
    q.edns
        .as_mut()
        .unwrap()
        .options_mut()
        .insert(EdnsOption::Unknown(65_001, vec![9; 8]));
    q.edns.as_mut().unwrap().flags_mut().z = 0x0100;
    let m = udp(srv.addr, &q).await;
    assert_eq!(a_of(&m), vec![Ipv4Addr::new(10, 10, 10, 10)]);
    let e = m.edns.as_ref().expect("OPT echoed");
    assert_eq!(
        (
            e.version(),
            e.max_payload(),
            e.flags().dnssec_ok,
            e.flags().z
        ),
        (0, 1232, true, 0)
    );
    assert!(e.options().as_ref().is_empty());

    let m = udp(
        srv.addr,
        &with_edns(query(2, "meta.pigsty.test.", RecordType::A), 1232, false),
    )
    .await;
    assert!(!m.edns.as_ref().unwrap().flags().dnssec_ok);

    let mut v1 = with_edns(query(3, "meta.pigsty.test.", RecordType::A), 1232, false);
    v1.edns.as_mut().unwrap().set_version(1);
    for m in [udp(srv.addr, &v1).await, tcp(srv.addr, &v1).await] {
        // hickory decodes extended rcode 16 as BADSIG, which shares the number with BADVERS.
        assert_eq!(u16::from(m.metadata.response_code), 16, "{m}");
        assert_eq!(m.edns.as_ref().unwrap().version(), 0);
        assert!(m.answers.is_empty() && m.authorities.is_empty());
    }
    // Errors carry the OPT as well.
    let m = udp(
        srv.addr,
        &with_edns(query(4, "example.com.", RecordType::A), 1232, false),
    )
    .await;
    assert_eq!(m.metadata.response_code, ResponseCode::Refused);
    assert!(m.edns.is_some());
    assert_eq!(srv.counters.snapshot().badvers, 2);
    srv.stop().await;
}

#[tokio::test]
async fn truncated_over_udp_then_complete_over_tcp() {
    let cfg = udp_capped(60);
    let srv = start(cfg);
    let q = with_edns(query(7, "meta.pigsty.test.", RecordType::A), 1232, false);
    let bytes = udp_raw(srv.addr, &q.to_vec().unwrap()).await.unwrap();
    let m = Message::from_vec(&bytes).unwrap();
    assert!(m.metadata.truncation);
    assert_eq!(m.queries.len(), 1);
    assert!(m.answers.is_empty() && m.authorities.is_empty());
    assert!(m.edns.is_some(), "OPT kept in a truncated answer");
    assert_eq!(
        bytes.len(),
        q.to_vec().unwrap().len(),
        "header + question + OPT, nothing else"
    );

    let m = tcp(srv.addr, &q).await;
    assert!(!m.metadata.truncation);
    assert_eq!(a_of(&m), vec![Ipv4Addr::new(10, 10, 10, 10)]);
    assert_eq!(srv.counters.snapshot().truncated, 1);
    srv.stop().await;
}

#[tokio::test]
async fn tcp_pipelining_and_split_writes() {
    let srv = start(test_config());
    let names = [
        "meta.pigsty.test.",
        "nope.pigsty.test.",
        "a.b.pigsty.test.",
        "example.com.",
        "pigsty.test.",
    ];
    let mut s = TcpStream::connect(srv.addr).await.unwrap();
    let mut burst = Vec::new();
    for (i, n) in names.iter().enumerate() {
        burst.extend_from_slice(&frame(
            &query(100 + i as u16, n, RecordType::A).to_vec().unwrap(),
        ));
    }
    s.write_all(&burst).await.unwrap();
    let mut seen = Vec::new();
    for _ in names {
        let m = Message::from_vec(&read_frame(&mut s).await.unwrap()).unwrap();
        let expected = match m.metadata.id {
            100 => ResponseCode::NoError,
            101 => ResponseCode::NXDomain,
            102 => ResponseCode::NoError,
            103 => ResponseCode::Refused,
            104 => ResponseCode::NoError,
            id => panic!("unexpected id {id}"),
        };
        assert_eq!(m.metadata.response_code, expected, "id {}", m.metadata.id);
        seen.push(m.metadata.id);
    }
    seen.sort();
    assert_eq!(seen, vec![100, 101, 102, 103, 104]);

    // The same connection, one byte per write: framing survives any segmentation.
    let one = frame(
        &query(200, "a.b.pigsty.test.", RecordType::A)
            .to_vec()
            .unwrap(),
    );
    for b in &one {
        s.write_all(std::slice::from_ref(b)).await.unwrap();
        s.flush().await.unwrap();
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let m = Message::from_vec(&read_frame(&mut s).await.unwrap()).unwrap();
    assert_eq!(m.metadata.id, 200);
    assert_eq!(a_of(&m), vec![Ipv4Addr::new(10, 10, 10, 11)]);

    // A zero-length message closes the connection.
    s.write_all(&[0, 0]).await.unwrap();
    assert!(closed_within(&mut s, WAIT).await);
    srv.stop().await;
}

#[tokio::test]
async fn idle_and_stalled_connections_are_closed() {
    let cfg = ServerConfig {
        tcp_idle_timeout: Duration::from_millis(300),
        ..test_config()
    };
    let srv = start(cfg);
    // Idle after one answer.
    let mut s = TcpStream::connect(srv.addr).await.unwrap();
    s.write_all(&frame(
        &query(1, "meta.pigsty.test.", RecordType::A)
            .to_vec()
            .unwrap(),
    ))
    .await
    .unwrap();
    assert!(read_frame(&mut s).await.is_some());
    let t = std::time::Instant::now();
    assert!(closed_within(&mut s, WAIT).await, "idle connection closed");
    assert!(
        t.elapsed() >= Duration::from_millis(200),
        "not before the timeout: {:?}",
        t.elapsed()
    );

    // Half a message, then a byte now and then: the deadline is for a complete message.
    let mut s = TcpStream::connect(srv.addr).await.unwrap();
    let q = frame(
        &query(2, "meta.pigsty.test.", RecordType::A)
            .to_vec()
            .unwrap(),
    );
    s.write_all(&q[..5]).await.unwrap();
    let t = std::time::Instant::now();
    for b in &q[5..9] {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let _ = s.write_all(std::slice::from_ref(b)).await;
    }
    assert!(
        closed_within(&mut s, WAIT).await,
        "stalled connection closed"
    );
    assert!(t.elapsed() < Duration::from_secs(2));
    srv.stop().await;
}

#[tokio::test]
async fn connection_cap_evicts_the_longest_idle_connection() {
    let cfg = ServerConfig {
        tcp_max_connections: 3,
        ..test_config()
    };
    let srv = start(cfg);
    let ask = |id: u16| {
        frame(
            &query(id, "meta.pigsty.test.", RecordType::A)
                .to_vec()
                .unwrap(),
        )
    };
    let mut held = Vec::new();
    for i in 0..3u16 {
        let mut s = TcpStream::connect(srv.addr).await.unwrap();
        // An answer proves the connection was accepted and holds a slot; held[0] is idle the longest.
        s.write_all(&ask(i)).await.unwrap();
        assert!(read_frame(&mut s).await.is_some());
        held.push(s);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The fourth connection is served; the one idle the longest is closed to make room.
    let mut extra = TcpStream::connect(srv.addr).await.unwrap();
    extra.write_all(&ask(9)).await.unwrap();
    let m = Message::from_vec(
        &read_frame(&mut extra)
            .await
            .expect("the new connection is served"),
    )
    .unwrap();
    assert_eq!(m.metadata.id, 9);
    assert!(
        closed_within(&mut held[0], WAIT).await,
        "the longest-idle connection is closed"
    );
    for (i, s) in held.iter_mut().enumerate().skip(1) {
        s.write_all(&ask(50 + i as u16)).await.unwrap();
        let m = Message::from_vec(&read_frame(s).await.expect("the others stay open")).unwrap();
        assert_eq!(m.metadata.id, 50 + i as u16);
    }
    let snap = srv.counters.snapshot();
    assert_eq!(
        (snap.tcp_accepted, snap.tcp_evicted, snap.tcp_refused),
        (4, 1, 0)
    );
    // A connection that closes frees its slot: the next one takes it without evicting anybody.
    drop(held.remove(0));
    drop(held.remove(0));
    let mut ok = false;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let mut s = TcpStream::connect(srv.addr).await.unwrap();
        s.write_all(&ask(60)).await.unwrap();
        if read_frame(&mut s).await.is_some() {
            ok = true;
            break;
        }
    }
    assert!(ok, "a freed slot is usable again");
    assert_eq!(srv.counters.snapshot().tcp_evicted, 1, "no eviction needed");
    // The connections still open were never cut.
    for s in held.iter_mut().chain([&mut extra]) {
        s.write_all(&ask(70)).await.unwrap();
        assert!(read_frame(s).await.is_some());
    }
    srv.stop().await;
}

fn qname(name: &str) -> Vec<u8> {
    let mut v = Vec::new();
    for l in name.split('.').filter(|l| !l.is_empty()) {
        v.push(l.len() as u8);
        v.extend_from_slice(l.as_bytes());
    }
    v.push(0);
    v
}

/// Malformed packets that must get FORMERR (or nothing, when they cannot be answered at all).
fn garbage(i: u32, rand: &mut impl FnMut() -> u32) -> (Vec<u8>, bool) {
    let id = (i & 0xFFFF) as u16;
    let head = |qd: u16, an: u16, ns: u16, ar: u16| {
        let mut v = id.to_be_bytes().to_vec();
        v.extend_from_slice(&[0x01, 0x00]);
        for c in [qd, an, ns, ar] {
            v.extend_from_slice(&c.to_be_bytes());
        }
        v
    };
    let question = {
        let mut q = qname("meta.pigsty.test");
        q.extend_from_slice(&[0, 1, 0, 1]);
        q
    };
    let opt = [0u8, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, 0, 0];
    match i % 8 {
        // Truncated inside the question (at least the header kept).
        0 => {
            let mut v = head(1, 0, 0, 0);
            let cut = (rand() as usize) % question.len();
            v.extend_from_slice(&question[..cut]);
            (v, true)
        }
        // Compression loop.
        1 => {
            let mut v = head(1, 0, 0, 0);
            v.extend_from_slice(&[1, b'x', 0xC0, 12, 0, 1, 0, 1]);
            (v, true)
        }
        // Two OPT records.
        2 => {
            let mut v = head(1, 0, 0, 2);
            v.extend_from_slice(&question);
            v.extend_from_slice(&opt);
            v.extend_from_slice(&opt);
            (v, true)
        }
        // Huge QDCOUNT.
        3 => {
            let mut v = head(0xFFFF - (rand() % 100) as u16, 0, 0, 0);
            v.extend_from_slice(&question);
            (v, true)
        }
        // Counts promise records that are not there.
        4 => {
            let mut v = head(
                1,
                (rand() % 50) as u16 + 1,
                rand() as u16 % 3,
                rand() as u16 % 3,
            );
            v.extend_from_slice(&question);
            (v, true)
        }
        // Random bytes after a valid header with one question claimed and a bad label type first.
        5 => {
            let mut v = head(1, 0, 0, 0);
            v.push(0x40 | (rand() as u8 & 0x3F));
            for _ in 0..(rand() % 60) {
                v.push(rand() as u8);
            }
            (v, true)
        }
        // Under 12 bytes: dropped.
        6 => ((0..(rand() % 12)).map(|_| rand() as u8).collect(), false),
        // A response (QR=1): dropped.
        _ => {
            let mut v = head(1, 0, 0, 0);
            v[2] |= 0x80;
            v.extend_from_slice(&question);
            (v, false)
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_gets_formerr_or_nothing_and_the_server_survives() {
    let srv = start(test_config());
    let sock = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let mut state = 0x1234_5678u32;
    let mut rand = move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state
    };
    let mut formerr = 0;
    for i in 0..3000u32 {
        let (packet, answered) = garbage(i, &mut rand);
        sock.send_to(&packet, srv.addr).await.unwrap();
        if answered {
            let reply = udp_recv(&sock, srv.addr, WAIT)
                .await
                .unwrap_or_else(|| panic!("no reply to {packet:?}"));
            let m = Message::from_vec(&reply).unwrap();
            assert_eq!(m.metadata.message_type, MessageType::Response);
            assert_eq!(
                m.metadata.response_code,
                ResponseCode::FormErr,
                "{packet:?}"
            );
            assert!(m.answers.is_empty() && m.authorities.is_empty() && !m.metadata.authoritative);
            formerr += 1;
        }
    }
    // Nothing answered the dropped ones.
    assert!(
        udp_recv(&sock, srv.addr, Duration::from_millis(200))
            .await
            .is_none()
    );
    let snap = srv.counters.snapshot();
    assert_eq!(snap.formerr, formerr);
    assert_eq!(snap.dropped, 750);
    // Garbage over TCP too, then a normal query on a fresh connection.
    for i in 0..200u32 {
        let (packet, answered) = garbage(i, &mut rand);
        if answered && packet.len() >= 12 {
            let m = Message::from_vec(&tcp_raw(srv.addr, &packet).await).unwrap();
            assert_eq!(m.metadata.response_code, ResponseCode::FormErr);
        }
    }
    let m = udp(srv.addr, &query(1, "meta.pigsty.test.", RecordType::A)).await;
    assert_eq!(a_of(&m), vec![Ipv4Addr::new(10, 10, 10, 10)]);
    let m = tcp(srv.addr, &query(2, "meta.pigsty.test.", RecordType::A)).await;
    assert_eq!(a_of(&m), vec![Ipv4Addr::new(10, 10, 10, 10)]);
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hot_swap_switches_answers_without_mixing() {
    let srv = start(test_config());
    let zone = srv.zone.clone();
    let addr = srv.addr;
    let client = tokio::spawn(async move {
        let mut seen_new = 0u32;
        // Bounded: the swap happens 30 ms in; each query takes well under a millisecond.
        for i in 0..20_000u32 {
            let m = udp(addr, &query(i as u16, "meta.pigsty.test.", RecordType::A)).await;
            let got = a_of(&m);
            // One generation per query: either the old address or the new one, never nothing.
            assert!(
                got == vec![Ipv4Addr::new(10, 10, 10, 10)]
                    || got == vec![Ipv4Addr::new(10, 10, 10, 20)],
                "{m}"
            );
            if got == vec![Ipv4Addr::new(10, 10, 10, 20)] {
                seen_new += 1;
            } else {
                assert_eq!(seen_new, 0, "answers never switch back");
            }
            if seen_new >= 100 {
                return true;
            }
        }
        false
    });
    tokio::time::sleep(Duration::from_millis(30)).await;
    zone.store(std::sync::Arc::new(view(
        2,
        &[
            ("meta.pigsty.test", [10, 10, 10, 20]),
            ("new.pigsty.test", [10, 10, 10, 21]),
        ],
    )));
    assert!(client.await.unwrap(), "the client saw the new generation");
    let m = udp(addr, &query(1, "pigsty.test.", RecordType::SOA)).await;
    let RData::SOA(soa) = &m.answers[0].data else {
        panic!()
    };
    assert_eq!(soa.serial, 2);
    assert_eq!(
        a_of(&udp(addr, &query(2, "new.pigsty.test.", RecordType::A)).await),
        vec![Ipv4Addr::new(10, 10, 10, 21)]
    );
    assert_negative(
        &udp(addr, &query(3, "a.b.pigsty.test.", RecordType::A)).await,
        ResponseCode::NXDomain,
        2,
    );
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_is_prompt_and_releases_the_port() {
    let srv = start(test_config());
    let addr = srv.addr;
    // An open idle TCP connection must not hold shutdown up past the grace period.
    let mut idle = TcpStream::connect(addr).await.unwrap();
    idle.write_all(&frame(
        &query(1, "meta.pigsty.test.", RecordType::A)
            .to_vec()
            .unwrap(),
    ))
    .await
    .unwrap();
    assert!(read_frame(&mut idle).await.is_some());
    let t = std::time::Instant::now();
    srv.stop().await;
    assert!(
        t.elapsed() < Duration::from_secs(1),
        "shutdown took {:?}",
        t.elapsed()
    );
    assert!(
        closed_within(&mut idle, WAIT).await,
        "connections are closed at shutdown"
    );
    assert!(
        udp_raw(
            addr,
            &query(2, "meta.pigsty.test.", RecordType::A)
                .to_vec()
                .unwrap()
        )
        .await
        .is_none()
    );
    // Both sockets are released: the same address binds again.
    let again = ServerConfig {
        listen: vec![addr],
        ..test_config()
    };
    let srv = start(again);
    assert_eq!(srv.addr, addr);
    srv.stop().await;
}

/// Issue 11 §3: busy TCP connections must not lock other TCP clients out. Self-contained (only the
/// `common` server and message helpers), so it can move to another test binary as it is.
mod tcp_slot_pressure {
    use super::*;
    use tokio::io::AsyncReadExt;
    use tokio::time::{Instant, sleep, sleep_until, timeout};

    /// One framed exchange on `s`, bounded by `wait`: the answer's ID, or `None` (closed, reset, or no
    /// answer in time).
    async fn exchange(s: &mut TcpStream, id: u16, wait: Duration) -> Option<u16> {
        let q = frame(
            &query(id, "meta.pigsty.test.", RecordType::A)
                .to_vec()
                .unwrap(),
        );
        timeout(wait, async {
            s.write_all(&q).await.ok()?;
            let mut len = [0u8; 2];
            s.read_exact(&mut len).await.ok()?;
            let mut body = vec![0u8; usize::from(u16::from_be_bytes(len))];
            s.read_exact(&mut body).await.ok()?;
            let m = Message::from_vec(&body).ok()?;
            (m.metadata.response_code == ResponseCode::NoError).then_some(m.metadata.id)
        })
        .await
        .ok()
        .flatten()
    }

    /// A busy client as in the issue: it holds one connection and sends one query every `period`
    /// (first at `start`); when the server closes it, it connects again at its next tick. Stops at
    /// `until` and closes its connection. Returns how many of its queries were answered.
    async fn busy_client(
        addr: std::net::SocketAddr,
        start: Instant,
        period: Duration,
        until: Instant,
    ) -> u32 {
        let mut conn: Option<TcpStream> = None;
        let mut answered = 0;
        let mut tick = start;
        let mut id: u16 = 0;
        loop {
            // The connection is held until `until`, however the ticks fall.
            sleep_until(tick.min(until)).await;
            if Instant::now() >= until {
                break;
            }
            tick += period;
            if conn.is_none() {
                conn = timeout(period, TcpStream::connect(addr))
                    .await
                    .ok()
                    .and_then(Result::ok);
            }
            let Some(s) = conn.as_mut() else { continue };
            id = id.wrapping_add(1);
            if exchange(s, id, period).await == Some(id) {
                answered += 1;
            } else {
                conn = None;
            }
        }
        answered
    }

    /// `busy` busy clients against a server with `cap` slots; after `warm_up` (every slot taken), an
    /// ordinary client makes `queries` queries, each on a fresh connection (as `dig +tcp` does), 100 ms
    /// apart, each bounded by 1 s. Returns (ordinary answers, busy answers).
    async fn lock_out_run(
        cfg: ServerConfig,
        busy: usize,
        period: Duration,
        warm_up: Duration,
        queries: u16,
    ) -> (u16, u32, Running) {
        let srv = start(cfg);
        let t0 = Instant::now();
        let until = t0
            + warm_up
            + Duration::from_millis(100) * u32::from(queries)
            + Duration::from_millis(500);
        let mut attackers = tokio::task::JoinSet::new();
        for i in 0..busy {
            // Ticks spread evenly over one period, as independent clients would be.
            let start = t0 + period * i as u32 / busy as u32;
            attackers.spawn(busy_client(srv.addr, start, period, until));
        }
        sleep_until(t0 + warm_up).await;
        let mut answered = 0;
        for i in 0..queries {
            let id = 10_000 + i;
            let answer = match timeout(Duration::from_secs(1), TcpStream::connect(srv.addr)).await {
                Ok(Ok(mut s)) => exchange(&mut s, id, Duration::from_secs(1)).await,
                _ => None,
            };
            if answer == Some(id) {
                answered += 1;
            }
            sleep(Duration::from_millis(100)).await;
        }
        let mut busy_answered = 0;
        while let Some(n) = timeout(Duration::from_secs(5), attackers.join_next())
            .await
            .expect("the busy clients stop by themselves")
        {
            busy_answered += n.unwrap();
        }
        (answered, busy_answered, srv)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn busy_connections_do_not_lock_out_an_ordinary_client() {
        // 140 clients each sending a query every 600 ms — more often than even the shortened idle timeout
        // (1 s) — against 16 slots: on their own they would hold every slot forever.
        let cfg = ServerConfig {
            tcp_max_connections: 16,
            tcp_idle_timeout: Duration::from_secs(2),
            ..test_config()
        };
        let (answered, busy_answered, srv) = lock_out_run(
            cfg,
            140,
            Duration::from_millis(600),
            Duration::from_millis(1500),
            20,
        )
        .await;
        let snap = srv.counters.snapshot();
        eprintln!("ordinary {answered}/20, busy answered {busy_answered}, {snap:?}");
        assert_eq!(
            answered, 20,
            "the ordinary client gets every answer; {snap:?}"
        );
        assert!(busy_answered > 0);
        srv.stop().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn busy_connections_do_not_lock_out_at_the_default_cap() {
        // The defaults (128 slots, 10 s idle timeout): 140 clients each sending a query every 2 s.
        let cfg = ServerConfig {
            tcp_max_connections: pigsty_dns::defaults::TCP_MAX_CONNECTIONS,
            tcp_idle_timeout: Duration::from_secs(pigsty_dns::defaults::TCP_IDLE_TIMEOUT_SECS),
            ..test_config()
        };
        let (answered, busy_answered, srv) = lock_out_run(
            cfg,
            140,
            Duration::from_secs(2),
            Duration::from_millis(2500),
            10,
        )
        .await;
        let snap = srv.counters.snapshot();
        eprintln!("ordinary {answered}/10, busy answered {busy_answered}, {snap:?}");
        assert_eq!(
            answered, 10,
            "the ordinary client gets every answer; {snap:?}"
        );
        assert!(busy_answered > 0);
        srv.stop().await;
    }

    #[tokio::test]
    async fn idle_timeout_halves_above_half_full() {
        let cfg = ServerConfig {
            tcp_max_connections: 4,
            tcp_idle_timeout: Duration::from_millis(800),
            ..test_config()
        };
        let srv = start(cfg);
        // Alone (1 of 4, not above half): the full timeout.
        let mut s = TcpStream::connect(srv.addr).await.unwrap();
        assert_eq!(exchange(&mut s, 1, WAIT).await, Some(1));
        let t = Instant::now();
        assert!(closed_within(&mut s, WAIT).await);
        assert!(
            t.elapsed() >= Duration::from_millis(700),
            "{:?}",
            t.elapsed()
        );
        drop(s);
        // Three of 4 (above half): a connection that starts waiting now gets half of it.
        let mut a = TcpStream::connect(srv.addr).await.unwrap();
        let mut b = TcpStream::connect(srv.addr).await.unwrap();
        assert_eq!(exchange(&mut a, 2, WAIT).await, Some(2));
        assert_eq!(exchange(&mut b, 3, WAIT).await, Some(3));
        let mut c = TcpStream::connect(srv.addr).await.unwrap();
        assert_eq!(exchange(&mut c, 4, WAIT).await, Some(4));
        let t = Instant::now();
        assert!(closed_within(&mut c, WAIT).await);
        let took = t.elapsed();
        assert!(
            took >= Duration::from_millis(300) && took < Duration::from_millis(700),
            "closed after {took:?}, want about 400 ms"
        );
        drop((a, b));
        srv.stop().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_connection_whose_answers_stall_is_evicted() {
        // One slot. A client pipelines ~8 MB worth of answers and reads none, so the server's write
        // stalls; a connection that comes later takes the slot.
        let cfg = ServerConfig {
            tcp_max_connections: 1,
            tcp_idle_timeout: Duration::from_secs(10),
            ..test_config()
        };
        let srv = start(cfg);
        let sock = tokio::net::TcpSocket::new_v4().unwrap();
        sock.set_recv_buffer_size(4096).unwrap();
        let mut stalled = sock.connect(srv.addr).await.unwrap();
        let q = frame(
            &query(1, "meta.pigsty.test.", RecordType::A)
                .to_vec()
                .unwrap(),
        );
        let flood: Vec<u8> = q.iter().copied().cycle().take(q.len() * 150_000).collect();
        let writer = tokio::spawn(async move {
            // Blocks once the server stops reading; bounded, and the socket closes with the task.
            let _ = timeout(Duration::from_secs(6), stalled.write_all(&flood)).await;
            stalled
        });
        // Well past the point where the server's write has stalled for STALLED_WRITE (1 s).
        sleep(Duration::from_millis(2500)).await;
        let mut late = TcpStream::connect(srv.addr).await.unwrap();
        assert_eq!(
            exchange(&mut late, 7, WAIT).await,
            Some(7),
            "the late connection is served"
        );
        let snap = srv.counters.snapshot();
        assert_eq!((snap.tcp_evicted, snap.tcp_refused), (1, 0), "{snap:?}");
        drop(writer);
        srv.stop().await;
    }
}

mod reverse {
    //! The reverse zone (`10.10.10.in-addr.arpa`) through real sockets: built from a `host-names.yml`
    //! text, so the PTRs follow the real canonical-name rule.

    use super::*;
    use pigsty_dns::zone::view::fixtures::reverse::{YAML, view_from};

    const APEX: &str = "10.10.10.in-addr.arpa.";

    fn assert_reverse_negative(m: &Message, rcode: ResponseCode, serial: u32) {
        assert_negative(m, rcode, serial);
        assert_eq!(m.authorities[0].name.to_ascii().to_ascii_lowercase(), APEX);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn answers_every_reverse_rule_over_udp_and_tcp() {
        let srv = start_with(test_config(), view_from(YAML, 4));
        for over_tcp in [false, true] {
            let ask = |m: Message| async move {
                if over_tcp {
                    tcp(srv.addr, &m).await
                } else {
                    udp(srv.addr, &m).await
                }
            };
            let m = ask(query(1, "10.10.10.10.in-addr.arpa.", RecordType::PTR)).await;
            assert_eq!(m.metadata.response_code, ResponseCode::NoError);
            assert!(m.metadata.authoritative && !m.metadata.recursion_available);
            assert_eq!(ptr_of(&m), ["meta.pigsty.test."]);
            assert_eq!(m.answers[0].ttl, TTL);
            let m = ask(query(2, "11.10.10.10.in-addr.arpa.", RecordType::PTR)).await;
            assert_eq!(ptr_of(&m), ["b.pigsty.test."], "first served vm_hosts name");
            let m = ask(query(3, "11.10.10.10.in-addr.arpa.", RecordType::ANY)).await;
            assert_eq!(ptr_of(&m), ["b.pigsty.test."], "ANY: the PTR RRset only");

            for nx in [
                "12.10.10.10.in-addr.arpa.",
                "200.10.10.10.in-addr.arpa.",
                "010.10.10.10.in-addr.arpa.",
                "x.10.10.10.10.in-addr.arpa.",
            ] {
                let m = ask(query(4, nx, RecordType::PTR)).await;
                assert_reverse_negative(&m, ResponseCode::NXDomain, 4);
            }
            for t in [RecordType::A, RecordType::AAAA, RecordType::TXT] {
                let m = ask(query(5, "10.10.10.10.in-addr.arpa.", t)).await;
                assert_reverse_negative(&m, ResponseCode::NoError, 4);
            }
            let m = ask(query(6, APEX, RecordType::PTR)).await;
            assert_reverse_negative(&m, ResponseCode::NoError, 4);

            let m = ask(query(7, APEX, RecordType::SOA)).await;
            let RData::SOA(soa) = &m.answers[0].data else {
                panic!("{m}")
            };
            assert_eq!((soa.serial, soa.minimum, m.answers[0].ttl), (4, NEG, TTL));
            let m = ask(query(8, APEX, RecordType::ANY)).await;
            assert_eq!(m.answers[0].record_type(), RecordType::SOA);
            let m = ask(query(9, APEX, RecordType::NS)).await;
            let RData::NS(ns) = &m.answers[0].data else {
                panic!("{m}")
            };
            assert_eq!(ns.0.to_ascii(), "localhost.");

            for refused in [
                query(10, "11.10.10.in-addr.arpa.", RecordType::SOA),
                query(11, "10.in-addr.arpa.", RecordType::SOA),
                query(12, "1.0.0.127.in-addr.arpa.", RecordType::PTR),
                query(13, "ip6.arpa.", RecordType::SOA),
                query(14, APEX, RecordType::AXFR),
            ] {
                let r = ask(refused).await;
                assert_eq!(r.metadata.response_code, ResponseCode::Refused, "{r}");
                assert!(!r.metadata.authoritative && r.answers.is_empty());
            }
        }
        srv.stop().await;
    }

    #[tokio::test]
    async fn edns_truncation_and_0x20_as_in_the_forward_zone() {
        let cfg = udp_capped(60);
        let srv = start_with(cfg, view_from(YAML, 4));
        let name = "10.10.10.10.In-AdDr.ArPa.";
        let q = with_edns(query(0x2020, name, RecordType::PTR), 1232, true);
        let bytes = q.to_vec().unwrap();
        let qlen = bytes.len() - 12 - 11;
        // Over UDP the answer (83 bytes) is over the 60-byte cap: TC=1 with the question and OPT only.
        let reply = udp_raw(srv.addr, &bytes).await.unwrap();
        assert_eq!(&reply[12..12 + qlen], &bytes[12..12 + qlen], "0x20 kept");
        let m = Message::from_vec(&reply).unwrap();
        assert!(m.metadata.truncation && m.answers.is_empty(), "{m}");
        assert!(m.edns.as_ref().unwrap().flags().dnssec_ok);
        assert_eq!(reply.len(), 12 + qlen + 11);
        // TCP: complete.
        let reply = tcp_raw(srv.addr, &bytes).await;
        assert_eq!(&reply[12..12 + qlen], &bytes[12..12 + qlen]);
        let m = Message::from_vec(&reply).unwrap();
        assert!(!m.metadata.truncation);
        assert_eq!(ptr_of(&m), ["meta.pigsty.test."]);
        let e = m.edns.as_ref().unwrap();
        assert_eq!(e.max_payload(), 1232);
        let mut v1 = with_edns(query(3, APEX, RecordType::SOA), 1232, false);
        v1.edns.as_mut().unwrap().set_version(1);
        let r = tcp(srv.addr, &v1).await;
        // hickory decodes extended rcode 16 as BADSIG, which shares the number with BADVERS.
        assert_eq!(u16::from(r.metadata.response_code), 16, "{r}");
        assert_eq!(r.edns.as_ref().unwrap().version(), 0);
        srv.stop().await;
    }

    /// Both zones swap as one: every reverse answer during the swap is wholly of one generation (a
    /// PTR of the first, or an NXDOMAIN whose SOA has the second's serial), and never switches back.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn both_zones_swap_together() {
        let first = "all:\n  hosts: { 10.10.10.10: { nodename: meta } }\n";
        let second = "all:\n  hosts: { 10.10.10.20: { nodename: meta } }\n";
        let srv = start_with(test_config(), view_from(first, 1));
        let zone = srv.zone.clone();
        let addr = srv.addr;
        let client = tokio::spawn(async move {
            let mut seen_new = 0u32;
            for i in 0..20_000u32 {
                let m = udp(
                    addr,
                    &query(i as u16, "10.10.10.10.in-addr.arpa.", RecordType::PTR),
                )
                .await;
                if m.metadata.response_code == ResponseCode::NoError {
                    assert_eq!(ptr_of(&m), ["meta.pigsty.test."]);
                    assert_eq!(seen_new, 0, "answers never switch back");
                } else {
                    assert_reverse_negative(&m, ResponseCode::NXDomain, 2);
                    seen_new += 1;
                }
                if seen_new >= 100 {
                    return true;
                }
            }
            false
        });
        tokio::time::sleep(Duration::from_millis(30)).await;
        zone.store(std::sync::Arc::new(view_from(second, 2)));
        assert!(client.await.unwrap(), "the client saw the new generation");
        let m = udp(
            addr,
            &query(1, "20.10.10.10.in-addr.arpa.", RecordType::PTR),
        )
        .await;
        assert_eq!(ptr_of(&m), ["meta.pigsty.test."]);
        let m = udp(addr, &query(2, "meta.pigsty.test.", RecordType::A)).await;
        assert_eq!(a_of(&m), vec![Ipv4Addr::new(10, 10, 10, 20)]);
        srv.stop().await;
    }
}
