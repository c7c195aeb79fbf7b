//! Differential answers: the same generated query corpus sent to pigsty-dns, Knot and NSD, all serving the
//! zone that `pigsty-dns export --format zone` writes and the reverse zone that `export --format zone
//! --zone-of reverse` writes, and every response compared field by field.
//!
//! Gated on `PIGSTY_DNS_E2E=1` (needs Debian's `knot` and `nsd`; `tests/install-peers.sh` installs them).
//! With the variable set, a missing knotd or nsd is a failure, never a skip.
//!
//! Compared per query: rcode (extended rcode included), AA, TC, RD, RA, AD, CD, whether the question is
//! echoed byte for byte, the answer and authority sections as sorted (owner, TTL, class, type, rdata)
//! lines (names compared case-insensitively), and the OPT (presence, version, DO, options). The
//! differences that remain are the ones in [`ALLOWED`], each with the RFC text that allows either
//! behaviour; everything else fails the test, and so does an allowed difference that no longer occurs.
//!
//! Corpus (deterministic): every served name as is, upper-cased and 0x20-cased, a child of each, every
//! parent up to the apex (empty non-terminals), siblings, a dotted label, `_tcp`, a 255-octet name,
//! random non-existent names, the apex, names outside the zone; A AAAA MX TXT SOA NS CNAME ANY TYPE666 in
//! classes IN and CH, each without EDNS and with payload 512/1232/4096, DO, an unknown option and
//! version 1 (PTR too); in the reverse zone every address with a PTR (as is, upper-cased, 0x20-cased,
//! a child), addresses without names, labels that are not octets (`010`, `256`), its apex, and the other
//! reverse zones (another /24, its parents, 127/8, `ip6.arpa`); a slice over TCP; header flags AA AD CD RA TC Z set in queries; opcodes 1 2 3 6 7 15 with
//! and without a question; AXFR over UDP and TCP; QCLASS ANY and NONE.
//!
//! Every process started here runs under `timeout` in its own process group (so it stops by itself even
//! if this test process dies) and is stopped by PID in a Drop guard with bounded waits. Only 127.0.0.1
//! receives traffic.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hickory_proto::op::{Edns, Message, Query};
use hickory_proto::rr::rdata::opt::EdnsOption;
use hickory_proto::rr::{DNSClass, Name, Record, RecordType};

/// Lifetime of every started server: they stop by themselves after this even if nobody stops them.
const LIFETIME_SECS: u32 = 300;
/// One exchange waits at most this long; a UDP query is retried this many times.
const EXCHANGE_WAIT: Duration = Duration::from_secs(2);
const UDP_TRIES: usize = 3;
/// A server must answer the apex SOA within this after start.
const START_WAIT: Duration = Duration::from_secs(20);

const ZONE: &str = "pigsty.test.";
/// The reverse zone of the records' /24.
const REVERSE: &str = "10.10.10.in-addr.arpa.";

// -------------------------------------------------------------------------------------------------------
// Processes

/// A started server: `timeout LIFETIME cmd…` as leader of its own process group. Drop sends SIGTERM to
/// timeout (which forwards it to the server), waits a bounded time, then SIGKILLs the whole group.
pub(crate) struct Proc {
    name: &'static str,
    child: Child,
    log: PathBuf,
}

impl Proc {
    pub(crate) fn start(name: &'static str, program: &Path, args: &[&str], log: PathBuf) -> Proc {
        let out = std::fs::File::create(&log).expect("log file");
        let err = out.try_clone().expect("log file");
        // --foreground: timeout signals only the server itself, which then stops its own children
        // (NSD's main and server processes) and reaps them.
        let child = Command::new("timeout")
            .arg("--foreground")
            .arg("--kill-after=5")
            .arg(LIFETIME_SECS.to_string())
            .arg(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("start {name} ({}): {e}", program.display()));
        Proc { name, child, log }
    }

    pub(crate) fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub(crate) fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Sends `sig` to the process group this server leads (timeout(1) and the server under it).
    pub(crate) fn signal_group(&self, sig: libc::c_int) {
        // SAFETY: kill(2) on the process group our own, not yet reaped, child leads.
        unsafe { libc::kill(-(self.child.id() as libc::pid_t), sig) };
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        // timeout(1) forwards SIGTERM to the server; the group kill catches anything left.
        if crate::util::stop(&mut self.child, Duration::from_secs(5), true).is_none() {
            eprintln!("{} did not stop", self.name);
        }
    }
}

pub(crate) fn find_program(name: &str) -> PathBuf {
    let path = std::env::var("PATH").unwrap_or_default();
    for dir in path.split(':').chain(["/usr/sbin", "/sbin", "/usr/bin"]) {
        let p = Path::new(dir).join(name);
        if p.is_file() {
            return p;
        }
    }
    panic!(
        "{name} not found (PIGSTY_DNS_E2E=1 needs Knot and NSD): run `bash tests/install-peers.sh` first"
    );
}

/// A port on 127.0.0.1 that is free for both UDP and TCP right now.
pub(crate) fn free_port() -> u16 {
    for _ in 0..50 {
        let Ok(u) = UdpSocket::bind("127.0.0.1:0") else {
            continue;
        };
        let port = u.local_addr().unwrap().port();
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port");
}

// -------------------------------------------------------------------------------------------------------
// Wire exchanges

pub(crate) fn udp_exchange(server: SocketAddr, q: &[u8]) -> Result<Vec<u8>, String> {
    let sock = UdpSocket::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    sock.connect(server).map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(EXCHANGE_WAIT))
        .map_err(|e| e.to_string())?;
    let mut buf = vec![0u8; 65_535];
    for _ in 0..UDP_TRIES {
        sock.send(q).map_err(|e| e.to_string())?;
        // Skip anything that is not the answer to this ID (there should be nothing).
        let deadline = Instant::now() + EXCHANGE_WAIT;
        while Instant::now() < deadline {
            match sock.recv(&mut buf) {
                Ok(n) if n >= 2 && buf[..2] == q[..2] => return Ok(buf[..n].to_vec()),
                Ok(_) => continue,
                Err(_) => break,
            }
        }
    }
    Err(format!(
        "no UDP answer from {server} after {UDP_TRIES} tries"
    ))
}

