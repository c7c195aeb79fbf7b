//! TSIG refusals (RFC 8945 §5.2) of a server started with `--tsig-key`, seen by a client that signs with
//! hickory-proto's `TSigner` (any key, any time) and, with `PIGSTY_DNS_E2E=1`, by `dig -y` / `dig -k`:
//! a wrong secret is NOTAUTH/BADSIG and an unknown key NOTAUTH/BADKEY, both unsigned; a time outside
//! the fudge NOTAUTH/BADTIME, signed, repeating the request's time with the server's in the other data;
//! an unsigned transfer NOTAUTH without a TSIG. Each refusal is counted in the status file.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hickory_proto::op::{Message, MessageType, OpCode, Query, ResponseCode};
use hickory_proto::rr::rdata::tsig::{TsigAlgorithm, TsigError};
use hickory_proto::rr::{Name, RecordType, TSigner};

use crate::transfer_clients::{load_text, socket2_bind, start, state_dir, yaml};

const ZONE: &str = "pigsty.test.";
const KEY: &str = "pigsty-xfr";
const SECRET: &str = "cGlnc3R5LWRucyB0c2lnIHRlc3Qga2V5IDMyIGJ5dGU=";
const WRONG: &str = "d3Jvbmcgd3Jvbmcgd3Jvbmcgd3Jvbmcgd3Jvbmcgd3Jvbmc=";

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn signer(name: &str, secret: &str) -> TSigner {
    let secret = data_encoding::BASE64.decode(secret.as_bytes()).unwrap();
    TSigner::new(
        secret,
        TsigAlgorithm::HmacSha256,
        Name::from_ascii(format!("{name}.")).unwrap(),
        300,
    )
    .unwrap()
}

/// An AXFR request, signed by `by` at `time` (unsigned without); its bytes and its MAC.
fn axfr(id: u16, by: Option<(&TSigner, u64)>) -> (Vec<u8>, Vec<u8>) {
    let mut m = Message::new(id, MessageType::Query, OpCode::Query);
    m.add_query(Query::query(
        Name::from_ascii(ZONE).unwrap(),
        RecordType::AXFR,
    ));
    if let Some((s, t)) = by {
        m.finalize(s, t).unwrap();
    }
    let mac = m
        .signature
        .as_ref()
        .map(|r| r.data.mac.clone())
        .unwrap_or_default();
    (m.to_vec().unwrap(), mac)
}

/// Sends `q` over TCP and reads the first response message, raw.
fn first_response(server: SocketAddr, q: &[u8]) -> Vec<u8> {
    let mut s = socket2_bind("127.0.0.1", server).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut framed = (q.len() as u16).to_be_bytes().to_vec();
    framed.extend_from_slice(q);
    s.write_all(&framed).unwrap();
    let mut len = [0u8; 2];
    s.read_exact(&mut len).unwrap();
    let mut buf = vec![0u8; usize::from(u16::from_be_bytes(len))];
    s.read_exact(&mut buf).unwrap();
    buf
}

