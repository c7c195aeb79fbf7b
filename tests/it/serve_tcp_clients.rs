//! Many TCP clients at once (issue 24, risk 8): 1,000 concurrent connections, each sending 5 queries
//! pipelined, are all answered with the default settings — no client gets EOF with a query sent —
//! while UDP is answered meanwhile.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use hickory_proto::op::Message;
use hickory_proto::rr::RecordType;

use crate::differential::{Case, udp_exchange};
use crate::transfer_clients::{load_text, start, state_dir, yaml};

const CLIENTS: usize = 1000;
const QUERIES: usize = 5;

#[test]
fn a_thousand_tcp_clients_lose_no_query() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, state) = (tmp.path(), state_dir(tmp.path()));
    load_text(dir, &state, &yaml(20, ""));
    let server = start(dir, &state, &[]);
    let addr = server.addr;
    let q = Case::plain("h-3.pigsty.test.", RecordType::A).wire(7);
    let mut framed = Vec::new();
    for _ in 0..QUERIES {
        framed.extend_from_slice(&(q.len() as u16).to_be_bytes());
        framed.extend_from_slice(&q);
    }
    // Every client connects and sends before any reads: all 1,000 are open at once.
    let mut conns: Vec<TcpStream> = (0..CLIENTS)
        .map(|i| {
            let s = TcpStream::connect(addr).unwrap_or_else(|e| panic!("client {i}: {e}"));
            s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            s
        })
        .collect();
    for s in &mut conns {
        s.write_all(&framed).unwrap();
    }
    // UDP meanwhile.
    let m = Message::from_vec(&udp_exchange(addr, &q).unwrap()).unwrap();
    assert_eq!(m.answers.len(), 1);
    let mut lost = Vec::new();
    for (i, s) in conns.iter_mut().enumerate() {
        for k in 0..QUERIES {
            let mut len = [0u8; 2];
            if let Err(e) = s.read_exact(&mut len) {
                lost.push(format!("client {i} answer {k}: {e}"));
                break;
            }
            let mut buf = vec![0u8; usize::from(u16::from_be_bytes(len))];
            s.read_exact(&mut buf).unwrap();
            assert_eq!(Message::from_vec(&buf).unwrap().answers.len(), 1);
        }
    }
    assert!(
        lost.is_empty(),
        "{} of {CLIENTS} clients lost queries, e.g. {:?}",
        lost.len(),
        &lost[..lost.len().min(3)]
    );
}