/// One TCP connection per server for the TCP part of the corpus, reconnected if the server closed it.
struct TcpClient {
    server: SocketAddr,
    conn: Option<TcpStream>,
}

impl TcpClient {
    fn new(server: SocketAddr) -> TcpClient {
        TcpClient { server, conn: None }
    }

    fn once(&mut self, q: &[u8]) -> std::io::Result<Vec<u8>> {
        if self.conn.is_none() {
            let s = TcpStream::connect_timeout(&self.server, EXCHANGE_WAIT)?;
            s.set_read_timeout(Some(EXCHANGE_WAIT))?;
            s.set_write_timeout(Some(EXCHANGE_WAIT))?;
            self.conn = Some(s);
        }
        let s = self.conn.as_mut().expect("connected");
        s.write_all(&crate::util::frame(q))?;
        let mut len = [0u8; 2];
        s.read_exact(&mut len)?;
        let mut body = vec![0u8; usize::from(u16::from_be_bytes(len))];
        s.read_exact(&mut body)?;
        Ok(body)
    }

    fn exchange(&mut self, q: &[u8]) -> Result<Vec<u8>, String> {
        match self.once(q) {
            Ok(b) => Ok(b),
            Err(_) => {
                // Closed by the server (idle timeout or a per-connection limit): once more, fresh.
                self.conn = None;
                self.once(q)
                    .map_err(|e| format!("TCP exchange with {}: {e}", self.server))
            }
        }
    }
}

// -------------------------------------------------------------------------------------------------------
// Corpus

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EdnsVariant {
    None,
    Payload(u16),
    DnssecOk,
    UnknownOption,
    Version1,
}

const EDNS_VARIANTS: [EdnsVariant; 7] = [
    EdnsVariant::None,
    EdnsVariant::Payload(512),
    EdnsVariant::Payload(1232),
    EdnsVariant::Payload(4096),
    EdnsVariant::DnssecOk,
    EdnsVariant::UnknownOption,
    EdnsVariant::Version1,
];

const QTYPES: [RecordType; 10] = [
    RecordType::A,
    RecordType::PTR,
    RecordType::AAAA,
    RecordType::MX,
    RecordType::TXT,
    RecordType::SOA,
    RecordType::NS,
    RecordType::CNAME,
    RecordType::ANY,
    RecordType::Unknown(666),
];

#[derive(Debug, Clone)]
pub(crate) struct Case {
    name: String,
    qtype: RecordType,
    class: DNSClass,
    edns: EdnsVariant,
    rd: bool,
    tcp: bool,
    /// Extra header bits OR'd into bytes 2–3 (AA 0x0400, TC 0x0200, RA 0x0080, Z 0x0040, AD 0x0020,
    /// CD 0x0010), the opcode, and whether the question is left out (genreport's header-only opcode).
    header: Header,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Header {
    flags: u16,
    opcode: u8,
    no_question: bool,
}

impl Case {
    pub(crate) fn plain(name: &str, qtype: RecordType) -> Case {
        Case {
            name: name.into(),
            qtype,
            class: DNSClass::IN,
            edns: EdnsVariant::None,
            rd: false,
            tcp: false,
            header: Header::default(),
        }
    }

    pub(crate) fn describe(&self) -> String {
        format!(
            "{} {} {} edns={:?} rd={} {:?} over {}",
            self.name,
            self.class,
            self.qtype,
            self.edns,
            self.rd,
            self.header,
            if self.tcp { "TCP" } else { "UDP" }
        )
    }

    pub(crate) fn wire(&self, id: u16) -> Vec<u8> {
        let mut m = Message::query();
        m.metadata.id = id;
        m.metadata.recursion_desired = self.rd;
        let mut q = Query::query(
            Name::from_ascii(&self.name).unwrap_or_else(|e| panic!("{}: {e}", self.name)),
            self.qtype,
        );
        q.set_query_class(self.class);
        if !self.header.no_question {
            m.add_query(q);
        }
        let edns = |payload: u16| {
            let mut e = Edns::new();
            e.set_max_payload(payload);
            e.set_dnssec_ok(false);
            e
        };
        match self.edns {
            EdnsVariant::None => {}
            EdnsVariant::Payload(p) => {
                m.set_edns(edns(p));
            }
            EdnsVariant::DnssecOk => {
                let mut e = edns(1232);
                e.set_dnssec_ok(true);
                m.set_edns(e);
            }
            EdnsVariant::UnknownOption => {
                let mut e = edns(1232);
                e.options_mut()
                    .insert(EdnsOption::Unknown(65_001, b"pigsty".to_vec()));
                m.set_edns(e);
            }
            EdnsVariant::Version1 => {
                let mut e = edns(1232);
                e.set_version(1);
                m.set_edns(e);
            }
        }
        let mut bytes = m.to_vec().expect("encode query");
        bytes[2] = (bytes[2] & !0x78) | (self.header.opcode << 3);
        bytes[2] |= (self.header.flags >> 8) as u8;
        bytes[3] |= self.header.flags as u8;
        bytes
    }
}

/// Deterministic xorshift, so a failing corpus can be replayed exactly.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn label(&mut self) -> String {
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789-";
        let len = 1 + (self.next() % 12) as usize;
        let mut s: String = (0..len)
            .map(|_| ALPHABET[(self.next() % 36) as usize] as char)
            .collect();
        // A label never starts with '-' in the served data; keep the random ones plausible.
        if s.starts_with('-') {
            s.replace_range(0..1, "q");
        }
        s
    }

    /// Random 0x20 casing.
    fn recase(&mut self, name: &str) -> String {
        name.chars()
            .map(|c| {
                if self.next().is_multiple_of(2) {
                    c.to_ascii_uppercase()
                } else {
                    c
                }
            })
            .collect()
    }
}

