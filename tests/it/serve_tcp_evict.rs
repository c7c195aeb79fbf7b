//! An evicted TCP connection answers the queries it already received before it closes (issue 24): a
//! connection at the cap is closed for a new one only after every complete query it holds, read or
//! still in the kernel's buffer, has its answer.
//!
//! Made deterministic with one slot (`--tcp-max-connections 1`) and a connection that is busy sending
//! a zone transfer to a client that has stopped reading: the server reads nothing more from it while
//! the transfer is under way, so queries the client pipelines behind the transfer request are
//! certainly in the kernel's buffer, unread, when the connection is evicted. It can be evicted once its
//! write has stalled for a second; until then each new connection is refused (closed at once), so the
//! test tries a bounded number of times. Then the client reads again: the whole transfer, an answer to
//! every query, then the close. The idle case (evicted while waiting for its next query) is made
//! reproducible by stopping the server while both the new connection and the old one's queries arrive.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use hickory_proto::op::Message;
use hickory_proto::rr::RecordType;

use crate::differential::Case;
use crate::transfer_clients::{load_text, request, socket_with, start, state_dir, yaml};

/// Enough for the transfer (about 0.6 MB) to fill the transfer socket's capped send buffer and the
/// client's 4 KiB window many times over, so the server's write certainly stalls.
const NAMES: usize = 20_000;
/// Queries pipelined behind the transfer request.
const QUEUED: u16 = 5;
/// Bounds every read, and the attempts of the new connection (every 100 ms).
const WAIT: Duration = Duration::from_secs(20);

fn framed(q: &[u8]) -> Vec<u8> {
    let mut f = (q.len() as u16).to_be_bytes().to_vec();
    f.extend_from_slice(q);
    f
}

/// One framed message, or the error that ended the connection (EOF is `UnexpectedEof`).
fn read_message(s: &mut TcpStream) -> std::io::Result<Message> {
    let mut len = [0u8; 2];
    s.read_exact(&mut len)?;
    let mut buf = vec![0u8; usize::from(u16::from_be_bytes(len))];
    s.read_exact(&mut buf)?;
    Message::from_vec(&buf).map_err(|e| std::io::Error::new(ErrorKind::InvalidData, e))
}

/// A new connection that is served (it evicted the one in the table), after those refused while
/// nothing could be evicted; how many were refused.
fn connect_until_admitted(addr: SocketAddr) -> (TcpStream, usize) {
    let soa = framed(&request(1, "pigsty.test.", RecordType::SOA, None));
    let deadline = Instant::now() + WAIT;
    for refused in 0.. {
        assert!(
            Instant::now() < deadline,
            "never admitted ({refused} refused)"
        );
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(WAIT)).unwrap();
        // Refused: closed at once, so the write may fail or the read see EOF or a reset.
        if s.write_all(&soa).is_ok()
            && let Ok(m) = read_message(&mut s)
        {
            assert_eq!(m.answers.len(), 1, "the new connection's SOA");
            return (s, refused);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    unreachable!()
}

/// Evicted early, between two of the transfer's messages (where it counts as idle), and evicted late,
/// once its write has stalled for a second (the buffers fill within milliseconds; each new connection
/// before that second is refused): in both, the queries behind the transfer request are unread.
#[test]
fn an_evicted_connection_answers_what_it_already_received() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, state) = (tmp.path(), state_dir(tmp.path()));
    load_text(dir, &state, &yaml(NAMES, ""));
    let server = start(
        dir,
        &state,
        &[
            "--allow-transfer",
            "127.0.0.1",
            "--tcp-max-connections",
            "1",
        ],
    );
    for wait in [Duration::ZERO, Duration::from_millis(300)] {
        evicted_with_queued_queries(server.addr, wait);
    }
}

/// A asks for the zone, pipelines queries behind it and stops reading; after `wait` a new connection
/// evicts it; A must then read the whole transfer, each query's answer, and a close.
fn evicted_with_queued_queries(addr: SocketAddr, wait: Duration) {
    // The queries are sent once the transfer is seen to start: the server has read the request and
    // reads nothing more until the transfer ends.
    let mut a = socket_with("127.0.0.1", addr, Some(4096)).unwrap();
    a.set_read_timeout(Some(WAIT)).unwrap();
    a.write_all(&framed(&request(
        100,
        "pigsty.test.",
        RecordType::AXFR,
        None,
    )))
    .unwrap();
    let mut transfer = vec![read_message(&mut a).expect("the transfer's first message")];
    let mut queued = Vec::new();
    for id in 0..QUEUED {
        let name = format!("h-{id}.pigsty.test.");
        queued.extend_from_slice(&framed(&Case::plain(&name, RecordType::A).wire(200 + id)));
    }
    a.write_all(&queued).unwrap();
    std::thread::sleep(wait);
    let (_e, refused) = connect_until_admitted(addr);

    // The rest of the transfer (it ends with the SOA it began with), then every queued query's
    // answer in order, then the close.
    let soa_count = |m: &Message| {
        m.answers
            .iter()
            .filter(|r| r.record_type() == RecordType::SOA)
            .count()
    };
    let mut soas = soa_count(&transfer[0]);
    while soas < 2 {
        let m = read_message(&mut a)
            .unwrap_or_else(|e| panic!("transfer cut after {} messages: {e}", transfer.len()));
        soas += soa_count(&m);
        transfer.push(m);
    }
    let records: usize = transfer.iter().map(|m| m.answers.len()).sum();
    assert_eq!(
        records,
        NAMES + 1 + 3,
        "the whole zone: names, meta, SOA twice, NS"
    );
    let mut answered = Vec::new();
    for _ in 0..QUEUED {
        match read_message(&mut a) {
            Ok(m) => answered.push((m.id, m.answers.len())),
            Err(e) => panic!(
                "an evicted connection lost queued queries: {} of {QUEUED} answered, then {e} \
                 (evicted after {wait:?} and {refused} refused connections)",
                answered.len()
            ),
        }
    }
    let want: Vec<(u16, usize)> = (0..QUEUED).map(|id| (200 + id, 1)).collect();
    assert_eq!(answered, want);
    eprintln!(
        "evicted after {wait:?} and {refused} refused connections; {} transfer messages and \
         {QUEUED} answers read after it",
        transfer.len()
    );
    let mut rest = [0u8; 1];
    assert_eq!(
        a.read(&mut rest)
            .expect("a close, not a reset or a timeout"),
        0
    );
}