/// The status file's transfer counters once `field` reaches `want` (bounded wait).
fn counted(state: &Path, field: &str, want: u64) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let t: serde_json::Value = std::fs::read(state.join("status.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .map(|v| v["transfers"].clone())
            .unwrap_or_default();
        if t[field].as_u64() == Some(want) || Instant::now() > deadline {
            return t;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn dig(server: SocketAddr, args: &[&str]) -> String {
    let port = server.port().to_string();
    let out = std::process::Command::new("dig")
        .args(["@127.0.0.1", "-p", &port, "+time=5", "+tries=1"])
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("PIGSTY_DNS_E2E=1 needs dig (Debian: bind9-dnsutils): {e}"));
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn tsig_refusals_are_notauth_with_the_rfc_8945_error() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, state) = (tmp.path(), state_dir(tmp.path()));
    load_text(dir, &state, &yaml(50, ""));
    let key_file = dir.join("xfr.key");
    std::fs::write(
        &key_file,
        format!("key \"{KEY}\" {{\n\talgorithm hmac-sha256;\n\tsecret \"{SECRET}\";\n}};\n"),
    )
    .unwrap();
    std::fs::set_permissions(
        &key_file,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let server = start(
        dir,
        &state,
        &[
            "--allow-transfer",
            "127.0.0.1",
            "--tsig-key",
            key_file.to_str().unwrap(),
        ],
    );
    let addr = server.addr;
    let good = signer(KEY, SECRET);

    // BADSIG: our key name, another secret. Unsigned: no MAC (§5.3.2).
    let (q, _) = axfr(1, Some((&signer(KEY, WRONG), now())));
    let r = Message::from_vec(&first_response(addr, &q)).unwrap();
    let sig = r.signature.as_ref().expect("a TSIG in the BADSIG answer");
    assert_eq!(r.metadata.response_code, ResponseCode::NotAuth);
    assert_eq!(sig.data.error, Some(TsigError::BadSig));
    assert!(sig.data.mac.is_empty(), "BADSIG answer signed");
    assert!(r.answers.is_empty());

    // BADKEY: a key the server does not have; named back, unsigned.
    let (q, _) = axfr(2, Some((&signer("other-key", SECRET), now())));
    let r = Message::from_vec(&first_response(addr, &q)).unwrap();
    let sig = r.signature.as_ref().expect("a TSIG in the BADKEY answer");
    assert_eq!(r.metadata.response_code, ResponseCode::NotAuth);
    assert_eq!(sig.data.error, Some(TsigError::BadKey));
    assert_eq!(sig.name.to_ascii(), "other-key.");
    assert!(sig.data.mac.is_empty(), "BADKEY answer signed");

    // BADTIME: the right key, signed 1000 s ago. Signed with the key over the request's MAC; the
    // request's time repeated, the server's current time (48 bits) in the other data (§5.2.3).
    let old = now() - 1000;
    let (q, request_mac) = axfr(3, Some((&good, old)));
    let raw = first_response(addr, &q);
    let r = Message::from_vec(&raw).unwrap();
    let sig = r.signature.as_ref().expect("a TSIG in the BADTIME answer");
    assert_eq!(r.metadata.response_code, ResponseCode::NotAuth);
    assert_eq!(sig.data.error, Some(TsigError::BadTime));
    assert_eq!(sig.data.time, old, "BADTIME answer's time signed");
    assert_eq!(sig.data.other.len(), 6, "other data: {:?}", sig.data.other);
    let mut t = [0u8; 8];
    t[2..].copy_from_slice(&sig.data.other);
    let theirs = u64::from_be_bytes(t);
    assert!(theirs.abs_diff(now()) <= 5, "server time {theirs}");
    good.verify_message_byte(&raw, Some(&request_mac), true)
        .expect("the BADTIME answer verifies with the key");

    // Unsigned, though a key is required: NOTAUTH, and nothing to sign it with.
    let (q, _) = axfr(4, None);
    let r = Message::from_vec(&first_response(addr, &q)).unwrap();
    assert_eq!(r.metadata.response_code, ResponseCode::NotAuth);
    assert!(r.signature.is_none());

    // And signed right, the zone, signed.
    let (q, _) = axfr(5, Some((&good, now())));
    let r = Message::from_vec(&first_response(addr, &q)).unwrap();
    assert_eq!(r.metadata.response_code, ResponseCode::NoError);
    assert!(!r.answers.is_empty());
    assert!(r.signature.as_ref().is_some_and(|s| !s.data.mac.is_empty()));

    let mut want = [("tsig_badsig", 1), ("tsig_badkey", 1), ("tsig_badtime", 1)];
    let mut unsigned = 1;
    let mut axfrs = 1;
    if crate::util::e2e() {
        // dig reads the TSIG error of the refusal and says so.
        let s = |secret: &str| format!("hmac-sha256:{KEY}:{secret}");
        let out = dig(addr, &["-y", &s(WRONG), "pigsty.test", "AXFR"]);
        assert!(
            out.contains("BADSIG") && out.contains("Transfer failed"),
            "{out}"
        );
        let other = format!("hmac-sha256:other-key:{SECRET}");
        let out = dig(addr, &["-y", &other, "pigsty.test", "AXFR"]);
        assert!(
            out.contains("BADKEY") && out.contains("Transfer failed"),
            "{out}"
        );
        let out = dig(addr, &["pigsty.test", "AXFR"]);
        assert!(out.contains("Transfer failed"), "{out}");
        // An IXFR over UDP: dig reads the unsigned BADSIG answer and will not trust it.
        let out = dig(addr, &["+notcp", "-y", &s(WRONG), "pigsty.test", "IXFR=1"]);
        assert!(
            out.contains("tsig indicates error") && out.contains("BADSIG"),
            "{out}"
        );
        // The key file itself, as `dig -k` reads it: the whole zone, every message verified.
        let out = dig(
            addr,
            &["-k", key_file.to_str().unwrap(), "pigsty.test", "AXFR"],
        );
        assert!(
            out.contains("XFR size") && !out.contains("Transfer failed"),
            "{out}"
        );
        want = [("tsig_badsig", 3), ("tsig_badkey", 2), ("tsig_badtime", 1)];
        unsigned = 2;
        axfrs = 2;
    }
    let t = counted(&state, "axfr", axfrs);
    for (field, n) in want {
        assert_eq!(t[field].as_u64(), Some(n), "{field}: {t}");
    }
    assert_eq!(t["tsig_unsigned"].as_u64(), Some(unsigned), "{t}");
    assert_eq!(t["axfr"].as_u64(), Some(axfrs), "{t}");
    let st = crate::util::run(&["status", "--state-dir", state.to_str().unwrap()]);
    assert!(
        st.stdout
            .contains(&format!("unsigned {unsigned} badkey {}", want[1].1)),
        "{}",
        st.stdout
    );
    let js = crate::util::run(&["status", "--json", "--state-dir", state.to_str().unwrap()]);
    let js: serde_json::Value = serde_json::from_str(&js.stdout).unwrap();
    assert_eq!(js["status"]["transfers"], t, "status --json");
    let log = server.log_text();
    assert!(log.contains("transfer refused: TSIG BadTime"), "{log}");
}

/// An AXFR request signed with `KEY` at `time` with `fudge`, its MAC then changed by `mac` (to test
/// lengths); the request's bytes.
fn signed_axfr(id: u16, time: u64, fudge: u16, mac: impl FnOnce(Vec<u8>) -> Vec<u8>) -> Vec<u8> {
    use hickory_proto::rr::rdata::tsig::{TSIG, make_tsig_record, message_tbs};
    let key = signer(KEY, SECRET);
    let mut m = Message::new(id, MessageType::Query, OpCode::Query);
    m.add_query(Query::query(
        Name::from_ascii(ZONE).unwrap(),
        RecordType::AXFR,
    ));
    let stub = TSIG::new(
        TsigAlgorithm::HmacSha256,
        time,
        fudge,
        Vec::new(),
        id,
        None,
        Vec::new(),
    );
    let tbs = message_tbs(&m, &stub, key.signer_name()).unwrap();
    let full = key.sign(&tbs).unwrap();
    assert_eq!(full.len(), 32);
    let record = make_tsig_record(key.signer_name().clone(), stub.set_mac(mac(full)));
    m.signature = Some(Box::new(record));
    m.to_vec().unwrap()
}

/// The rcode and TSIG error of the first response to `q`.
fn outcome(addr: SocketAddr, q: &[u8]) -> (ResponseCode, Option<TsigError>) {
    let r = Message::from_vec(&first_response(addr, q)).unwrap();
    let e = r.signature.as_ref().and_then(|s| s.data.error);
    (r.metadata.response_code, e)
}

/// RFC 8945 §5.2.2.1: a MAC longer than the hash or shorter than max(10, hash/2) bytes is FORMERR; a
/// truncated one in between is checked, then refused BADTRUNC (§5.2.4, our policy). §5.2.3: the
/// accepted fudge is capped at 300 s, the edge inclusive; a request older than the newest seen with
/// the key, or an exact repeat, is BADTIME (replay).
#[test]
fn tsig_mac_length_fudge_cap_and_replays() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, state) = (tmp.path(), state_dir(tmp.path()));
    load_text(dir, &state, &yaml(5, ""));
    let key_file = dir.join("xfr.key");
    std::fs::write(
        &key_file,
        format!("key \"{KEY}\" {{\n\talgorithm hmac-sha256;\n\tsecret \"{SECRET}\";\n}};\n"),
    )
    .unwrap();
    std::fs::set_permissions(
        &key_file,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let key = key_file.to_str().unwrap();
    let args = ["--allow-transfer", "127.0.0.1", "--tsig-key", key];
    let server = start(dir, &state, &args);
    let addr = server.addr;
    let (notauth, formerr) = (ResponseCode::NotAuth, ResponseCode::FormErr);

    // MAC lengths: 33 and 15 and 9 bytes are FORMERR; 16 valid bytes BADTRUNC; 20 wrong ones BADSIG.
    let t = now();
    let longer = signed_axfr(10, t, 300, |mut m| {
        m.push(0);
        m
    });
    assert_eq!(outcome(addr, &longer).0, formerr, "33-byte MAC");
    for n in [15, 9] {
        let q = signed_axfr(11, t, 300, |m| m[..n].to_vec());
        assert_eq!(outcome(addr, &q).0, formerr, "{n}-byte MAC");
    }
    let q = signed_axfr(12, t, 300, |m| m[..16].to_vec());
    assert_eq!(outcome(addr, &q), (notauth, Some(TsigError::BadTrunc)));
    let q = signed_axfr(13, t, 300, |m| m[..20].iter().map(|b| b ^ 1).collect());
    assert_eq!(outcome(addr, &q), (notauth, Some(TsigError::BadSig)));

    // The request's own fudge is capped at 300 s: 65,535 with a clock 3,600 s off is BADTIME.
    let q = signed_axfr(14, now() - 3600, u16::MAX, |m| m);
    assert_eq!(outcome(addr, &q), (notauth, Some(TsigError::BadTime)));
    // The edge is inclusive: fudge 0 at the server's own second is in (a second may tick between
    // signing and checking: a few tries).
    let in_at_edge = (0..5).any(|i| {
        let q = signed_axfr(20 + i, now(), 0, |m| m);
        outcome(addr, &q).0 == ResponseCode::NoError
    });
    assert!(in_at_edge, "fudge 0 at the exact time was never accepted");

    // Replays: the same signed request twice, and an older Time Signed after a newer one.
    let q = signed_axfr(30, now(), 300, |m| m);
    assert_eq!(outcome(addr, &q).0, ResponseCode::NoError);
    assert_eq!(
        outcome(addr, &q),
        (notauth, Some(TsigError::BadTime)),
        "an exact repeat"
    );
    let q = signed_axfr(31, now() - 10, 300, |m| m);
    assert_eq!(
        outcome(addr, &q),
        (notauth, Some(TsigError::BadTime)),
        "older than the newest seen"
    );
    // A new request still goes through.
    let q = signed_axfr(32, now(), 300, |m| m);
    assert_eq!(outcome(addr, &q).0, ResponseCode::NoError);
    let log = server.log_text();
    assert!(log.contains("replay"), "{log}");
}