/// The names the records file serves (relative to the zone), and the file itself.
pub(crate) fn records() -> (Vec<String>, String) {
    let long_label = "l".repeat(63);
    let vm_names = vec![
        "a.b.pigsty.test".to_string(),
        "x.y.z.pigsty.test".to_string(),
        "deep.1.2.3.4.5.pigsty.test".to_string(),
        "w-1.pigsty.test".to_string(),
        "123".to_string(),
        format!("{long_label}.pigsty.test"),
        // Outside the zone: valid input, not served.
        "i.pigsty".to_string(),
    ];
    let mut yaml = String::from(
        "all:\n  hosts:\n    10.10.10.10: { nodename: meta }\n    10.10.10.11: { nodename: node-b }\n  vars:\n    vm_hosts:\n",
    );
    writeln!(yaml, "      - address: 10.10.10.20").unwrap();
    let quoted: Vec<String> = vm_names.iter().map(|n| format!("\"{n}\"")).collect();
    writeln!(yaml, "        names: [{}]", quoted.join(", ")).unwrap();
    for i in 0..20 {
        writeln!(yaml, "      - address: 10.10.10.{}", 30 + i).unwrap();
        writeln!(yaml, "        names: [host-{i}, alias-{i}.svc.pigsty.test]").unwrap();
    }
    let mut served: Vec<String> = vec!["meta".into(), "node-b".into()];
    for n in &vm_names {
        if let Some(rel) = n.strip_suffix(".pigsty.test") {
            served.push(rel.to_string());
        } else if !n.contains('.') {
            served.push(n.clone());
        }
    }
    for i in 0..20 {
        served.push(format!("host-{i}"));
        served.push(format!("alias-{i}.svc"));
    }
    (served, yaml)
}

/// The last octets of the addresses in [`records`] that have served names, so a PTR.
fn ptr_octets() -> Vec<u8> {
    let mut o = vec![10, 11, 20];
    o.extend(30..50);
    o
}

/// The reverse-zone names of the corpus.
fn reverse_names(rng: &mut Rng) -> Vec<String> {
    let at = |octet: &str| format!("{octet}.{REVERSE}");
    let mut names = vec![REVERSE.to_string(), REVERSE.to_ascii_uppercase()];
    names.push(rng.recase(REVERSE));
    for o in ptr_octets() {
        let n = at(&o.to_string());
        names.push(n.to_ascii_uppercase());
        names.push(rng.recase(&n));
        names.push(format!("{}.{n}", rng.label()));
        names.push(n);
    }
    // Addresses of the /24 without names, labels that are not octets, and names below those.
    for o in ["0", "1", "8", "9", "12", "21", "29", "50", "254", "255"] {
        names.push(at(o));
    }
    for l in ["010", "256", "meta", "x1", "x.12", "1.2.12"] {
        names.push(at(l));
    }
    // Other reverse zones: another /24, the parents of this one, loopback, IPv6.
    for n in [
        "11.10.10.in-addr.arpa.",
        "10.11.10.10.in-addr.arpa.",
        "10.10.in-addr.arpa.",
        "10.in-addr.arpa.",
        "in-addr.arpa.",
        "arpa.",
        "1.0.0.127.in-addr.arpa.",
        "ip6.arpa.",
        "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa.",
    ] {
        names.push(n.into());
    }
    names
}