/// Sends SIGCONT to the server when dropped, so a failing test never leaves it stopped.
struct Stopped(i32);

impl Stopped {
    /// Returns once every thread of the server is stopped (the signal is delivered asynchronously: a
    /// thread still running could accept the new connection before the old one's queries are sent).
    fn new(pid: i32) -> Stopped {
        // SAFETY: a signal to the server this test started.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
        let stopped = Stopped(pid);
        let deadline = Instant::now() + WAIT;
        while !all_threads_stopped(pid) {
            assert!(Instant::now() < deadline, "the server did not stop");
            std::thread::yield_now();
        }
        stopped
    }
}

/// Whether every thread in /proc/PID/task is in state T (stopped).
fn all_threads_stopped(pid: i32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().all(|t| {
        std::fs::read_to_string(t.path().join("stat")).is_ok_and(|st| {
            // The state follows the command name's closing parenthesis.
            st.rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('T'))
        })
    })
}

impl Drop for Stopped {
    fn drop(&mut self) {
        // SAFETY: as above.
        unsafe { libc::kill(self.0, libc::SIGCONT) };
    }
}

/// The idle case: the one connection in the table waits for its next query when a new connection
/// arrives, and its queries are already in the kernel. The server is stopped (SIGSTOP) while the new
/// connection is made and the old one's queries are sent, so both are there when it resumes. Either
/// the new connection evicts the old one, which answers every query and closes; or the old one has
/// already read them and is writing its answers (a write that moves is never cut), so the new one is
/// refused and the old one stays. Every query is answered in both.
#[test]
fn an_idle_evicted_connection_answers_queries_sent_before_the_eviction() {
    const ROUNDS: u16 = 20;
    let tmp = tempfile::tempdir().unwrap();
    let (dir, state) = (tmp.path(), state_dir(tmp.path()));
    load_text(dir, &state, &yaml(20, ""));
    let server = start(dir, &state, &["--tcp-max-connections", "1"]);
    let st: serde_json::Value =
        serde_json::from_slice(&std::fs::read(state.join("status.json")).unwrap()).unwrap();
    let pid = i32::try_from(st["pid"].as_u64().unwrap()).unwrap();
    let (mut old, _) = connect_until_admitted(server.addr);
    let mut evicted = 0;
    for round in 0..ROUNDS {
        let id = 300 + round * QUEUED;
        let queued: Vec<u8> = (0..QUEUED)
            .flat_map(|k| framed(&Case::plain("h-3.pigsty.test.", RecordType::A).wire(id + k)))
            .collect();
        let soa = framed(&request(id, "pigsty.test.", RecordType::SOA, None));
        let mut new = {
            let _stopped = Stopped::new(pid);
            let mut new = TcpStream::connect(server.addr).unwrap();
            new.set_read_timeout(Some(WAIT)).unwrap();
            new.write_all(&soa).unwrap();
            old.write_all(&queued).unwrap();
            new
        };
        let mut answered = Vec::new();
        for _ in 0..QUEUED {
            match read_message(&mut old) {
                Ok(m) => answered.push(m.id),
                Err(e) => panic!(
                    "round {round}: the old connection answered {} of {QUEUED}, then {e}",
                    answered.len()
                ),
            }
        }
        assert_eq!(answered, (id..id + QUEUED).collect::<Vec<_>>());
        // Refused: closed at once, its query unread (a reset) or not (EOF).
        let Ok(m) = read_message(&mut new) else {
            continue;
        };
        assert_eq!(m.id, id, "round {round}");
        let mut rest = [0u8; 1];
        assert_eq!(old.read(&mut rest).expect("a close"), 0, "round {round}");
        evicted += 1;
        old = new;
    }
    eprintln!(
        "{evicted} of {ROUNDS} rounds evicted the old connection; the rest refused the new one"
    );
    assert!(evicted > 0, "no round evicted the old connection");
}
