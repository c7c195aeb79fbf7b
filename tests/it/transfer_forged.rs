//! Transfers from a state dir whose files were changed behind the server's back: every reader of a
//! stored generation goes through the store's one verified path (the serial in a file's name is the
//! serial in its content, the self-digest matches the name), so a swapped or re-sealed file is never
//! sent as a version of the zone it does not name.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use hickory_proto::op::ResponseCode;
use hickory_proto::rr::{RData, RecordType};

use crate::transfer_clients::{lines, load_text, request, start, state_dir, transfer, yaml};

const ZONE: &str = "pigsty.test.";

/// The stored file of `serial`.
pub(crate) fn gen_file(state: &Path, serial: u32) -> PathBuf {
    let prefix = format!("gen-{serial:010}-");
    fs::read_dir(state.join("generations"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with(&prefix)
        })
        .unwrap_or_else(|| panic!("no file of serial {serial}"))
}

/// Replaces `path`'s contents in place (one link, mode 0600, as a sealed file is).
pub(crate) fn overwrite(path: &Path, bytes: &[u8]) {
    let tmp = path.with_extension("swap");
    fs::write(&tmp, bytes).unwrap();
    fs::set_permissions(&tmp, fs::Permissions::from_mode(0o600)).unwrap();
    fs::rename(&tmp, path).unwrap();
}

/// The generation in `bytes`, re-sealed as `serial` with both digests valid (the record digest does not
/// cover the serial): what a forger who can write the state dir makes.
pub(crate) fn resealed(bytes: &[u8], serial: u32) -> Vec<u8> {
    let mut g = pigsty_dns::zone::generation::Generation::parse_unverified(bytes).unwrap();
    g.serial = serial;
    g.encode()
}

fn soa_serials(lines: &[String]) -> Vec<u32> {
    lines
        .iter()
        .filter(|l| l.contains(" soa "))
        .map(|l| l.split_whitespace().nth(5).unwrap().parse().unwrap())
        .collect()
}

/// RFC 5936 §2.2: an AXFR opens and closes with the SOA of the version served; RFC 1995 §4: an IXFR's
/// first old SOA is the client's version. Neither may come from a file whose content is not the
/// serial its name says.
#[test]
fn a_swapped_or_resealed_generation_file_is_never_transferred() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, state) = (tmp.path(), state_dir(tmp.path()));
    for n in 1..=4 {
        let extra = format!("      - {{ address: 10.10.10.251, names: [g-{n}] }}\n");
        load_text(dir, &state, &yaml(20, &extra));
    }
    let server = start(dir, &state, &["--allow-transfer", "127.0.0.1"]);

    // The live gen 4 overwritten by its own records re-sealed as serial 9 under gen 4's name.
    let live = gen_file(&state, 4);
    let good = fs::read(&live).unwrap();
    overwrite(&live, &resealed(&good, 9));
    let axfr = transfer(
        server.addr,
        "127.0.0.1",
        &request(70, ZONE, RecordType::AXFR, None),
    )
    .unwrap();
    let got = lines(&axfr);
    assert!(
        !soa_serials(&got).contains(&9),
        "an AXFR sent serial 9 while serial 4 is served: {:?}",
        &got[..got.len().min(3)]
    );
    assert_eq!(
        axfr[0].metadata.response_code,
        ResponseCode::ServFail,
        "{got:?}"
    );
    let soa = crate::differential::udp_exchange(
        server.addr,
        &crate::differential::Case::plain(ZONE, RecordType::SOA).wire(71),
    )
    .unwrap();
    let soa = hickory_proto::op::Message::from_vec(&soa).unwrap();
    assert!(
        matches!(&soa.answers[0].data, RData::SOA(s) if s.serial == 4),
        "queries still see 4"
    );
    overwrite(&live, &good);

    // Gen 1's file replaced by a copy of gen 2's: an IXFR from 1 is not a diff from 2.
    let g2 = fs::read(gen_file(&state, 2)).unwrap();
    overwrite(&gen_file(&state, 1), &g2);
    let ixfr = transfer(
        server.addr,
        "127.0.0.1",
        &request(72, ZONE, RecordType::IXFR, Some(1)),
    )
    .unwrap();
    let got = lines(&ixfr);
    assert_eq!(
        soa_serials(&got),
        vec![4, 4],
        "IXFR from 1 with gen 1's file swapped: want the full zone, got {:?}",
        &got[..got.len().min(4)]
    );
    assert_eq!(got.iter().filter(|l| l.contains(" a ")).count(), 22);
    // Gen 2 itself is still a diff.
    let ixfr = transfer(
        server.addr,
        "127.0.0.1",
        &request(73, ZONE, RecordType::IXFR, Some(2)),
    )
    .unwrap();
    assert_eq!(soa_serials(&lines(&ixfr)), vec![4, 2, 4, 4]);
    let log = server.log_text();
    assert!(
        log.contains("holds serial 9 under the name of serial 4"),
        "{log}"
    );
}

/// NOTIFY per zone is independent (risk 11): a secondary that never answers gets the reverse zone's
/// NOTIFY at once, not after the forward one's five tries (15.5 s), and its status keeps both zones'
/// errors.
#[test]
fn notify_of_each_zone_goes_out_at_once_and_keeps_its_own_error() {
    use std::time::{Duration, Instant};
    let tmp = tempfile::tempdir().unwrap();
    let (dir, state) = (tmp.path(), state_dir(tmp.path()));
    load_text(dir, &state, &yaml(5, ""));
    // The silent secondary: reads every NOTIFY, answers none.
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    silent
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let target = silent.local_addr().unwrap().to_string();
    let _server = start(
        dir,
        &state,
        &["--allow-transfer", "127.0.0.1", "--notify", &target],
    );
    let started = Instant::now();
    let mut zones = std::collections::BTreeSet::new();
    let mut buf = [0u8; 1500];
    while zones.len() < 2 && started.elapsed() < Duration::from_secs(5) {
        if let Ok(n) = silent.recv(&mut buf) {
            let m = hickory_proto::op::Message::from_vec(&buf[..n]).unwrap();
            zones.insert(m.queries[0].name().to_ascii());
        }
    }
    assert_eq!(
        zones.len(),
        2,
        "in {:?} only {zones:?} was notified",
        started.elapsed()
    );
    // Both give up after their tries, each with its own error kept.
    let deadline = Instant::now() + Duration::from_secs(30);
    let last_error = loop {
        let st: serde_json::Value = fs::read(state.join("status.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        if let Some(e) = st["secondaries"][0]["last_error"].as_str() {
            break e.to_string();
        }
        assert!(Instant::now() < deadline, "no NOTIFY failure: {st}");
        let _ = silent.recv(&mut buf);
    };
    for zone in ["NOTIFY pigsty.test ", "NOTIFY 10.10.10.in-addr.arpa "] {
        assert!(last_error.contains(zone), "{last_error}");
    }
}