fn corpus(served: &[String]) -> Vec<Case> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let fq = |rel: &str| {
        if rel.is_empty() {
            ZONE.to_string()
        } else {
            format!("{rel}.{ZONE}")
        }
    };
    let mut names: Vec<String> = Vec::new();
    // The apex, as is and recased.
    names.push(ZONE.into());
    names.push("PiGsTy.TeSt.".into());
    for rel in served {
        let n = fq(rel);
        names.push(n.clone());
        names.push(n.to_ascii_uppercase());
        names.push(rng.recase(&n));
        // Children of a served name (NXDOMAIN), one and two labels down.
        names.push(fq(&format!("{}.{rel}", rng.label())));
        // Every parent of a served name between it and the apex: empty non-terminals (RFC 8020).
        let labels: Vec<&str> = rel.split('.').collect();
        for i in 1..labels.len() {
            names.push(fq(&labels[i..].join(".")));
        }
    }
    // Below an empty non-terminal, and siblings of served names.
    names.push(fq("nope.b"));
    names.push(fq("q.y.z"));
    names.push(fq("c.a.b"));
    names.push(fq("meta2"));
    names.push(fq("met"));
    // A label that contains a dot ("a\.b") must not match a.b; an underscore label; a label of one byte.
    names.push(format!("a\\.b.{ZONE}"));
    names.push(fq("_tcp.meta"));
    names.push(fq("m"));
    // A name of the maximum length (255 octets on the wire) inside the zone.
    let mut long = String::new();
    while long.len() + 63 + 1 + ZONE.len() <= 253 {
        long.push_str(&"k".repeat(62));
        long.push('.');
    }
    let rest = 253 - long.len() - ZONE.len();
    long.push_str(&"k".repeat(rest));
    long.push('.');
    long.push_str(ZONE);
    names.push(long);
    // Random non-existent names, one to three labels deep.
    for _ in 0..30 {
        let depth = 1 + (rng.next() % 3) as usize;
        let rel: Vec<String> = (0..depth).map(|_| rng.label()).collect();
        names.push(fq(&rel.join(".")));
    }
    // Outside the zone: other TLDs, the parent, the root, a name that only ends in the zone's text, and
    // the served-elsewhere i.pigsty.
    for n in [
        "example.com.",
        "test.",
        ".",
        "xpigsty.test.",
        "pigsty.test.example.",
        "i.pigsty.",
        "localhost.",
        "version.bind.",
        "id.server.",
        "hostname.bind.",
    ] {
        names.push(n.into());
    }
    names.extend(reverse_names(&mut rng));
    names.sort();
    names.dedup();

    let mut cases = Vec::new();
    let mut i = 0usize;
    for name in &names {
        for class in [DNSClass::IN, DNSClass::CH] {
            for qtype in QTYPES {
                for edns in EDNS_VARIANTS {
                    i += 1;
                    cases.push(Case {
                        name: name.clone(),
                        qtype,
                        class,
                        edns,
                        rd: i.is_multiple_of(2),
                        tcp: false,
                        header: Header::default(),
                    });
                }
            }
        }
        // A slice over TCP: every name, a few types, with and without EDNS.
        for qtype in [
            RecordType::A,
            RecordType::AAAA,
            RecordType::PTR,
            RecordType::SOA,
            RecordType::ANY,
        ] {
            for edns in [EdnsVariant::None, EdnsVariant::Payload(1232)] {
                i += 1;
                cases.push(Case {
                    name: name.clone(),
                    qtype,
                    class: DNSClass::IN,
                    edns,
                    rd: i.is_multiple_of(2),
                    tcp: true,
                    header: Header::default(),
                });
            }
        }
    }
    // Zone transfers (not offered: REFUSED) over UDP and TCP, and the meta-classes ANY (255) and NONE (254).
    for name in [
        ZONE.to_string(),
        fq("meta"),
        "example.com.".to_string(),
        REVERSE.to_string(),
        format!("10.{REVERSE}"),
    ] {
        for edns in [EdnsVariant::None, EdnsVariant::Payload(1232)] {
            for tcp in [false, true] {
                cases.push(Case {
                    edns,
                    tcp,
                    ..Case::plain(&name, RecordType::AXFR)
                });
            }
            for class in [DNSClass::ANY, DNSClass::NONE] {
                for qtype in [RecordType::A, RecordType::SOA] {
                    cases.push(Case {
                        edns,
                        class,
                        ..Case::plain(&name, qtype)
                    });
                }
            }
        }
    }
    // Header flags set in queries (genreport aa, ad, cd, ra, tc, zflag and all at once) and other opcodes
    // (with a question, and header-only like genreport's opcode test), on a few kinds of name.
    let flag_sets: [u16; 7] = [0x0400, 0x0020, 0x0010, 0x0080, 0x0200, 0x0040, 0x06F0];
    let kinds = [
        ZONE.to_string(),
        fq("meta"),
        fq("b"),
        fq("nope"),
        "example.com.".to_string(),
        REVERSE.to_string(),
        format!("10.{REVERSE}"),
        format!("12.{REVERSE}"),
    ];
    for name in &kinds {
        for qtype in [RecordType::A, RecordType::SOA] {
            for edns in [EdnsVariant::None, EdnsVariant::Payload(1232)] {
                for rd in [false, true] {
                    for flags in flag_sets {
                        cases.push(Case {
                            header: Header {
                                flags,
                                ..Header::default()
                            },
                            edns,
                            rd,
                            ..Case::plain(name, qtype)
                        });
                    }
                    // IQUERY, STATUS, unassigned 3, 6, 7 and 15 (NOTIFY and UPDATE are real operations
                    // with their own access rules and are left out).
                    for opcode in [1u8, 2, 3, 6, 7, 15] {
                        for no_question in [false, true] {
                            cases.push(Case {
                                header: Header {
                                    flags: 0x0010,
                                    opcode,
                                    no_question,
                                },
                                edns,
                                rd,
                                ..Case::plain(name, qtype)
                            });
                        }
                    }
                }
            }
        }
    }
    cases
}

// -------------------------------------------------------------------------------------------------------
// Normal form

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Norm {
    rcode: u16,
    aa: bool,
    tc: bool,
    rd: bool,
    ra: bool,
    ad: bool,
    cd: bool,
    question_echoed: bool,
    answer: Vec<String>,
    authority: Vec<String>,
    /// (version, DO, options as "code" or, for Extended DNS Errors, "15:INFO-CODE")
    edns: Option<(u8, bool, Vec<String>)>,
}

/// One record as a line, names folded to lowercase: owner and the names inside A/NS/SOA rdata compare
/// case-insensitively (RFC 1035 §2.3.3, RFC 4343 §3). NSD compresses the SOA RNAME
/// `hostmaster.pigsty.test` against the question, so it comes back in the query's 0x20 case.
fn record_line(r: &Record) -> String {
    format!(
        "{} {} {} {} {}",
        r.name.to_ascii(),
        r.ttl,
        r.dns_class,
        r.record_type(),
        r.data
    )
    .to_ascii_lowercase()
}

pub(crate) fn normalize(query: &[u8], reply: &[u8]) -> Result<Norm, String> {
    let m = Message::from_vec(reply).map_err(|e| format!("undecodable reply: {e}"))?;
    // The question as sent is the bytes after the header up to the end of QTYPE/QCLASS; queries here
    // are uncompressed, carry one question and, at most, an OPT after it.
    let question_echoed = if query[4..6] == [0, 0] {
        reply.len() >= 6 && reply[4..6] == [0, 0]
    } else {
        let qend = 12 + question_len(&query[12..]);
        m.queries.len() == 1
            && reply.len() >= qend
            && reply[4..6] == [0, 1]
            && reply[12..qend] == query[12..qend]
    };
    let mut answer: Vec<String> = m.answers.iter().map(record_line).collect();
    let mut authority: Vec<String> = m.authorities.iter().map(record_line).collect();
    answer.sort();
    authority.sort();
    let md = &m.metadata;
    Ok(Norm {
        rcode: u16::from(md.response_code),
        aa: md.authoritative,
        tc: md.truncation,
        rd: md.recursion_desired,
        ra: md.recursion_available,
        ad: md.authentic_data,
        cd: md.checking_disabled,
        question_echoed,
        answer,
        authority,
        edns: m.edns.as_ref().map(|e| {
            (
                e.version(),
                e.flags().dnssec_ok,
                e.options()
                    .as_ref()
                    .iter()
                    .map(|(code, opt)| match opt {
                        EdnsOption::Unknown(15, data) if data.len() >= 2 => {
                            format!("15:{}", u16::from_be_bytes([data[0], data[1]]))
                        }
                        _ => u16::from(*code).to_string(),
                    })
                    .collect(),
            )
        }),
    })
}

/// The names of the fields in which two normal forms differ.
pub(crate) fn differing(a: &Norm, b: &Norm) -> Vec<&'static str> {
    let mut d = Vec::new();
    let checks: [(&'static str, bool); 11] = [
        ("rcode", a.rcode != b.rcode),
        ("aa", a.aa != b.aa),
        ("tc", a.tc != b.tc),
        ("rd", a.rd != b.rd),
        ("ra", a.ra != b.ra),
        ("ad", a.ad != b.ad),
        ("cd", a.cd != b.cd),
        ("question", a.question_echoed != b.question_echoed),
        ("answer", a.answer != b.answer),
        ("authority", a.authority != b.authority),
        ("edns", a.edns != b.edns),
    ];
    for (name, differs) in checks {
        if differs {
            d.push(name);
        }
    }
    d
}

/// Length of an uncompressed name plus QTYPE and QCLASS.
fn question_len(q: &[u8]) -> usize {
    let mut p = 0;
    while p < q.len() && q[p] != 0 {
        p += 1 + usize::from(q[p]);
    }
    p + 1 + 4
}

// -------------------------------------------------------------------------------------------------------
// Justified differences

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Peer {
    Knot,
    Nsd,
}

/// One allowed difference: when `applies` holds for (case, pigsty's answer, the peer's answer), `adjust`
/// rewrites the peer's normal form into what pigsty-dns answers for that part only. The comparison that
/// follows still checks every other field.
struct Allowed {
    id: &'static str,
    peers: &'static [Peer],
    rfc: &'static str,
    why: &'static str,
    adjust: fn(&Case, &Norm, &mut Norm, &Zone) -> bool,
}

/// What is at each name, for the ANY rule: owner (lowercase, fully qualified) → record lines.
struct Zone {
    rrsets: BTreeMap<String, Vec<String>>,
}

const APEX_NS: &str = "pigsty.test. 30 in ns localhost.";
const REVERSE_APEX_NS: &str = "10.10.10.in-addr.arpa. 30 in ns localhost.";

/// The apex NS line of the zone `name` is in (the forward zone or the reverse zone).
fn apex_ns_of(name: &str) -> &'static str {
    if name.to_ascii_lowercase().ends_with(REVERSE) {
        REVERSE_APEX_NS
    } else {
        APEX_NS
    }
}

const ALLOWED: &[Allowed] = &[
    Allowed {
        id: "ns-in-authority",
        peers: &[Peer::Nsd],
        rfc: "RFC 1034 §4.3.2 step 3a, §6.2.1; RFC 2181 §5.4.1",
        why: "NSD adds the zone's NS RRset to the authority section of positive answers (unless \
              `minimal-responses: yes`); the lookup algorithm only requires the matching RRs in the \
              answer section, RFC 1034's own example answers carry an empty authority section, and \
              RFC 2181 ranks such authority data as optional extra data. pigsty-dns sends minimal \
              responses.",
        adjust: |case, pig, peer, _| {
            let positive = peer.rcode == 0 && !peer.answer.is_empty();
            if positive && pig.authority.is_empty() && peer.authority == [apex_ns_of(&case.name)] {
                peer.authority.clear();
                return true;
            }
            false
        },
    },
    Allowed {
        id: "any-subset",
        peers: &[Peer::Knot, Peer::Nsd],
        rfc: "RFC 8482 §4, §4.1",
        why: "For QTYPE=ANY a responder may return one RRset or any larger subset of what exists at the \
              name. At the apex pigsty-dns (and NSD) return the SOA RRset; Knot returns the NS RRset, \
              over UDP and TCP alike. Both answers are whole RRsets that exist at the name.",
        adjust: |case, pig, peer, zone| {
            if case.qtype != RecordType::ANY || pig.rcode != 0 || peer.rcode != 0 {
                return false;
            }
            let owner = case.name.to_ascii_lowercase();
            let Some(at) = zone.rrsets.get(&owner) else {
                return false;
            };
            let subset = |a: &[String]| !a.is_empty() && a.iter().all(|r| at.contains(r));
            if subset(&pig.answer) && subset(&peer.answer) && pig.answer != peer.answer {
                peer.answer = pig.answer.clone();
                return true;
            }
            false
        },
    },
    Allowed {
        id: "extended-dns-error",
        peers: &[Peer::Knot, Peer::Nsd],
        rfc: "RFC 8914 §3, §4.19, §4.21, §4.22",
        why: "With EDNS, Knot and NSD add an Extended DNS Error option to REFUSED answers: 20 (Not \
              Authoritative) for names outside the zone, and NSD also 21 (Not Supported) for other \
              classes and 18 (Prohibited) for a refused zone transfer. EDE is optional extra information that does not change the meaning of the RCODE; \
              pigsty-dns sends an OPT without options. Everything else in the OPT (presence, version, \
              DO) still has to match.",
        adjust: |_, pig, peer, _| {
            let (Some(ours), Some(theirs)) = (&pig.edns, &mut peer.edns) else {
                return false;
            };
            let ede = ["15:18", "15:20", "15:21"];
            let only_ede =
                !theirs.2.is_empty() && theirs.2.iter().all(|o| ede.contains(&o.as_str()));
            if pig.rcode == 5 && peer.rcode == 5 && ours.2.is_empty() && only_ede {
                theirs.2.clear();
                return true;
            }
            false
        },
    },
    Allowed {
        id: "cd-copied",
        peers: &[Peer::Knot, Peer::Nsd],
        rfc: "RFC 4035 §3.1.6",
        why: "A query with CD=1: pigsty-dns copies CD into the response, as RFC 4035 §3.1.6 requires of \
              a name server (and as hickory-server does); Knot and NSD clear it when answering from an \
              unsigned zone. CD only tells a validator not to validate, so for unsigned data either \
              value is harmless. Everything else in the answer still has to match.",
        adjust: |case, pig, peer, _| {
            if case.header.opcode == 0 && case.header.flags & 0x0010 != 0 && pig.cd && !peer.cd {
                peer.cd = true;
                return true;
            }
            false
        },
    },
    Allowed {
        id: "notimp-header",
        peers: &[Peer::Knot, Peer::Nsd],
        rfc: "RFC 1035 §4.1.1; RFC 6895 §2; RFC 8906 §8.1.4; RFC 6891 §6.1.1, §7",
        why: "An unknown opcode gets NOTIMP from all three. pigsty-dns clears RD and CD there, because the \
              meaning of header bits is defined per opcode (RFC 6895 §2) and genreport's opcodeflg test \
              expects them clear; Knot copies RD, NSD copies RD and CD. NSD also leaves the question \
              and the OPT out of its NOTIMP answers: RFC 6891 §6.1.1 requires an OPT in the response \
              to a query that had one, so pigsty-dns keeps both (as Knot does).",
        adjust: |case, pig, peer, _| {
            if case.header.opcode == 0 || pig.rcode != 4 || peer.rcode != 4 {
                return false;
            }
            let mut changed = false;
            // Only the bits the query had, copied by the peer, and cleared by pigsty-dns.
            if peer.rd && case.rd && !pig.rd {
                peer.rd = false;
                changed = true;
            }
            if peer.cd && case.header.flags & 0x0010 != 0 && !pig.cd {
                peer.cd = false;
                changed = true;
            }
            if !peer.question_echoed && pig.question_echoed {
                peer.question_echoed = true;
                changed = true;
            }
            if peer.edns.is_none()
                && pig
                    .edns
                    .as_ref()
                    .is_some_and(|e| e.0 == 0 && e.2.is_empty())
            {
                peer.edns = pig.edns.clone();
                changed = true;
            }
            changed
        },
    },
    Allowed {
        id: "axfr-refused",
        peers: &[Peer::Knot, Peer::Nsd],
        rfc: "RFC 5936 §4.2, §6; RFC 8945 (rcode 9 NOTAUTH: not authorized); RFC 1035 §4.1.1",
        why: "pigsty-dns offers no zone transfer and answers AXFR with REFUSED over both transports. \
              Over UDP, where AXFR is not defined (RFC 5936 §4.2), Knot and NSD answer NOTIMP; over TCP \
              they answer NOTAUTH (no transfer ACL matches; NSD also for a name that is not a zone). \
              All of these tell the client that no transfer is available here.",
        adjust: |case, pig, peer, _| {
            let peer_refusal = (peer.rcode == 4 && !case.tcp) || peer.rcode == 9;
            if case.qtype == RecordType::AXFR && pig.rcode == 5 && peer_refusal {
                peer.rcode = 5;
                return true;
            }
            false
        },
    },
    Allowed {
        id: "meta-class",
        peers: &[Peer::Knot, Peer::Nsd],
        rfc: "RFC 1035 §3.2.5; RFC 6895 §3; RFC 2136 (NONE is for UPDATE)",
        why: "QCLASS ANY (255) and NONE (254) are meta-classes. pigsty-dns serves class IN only and \
              REFUSES both (with the question and the OPT echoed). Knot answers QCLASS ANY from the IN \
              data as if it were IN (AA set), NSD does so without AA; NSD REFUSES NONE but leaves the \
              question out. Whatever the peers answer comes from the same IN data.",
        adjust: |case, pig, peer, zone| {
            if !matches!(case.class, DNSClass::ANY | DNSClass::NONE) || pig.rcode != 5 {
                return false;
            }
            let owner = case.name.to_ascii_lowercase();
            let at = zone.rrsets.get(&owner).cloned().unwrap_or_default();
            let neg_soa: Vec<String> = [ZONE, REVERSE]
                .iter()
                .filter_map(|apex| zone.rrsets.get(*apex))
                .flatten()
                .filter(|r| r.contains(" in soa "))
                .map(|r| r.replacen(" 30 in soa ", " 5 in soa ", 1))
                .collect();
            let data_ok = peer.answer.iter().all(|r| at.contains(r))
                && peer
                    .authority
                    .iter()
                    .all(|r| neg_soa.contains(r) || r == APEX_NS || r == REVERSE_APEX_NS);
            if !data_ok || peer.edns.as_ref().map(|e| e.0) != pig.edns.as_ref().map(|e| e.0) {
                return false;
            }
            peer.rcode = pig.rcode;
            peer.aa = pig.aa;
            peer.answer = pig.answer.clone();
            peer.authority = pig.authority.clone();
            peer.question_echoed = pig.question_echoed;
            true
        },
    },
    Allowed {
        id: "chaos-identity",
        peers: &[Peer::Knot, Peer::Nsd],
        rfc: "RFC 4892 (id.server, version.bind are optional); RFC 1035 §4.1.1 (REFUSED)",
        why: "Knot and NSD answer the CHAOS-class server-identity queries (version.bind, version.server, \
              hostname.bind, id.server TXT) with their version or host name, not authoritatively. \
              pigsty-dns serves only class IN and REFUSES the rest (it does not reveal a version or host name to \
              any local process); no RFC requires either.",
        adjust: |case, pig, peer, _| {
            let identity = [
                "version.bind.",
                "version.server.",
                "hostname.bind.",
                "id.server.",
            ];
            let name = case.name.to_ascii_lowercase();
            if case.class != DNSClass::CH
                || !identity.contains(&name.as_str())
                || pig.rcode != 5
                || pig.edns.as_ref().is_some_and(|e| e.0 != 0)
            {
                return false;
            }
            // The BADVERS path must match exactly; otherwise the peer's answer may only be CH TXT data
            // at that name (or nothing).
            let chaos_txt = |r: &String| r.starts_with(&format!("{name} 0 ch txt "));
            if peer.rcode == 16 || !peer.answer.iter().all(chaos_txt) {
                return false;
            }
            peer.rcode = pig.rcode;
            peer.aa = pig.aa;
            peer.answer = pig.answer.clone();
            peer.authority = pig.authority.clone();
            true
        },
    },
];

// -------------------------------------------------------------------------------------------------------
// Starting the three servers

struct Servers {
    pigsty: SocketAddr,
    knot: SocketAddr,
    nsd: SocketAddr,
    _procs: Vec<Proc>,
}

/// Waits until the server answers the SOA of both zones.
fn wait_ready(proc_: &mut Proc, addr: SocketAddr) {
    wait_ready_for(proc_, addr, ZONE);
    wait_ready_for(proc_, addr, REVERSE);
}

fn wait_ready_for(proc_: &mut Proc, addr: SocketAddr, apex: &str) {
    let q = Case::plain(apex, RecordType::SOA).wire(1);
    let deadline = Instant::now() + START_WAIT;
    while Instant::now() < deadline {
        if let Some(st) = proc_.exited() {
            panic!(
                "{} exited early ({st}); log:\n{}",
                proc_.name,
                proc_.log_text()
            );
        }
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let _ = sock.send_to(&q, addr);
        let mut buf = [0u8; 1500];
        if let Ok((n, _)) = sock.recv_from(&mut buf)
            && let Ok(m) = Message::from_vec(&buf[..n])
            && m.answers.len() == 1
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!(
        "{} did not answer the {apex} SOA at {addr} within {START_WAIT:?}; log:\n{}",
        proc_.name,
        proc_.log_text()
    );
}

fn start_servers(dir: &Path, records_yaml: &str) -> Servers {
    let knotd = find_program("knotd");
    let nsd = find_program("nsd");
    let mut procs = Vec::new();

    // pigsty-dns, from the records file, on a port it picks.
    let state = dir.join("state");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let records = crate::util::write(dir, "host-names.yml", records_yaml);
    let mut pig = Proc::start(
        "pigsty-dns",
        Path::new(crate::util::BIN),
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--records",
            records.to_str().unwrap(),
            "--state-dir",
            state.to_str().unwrap(),
            // The peers serve pigsty.test and the reverse zone; `i.pigsty` stays outside for all
            // (transfer_zones.rs has a Knot of each zone of the default set).
            "--zone",
            "pigsty.test",
        ],
        dir.join("pigsty-dns.log"),
    );
    let status = state.join("status.json");
    let deadline = Instant::now() + START_WAIT;
    let pig_addr: SocketAddr = loop {
        if let Some(st) = pig.exited() {
            panic!("pigsty-dns exited early ({st}): {}", pig.log_text());
        }
        let parsed = std::fs::read_to_string(&status)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
        if let Some(v) = parsed
            && v["state"] == "running"
            && let Some(a) = v["listen"][0].as_str()
        {
            break a.parse().expect("listen address");
        }
        assert!(
            Instant::now() < deadline,
            "pigsty-dns wrote no running status: {}",
            pig.log_text()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    wait_ready(&mut pig, pig_addr);
    procs.push(pig);

    // The peers get exactly what pigsty-dns serves.
    let zonefile = dir.join("pigsty.test.zone");
    let r = crate::util::run(&[
        "export",
        "--format",
        "zone",
        "--state-dir",
        state.to_str().unwrap(),
        "-o",
        zonefile.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "export: {}{}", r.stdout, r.stderr);
    let reverse_file = dir.join("10.10.10.in-addr.arpa.zone");
    let r = crate::util::run(&[
        "export",
        "--format",
        "zone",
        "--zone-of",
        "reverse",
        "--state-dir",
        state.to_str().unwrap(),
        "-o",
        reverse_file.to_str().unwrap(),
    ]);
    assert_eq!(
        r.code, 0,
        "export --zone-of reverse: {}{}",
        r.stdout, r.stderr
    );

    // Knot: private rundir, storage and control socket; zone file loaded whole, never written back.
    let kdir = dir.join("knot");
    std::fs::create_dir_all(kdir.join("storage")).unwrap();
    let kport = free_port();
    let kconf = kdir.join("knot.conf");
    std::fs::write(
        &kconf,
        format!(
            "server:\n    rundir: \"{k}\"\n    listen: 127.0.0.1@{kport}\n    udp-workers: 1\n    \
             tcp-workers: 1\n    background-workers: 1\n\
             database:\n    storage: \"{k}/storage\"\n\
             control:\n    listen: \"{k}/knot.sock\"\n\
             log:\n  - target: stderr\n    any: info\n\
             template:\n  - id: default\n    storage: \"{k}\"\n    zonefile-sync: -1\n    \
             zonefile-load: whole\n    journal-content: none\n\
             zone:\n  - domain: pigsty.test\n    file: \"{z}\"\n  - domain: 10.10.10.in-addr.arpa\n    \
             file: \"{r}\"\n",
            k = kdir.display(),
            z = zonefile.display(),
            r = reverse_file.display(),
        ),
    )
    .unwrap();
    let mut knot = Proc::start(
        "knotd",
        &knotd,
        &["-c", kconf.to_str().unwrap()],
        kdir.join("knotd.log"),
    );
    let knot_addr: SocketAddr = ([127, 0, 0, 1], kport).into();
    wait_ready(&mut knot, knot_addr);
    procs.push(knot);

    // NSD: no privilege drop, no chroot, no database, private state files, RRL off (Debian's build has
    // it on at 200 qps), no remote control.
    let ndir = dir.join("nsd");
    std::fs::create_dir_all(&ndir).unwrap();
    let nport = free_port();
    let nconf = ndir.join("nsd.conf");
    std::fs::write(
        &nconf,
        format!(
            "server:\n    ip-address: 127.0.0.1@{nport}\n    server-count: 1\n    reuseport: no\n    \
             username: \"\"\n    chroot: \"\"\n    database: \"\"\n    zonesdir: \"{n}\"\n    \
             zonelistfile: \"{n}/zone.list\"\n    xfrdfile: \"{n}/xfrd.state\"\n    xfrdir: \"{n}\"\n    \
             pidfile: \"{n}/nsd.pid\"\n    rrl-ratelimit: 0\n    rrl-whitelist-ratelimit: 0\n    \
             verbosity: 1\n\
             remote-control:\n    control-enable: no\n\
             zone:\n    name: pigsty.test\n    zonefile: \"{z}\"\n\
             zone:\n    name: 10.10.10.in-addr.arpa\n    zonefile: \"{r}\"\n",
            n = ndir.display(),
            z = zonefile.display(),
            r = reverse_file.display(),
        ),
    )
    .unwrap();
    let mut nsd_proc = Proc::start(
        "nsd",
        &nsd,
        &["-d", "-c", nconf.to_str().unwrap()],
        ndir.join("nsd.log"),
    );
    let nsd_addr: SocketAddr = ([127, 0, 0, 1], nport).into();
    wait_ready(&mut nsd_proc, nsd_addr);
    procs.push(nsd_proc);

    Servers {
        pigsty: pig_addr,
        knot: knot_addr,
        nsd: nsd_addr,
        _procs: procs,
    }
}

/// What exists at each name, read from the exported zones through pigsty-dns itself (the ANY rule needs
/// it): every served name's A, every address's PTR, and both apexes' SOA and NS.
fn zone_model(pigsty: SocketAddr, served: &[String]) -> Zone {
    let mut rrsets: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut ask = |name: String, qtype: RecordType| {
        let q = Case::plain(&name, qtype).wire(7);
        let reply = udp_exchange(pigsty, &q).expect("pigsty-dns answers");
        let n = normalize(&q, &reply).expect("decodes");
        assert!(!n.answer.is_empty(), "{name} {qtype} has data");
        rrsets.entry(name).or_default().extend(n.answer);
    };
    ask(ZONE.into(), RecordType::SOA);
    ask(ZONE.into(), RecordType::NS);
    for rel in served {
        ask(format!("{rel}.{ZONE}"), RecordType::A);
    }
    ask(REVERSE.into(), RecordType::SOA);
    ask(REVERSE.into(), RecordType::NS);
    for o in ptr_octets() {
        ask(format!("{o}.{REVERSE}"), RecordType::PTR);
    }
    Zone { rrsets }
}

// -------------------------------------------------------------------------------------------------------
// The test

#[test]
fn same_answers_as_knot_and_nsd() {
    if !crate::util::e2e() {
        eprintln!(
            "skipped: set PIGSTY_DNS_E2E=1 (needs knot and nsd: bash tests/install-peers.sh)"
        );
        return;
    }
    let started = Instant::now();
    let dir = tempfile::tempdir().expect("tempdir");
    let (served, yaml) = records();
    let servers = start_servers(dir.path(), &yaml);
    let zone = zone_model(servers.pigsty, &served);
    let cases = corpus(&served);

    let mut tcp_clients = [
        TcpClient::new(servers.pigsty),
        TcpClient::new(servers.knot),
        TcpClient::new(servers.nsd),
    ];
    let peers = [(Peer::Knot, servers.knot), (Peer::Nsd, servers.nsd)];
    let mut used: BTreeMap<(&'static str, Peer), usize> = BTreeMap::new();
    let mut unexplained = 0usize;
    // Exchanges that failed outright (no answer, undecodable).
    let mut failures: Vec<String> = Vec::new();
    let mut compared = 0usize;
    // Unexplained differences grouped by which fields differ: (count, first example).
    let mut kinds: BTreeMap<String, (usize, String)> = BTreeMap::new();

    for (i, case) in cases.iter().enumerate() {
        let id = (i % 0xFFFF) as u16 + 1;
        let q = case.wire(id);
        let mut ask = |k: usize, addr: SocketAddr| -> Result<Norm, String> {
            let reply = if case.tcp {
                tcp_clients[k].exchange(&q)?
            } else {
                udp_exchange(addr, &q)?
            };
            if reply.len() < 2 || reply[..2] != q[..2] {
                return Err("reply with another ID".into());
            }
            normalize(&q, &reply)
        };
        let pig = match ask(0, servers.pigsty) {
            Ok(n) => n,
            Err(e) => {
                failures.push(format!("{}: pigsty-dns: {e}", case.describe()));
                continue;
            }
        };
        for (k, (peer, addr)) in peers.iter().enumerate() {
            let mut theirs = match ask(k + 1, *addr) {
                Ok(n) => n,
                Err(e) => {
                    failures.push(format!("{}: {peer:?}: {e}", case.describe()));
                    continue;
                }
            };
            for rule in ALLOWED.iter().filter(|r| r.peers.contains(peer)) {
                if (rule.adjust)(case, &pig, &mut theirs, &zone) {
                    *used.entry((rule.id, *peer)).or_default() += 1;
                }
            }
            compared += 1;
            if theirs != pig {
                let kind = format!(
                    "{peer:?} differs in {}",
                    differing(&pig, &theirs).join(", ")
                );
                let example = format!(
                    "{}\n    pigsty-dns: {pig:?}\n    {peer:?}: {theirs:?}",
                    case.describe()
                );
                let e = kinds.entry(kind).or_insert((0, example));
                e.0 += 1;
                unexplained += 1;
            }
        }
    }

    eprintln!(
        "differential: {} queries, {compared} comparisons in {:.1} s",
        cases.len(),
        started.elapsed().as_secs_f64()
    );
    for ((id, peer), n) in &used {
        eprintln!("  allowed difference {id} ({peer:?}): {n} answers");
    }
    for rule in ALLOWED {
        eprintln!("  {}: {} — {}", rule.id, rule.rfc, rule.why);
    }
    if unexplained > 0 || !failures.is_empty() {
        let mut text = String::new();
        for (kind, (n, example)) in &kinds {
            writeln!(text, "{n} × {kind}; first:\n  {example}").unwrap();
        }
        for e in failures.iter().take(10) {
            writeln!(text, "{e}").unwrap();
        }
        panic!(
            "{unexplained} unexplained differences, {} failed exchanges:\n{text}",
            failures.len()
        );
    }
    // The list stays exact both ways: an allowed difference that no longer occurs is a stale README line.
    let stale: Vec<&str> = ALLOWED
        .iter()
        .filter(|r| !used.keys().any(|(id, _)| *id == r.id))
        .map(|r| r.id)
        .collect();
    assert!(
        stale.is_empty(),
        "allowed differences that no longer occur (remove them here and in the README): {stale:?}"
    );
    drop(servers);
}
