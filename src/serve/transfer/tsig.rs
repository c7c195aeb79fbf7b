//! TSIG (RFC 8945, hmac-sha256) for transfers: `serve --tsig-key FILE` reads one key from a BIND
//! (`key "name" { algorithm hmac-sha256; secret "…"; };`) or Knot (`key: - id: name / algorithm: /
//! secret:`) key file, which must be a regular file of ours, mode 0600 (like the state dir, nobody else
//! may read or change it). With a key, a transfer request must be signed with it: an unsigned one is
//! NOTAUTH with no TSIG (as Knot answers it; RFC 8945 leaves it to policy); a signature with another key
//! is NOTAUTH/BADKEY, a wrong MAC NOTAUTH/BADSIG (both unsigned, §5.2, §5.3.2), a time outside the fudge
//! NOTAUTH/BADTIME, signed, with the request's time signed and ours in the other data (§5.2.3, as BIND).
//! Every response message is signed; after the first, with the prior MAC and the timers only (§5.3.1).
//!
//! The HMAC and the request check are hickory-proto's (`TSigner`, `TSigResponseContext`, on `ring`).

use std::fs::OpenOptions;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use hickory_proto::op::Message;
pub use hickory_proto::rr::rdata::tsig::TsigError;
use hickory_proto::rr::rdata::tsig::{
    TSIG, TsigAlgorithm, make_tsig_record, signed_bitmessage_to_buf,
};
use hickory_proto::rr::{Name, Record, TSigResponseContext, TSigVerifier, TSigner};

/// Seconds of clock difference accepted (RFC 8945 §10 recommends 300): the fudge we sign with, and
/// the most of a request's own fudge we accept.
const FUDGE: u16 = 300;
/// hmac-sha256's MAC, and the shortest truncation RFC 8945 §5.2.2.1 allows: max(10, 32 / 2).
const MAC_LEN: usize = 32;
const MIN_MAC_LEN: usize = 16;
/// A key file is a few lines; anything larger is not one.
const MAX_FILE: u64 = 64 * 1024;

/// Valid requests remembered per key at the newest Time Signed (and the second before): beyond it,
/// a key holder sending that many in two seconds is refused until the clock moves on.
const MAX_REMEMBERED: usize = 4096;
/// How far a Time Signed may lag the newest seen: two secondaries sharing a key may sign across a
/// second's edge and arrive in the other order. Every request in that lag is remembered by its MAC,
/// so a replay within it is still refused.
const REORDER_SLACK: u64 = 1;

#[derive(Clone)]
pub struct Key {
    signer: TSigner,
    seen: Arc<Mutex<Seen>>,
}

/// RFC 8945 §5.2.3's replay record of one key: the newest Time Signed of a valid request, and the MACs
/// of the valid requests signed from [`REORDER_SLACK`] before it on.
#[derive(Debug, Default)]
struct Seen {
    newest: u64,
    macs: Vec<(u64, Vec<u8>)>,
}

impl Seen {
    /// Records a valid request; `Err` why it is a replay.
    fn admit(&mut self, time: u64, mac: &[u8]) -> Result<(), &'static str> {
        if time + REORDER_SLACK < self.newest {
            return Err("older than the newest Time Signed seen with this key");
        }
        if self.macs.iter().any(|(_, m)| m == mac) {
            return Err("an exact repeat of a request already answered");
        }
        if time > self.newest {
            self.newest = time;
            let floor = time - REORDER_SLACK.min(time);
            self.macs.retain(|(t, _)| *t >= floor);
        }
        if self.macs.len() >= MAX_REMEMBERED {
            return Err("one of too many requests signed within two seconds");
        }
        self.macs.push((time, mac.to_vec()));
        Ok(())
    }
}

/// Never prints the secret.
impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key({})", self.signer.signer_name())
    }
}

/// What a signed request earned.
#[derive(Debug, Clone)]
pub enum Checked {
    /// Valid: sign the response with the request's MAC.
    Valid { mac: Vec<u8>, id: u16 },
    /// A MAC longer than the hash or shorter than §5.2.2.1 allows: FORMERR, unsigned.
    FormErr,
    /// NOTAUTH with this TSIG error (and, for BADTIME, a signed response).
    Refused {
        error: TsigError,
        id: u16,
        mac: Vec<u8>,
        /// The key name the request used (a BADKEY response names it back).
        key: Name,
        /// The request's time signed (a BADTIME response repeats it).
        time: u64,
    },
    /// No TSIG at all: NOTAUTH, with nothing to sign it with.
    Unsigned,
}

impl Checked {
    /// `None` when valid; else the refusal: `Some(None)` unsigned, `Some(Some(e))` TSIG error `e`.
    pub fn refusal(&self) -> Option<Option<&TsigError>> {
        match self {
            Checked::Valid { .. } | Checked::FormErr => None,
            Checked::Refused { error, .. } => Some(Some(error)),
            Checked::Unsigned => Some(None),
        }
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Key {
    /// Reads and checks the key file. The error says what is wrong, naming the file.
    pub fn load(path: &Path) -> Result<Key, String> {
        let shown = crate::output::text::path(path);
        let f = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| format!("--tsig-key {shown}: cannot be read ({e})"))?;
        let m = f
            .metadata()
            .map_err(|e| format!("--tsig-key {shown}: cannot be read ({e})"))?;
        if !m.is_file() {
            return Err(format!("--tsig-key {shown}: not a regular file"));
        }
        let me = crate::sys::user::euid();
        if m.uid() != me {
            return Err(format!(
                "--tsig-key {shown}: owned by uid {}, not by you (uid {me})",
                m.uid()
            ));
        }
        if m.mode() & 0o077 != 0 {
            return Err(format!(
                "--tsig-key {shown}: mode {:o}, others can read it (chmod 600 {shown})",
                m.mode() & 0o7777
            ));
        }
        if m.len() > MAX_FILE {
            return Err(format!(
                "--tsig-key {shown}: {} bytes, not a key file",
                m.len()
            ));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("--tsig-key {shown}: cannot be read ({e})"))?;
        let (name, algorithm, secret) =
            parse(&text).map_err(|e| format!("--tsig-key {shown}: {e}"))?;
        if !algorithm.eq_ignore_ascii_case("hmac-sha256") {
            return Err(format!(
                "--tsig-key {shown}: algorithm {algorithm}; only hmac-sha256 is supported"
            ));
        }
        let secret = data_encoding::BASE64
            .decode(secret.as_bytes())
            .map_err(|e| format!("--tsig-key {shown}: the secret is not base64 ({e})"))?;
        if secret.len() < 16 {
            return Err(format!(
                "--tsig-key {shown}: the secret is {} bytes; use at least 32 (tsig-keygen, keymgr -t)",
                secret.len()
            ));
        }
        let name = Name::from_ascii(format!("{}.", name.trim_end_matches('.')))
            .map_err(|e| format!("--tsig-key {shown}: key name {name:?}: {e}"))?;
        let signer = TSigner::new(secret, TsigAlgorithm::HmacSha256, name, FUDGE)
            .map_err(|e| format!("--tsig-key {shown}: {e}"))?;
        Ok(Key {
            signer,
            seen: Arc::default(),
        })
    }

    pub fn name(&self) -> &Name {
        self.signer.signer_name()
    }

    /// Signs a request of ours (a NOTIFY); the verifier checks the answer to it.
    pub fn sign_request(&self, m: &mut Message) -> Result<TSigVerifier, String> {
        m.finalize(&self.signer, now())
            .map_err(|e| e.to_string())?
            .ok_or_else(|| "no verifier".to_string())
    }

    /// Checks a request that carries a TSIG record (`msg` its bytes).
    pub fn check(&self, msg: &[u8], request: &Message) -> Checked {
        let id = request.metadata.id;
        let Some(sig) = request.signature.as_ref() else {
            return Checked::Unsigned;
        };
        let refused = |error, mac| Checked::Refused {
            error,
            id,
            mac,
            key: sig.name.clone(),
            time: sig.data.time,
        };
        if sig.name != *self.signer.signer_name() || sig.data.algorithm != *self.signer.algorithm()
        {
            return refused(TsigError::BadKey, Vec::new());
        }
        // RFC 8945 §5.2: the MAC (its length first), then the time, then replays. The MAC is
        // checked here, not by hickory's verify (it refuses every truncation as a bad signature and
        // computes the time window from the request's own fudge).
        let Ok((tbv, record)) = signed_bitmessage_to_buf(msg, None, true) else {
            return refused(TsigError::BadSig, Vec::new());
        };
        let mac = &record.data.mac;
        if mac.len() > MAC_LEN || mac.len() < MIN_MAC_LEN {
            return Checked::FormErr;
        }
        let Ok(full) = self.signer.sign(&tbv) else {
            return refused(TsigError::BadSig, Vec::new());
        };
        if !same_bytes(&full[..mac.len()], mac) {
            return refused(TsigError::BadSig, Vec::new());
        }
        if mac.len() < MAC_LEN {
            // Valid but truncated: below our policy (§5.2.4).
            return refused(TsigError::BadTrunc, Vec::new());
        }
        let time = record.data.time;
        let window = u64::from(record.data.fudge.min(FUDGE));
        if time.abs_diff(now()) > window {
            return refused(TsigError::BadTime, mac.clone());
        }
        let admitted = match self.seen.lock() {
            Ok(mut seen) => seen.admit(time, mac),
            Err(_) => Err("the replay record is poisoned"),
        };
        if let Err(why) = admitted {
            tracing::warn!(key = %sig.name, time, "TSIG replay refused: {why}");
            return refused(TsigError::BadTime, mac.clone());
        }
        Checked::Valid {
            mac: mac.clone(),
            id,
        }
    }

    /// The signature state of one transfer's responses; `None` for an unsigned request.
    pub fn session(&self, checked: &Checked) -> Option<Session> {
        let (id, mac, key, error, time) = match checked {
            Checked::Unsigned | Checked::FormErr => return None,
            Checked::Valid { mac, id } => (*id, mac, self.name(), None, now()),
            Checked::Refused {
                error,
                id,
                mac,
                key,
                time,
            } => {
                // BADTIME repeats the request's time signed; ours goes in the other data (§5.2.3).
                let t = if *error == TsigError::BadTime {
                    *time
                } else {
                    now()
                };
                (*id, mac, key, Some(*error), t)
            }
        };
        Some(Session {
            key: key.clone(),
            signer: self.signer.clone(),
            id,
            prior: mac.clone(),
            first: true,
            time,
            error,
        })
    }
}

/// Signs the messages of one response in order.
pub struct Session {
    /// The request's key name (for BADKEY, one we do not know).
    key: Name,
    signer: TSigner,
    id: u16,
    /// The request's MAC, then each message's.
    prior: Vec<u8>,
    first: bool,
    time: u64,
    error: Option<TsigError>,
}

impl Session {
    /// Adds the TSIG record to `m` (which has none yet).
    pub fn sign(&mut self, m: &mut Message) -> Result<(), String> {
        let unsigned = m.to_vec().map_err(|e| e.to_string())?;
        let record = match &self.error {
            // BADKEY and BADSIG are answered unsigned (§5.2).
            Some(TsigError::BadKey) => {
                TSigResponseContext::unknown_key(self.id, self.time, self.key.clone())
                    .sign(&unsigned)
                    .map_err(|e| e.to_string())?
            }
            Some(TsigError::BadSig) => {
                TSigResponseContext::bad_signature(self.id, self.time, self.signer.clone())
                    .sign(&unsigned)
                    .map_err(|e| e.to_string())?
            }
            // An error about the MAC: unsigned, as BADSIG (§5.3.2).
            Some(TsigError::BadTrunc) => {
                self.record(Vec::new(), Some(TsigError::BadTrunc), Vec::new())
            }
            Some(TsigError::BadTime) => self.bad_time(&unsigned)?,
            _ if self.first => TSigResponseContext::new(
                self.id,
                self.time,
                self.signer.clone(),
                self.prior.clone(),
                self.error,
            )
            .sign(&unsigned)
            .map_err(|e| e.to_string())?,
            _ => {
                // §5.3.1: prior MAC (with its length), the message, then the timers only.
                let mut tbs = Vec::with_capacity(unsigned.len() + self.prior.len() + 10);
                tbs.extend_from_slice(&(self.prior.len() as u16).to_be_bytes());
                tbs.extend_from_slice(&self.prior);
                tbs.extend_from_slice(&unsigned);
                tbs.extend_from_slice(&self.time.to_be_bytes()[2..]);
                tbs.extend_from_slice(&FUDGE.to_be_bytes());
                let mac = self.signer.sign(&tbs).map_err(|e| e.to_string())?;
                self.record(mac, None, Vec::new())
            }
        };
        self.prior = record.data.mac.clone();
        self.first = false;
        m.signature = Some(record);
        Ok(())
    }

    /// BADTIME: signed over the request's MAC, the request's time repeated and ours (48 bits) in the
    /// other data (§5.2.3).
    fn bad_time(&self, unsigned: &[u8]) -> Result<Box<Record<TSIG>>, String> {
        let now = now().to_be_bytes()[2..].to_vec();
        let stub = TSIG::new(
            TsigAlgorithm::HmacSha256,
            self.time,
            FUDGE,
            Vec::new(),
            self.id,
            Some(TsigError::BadTime),
            now,
        );
        let tbs = self
            .signer
            .encode_response_tbs(&self.prior, unsigned, &stub)
            .map_err(|e| e.to_string())?;
        let mac = self.signer.sign(&tbs).map_err(|e| e.to_string())?;
        Ok(Box::new(make_tsig_record(
            self.signer.signer_name().clone(),
            stub.set_mac(mac),
        )))
    }

    /// A TSIG record of ours at the session's time with `mac`, `error` and `other`.
    fn record(&self, mac: Vec<u8>, error: Option<TsigError>, other: Vec<u8>) -> Box<Record<TSIG>> {
        let tsig = TSIG::new(
            TsigAlgorithm::HmacSha256,
            self.time,
            FUDGE,
            mac,
            self.id,
            error,
            other,
        );
        Box::new(make_tsig_record(self.signer.signer_name().clone(), tsig))
    }
}

/// Compares two MACs in time independent of where they differ.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// (name, algorithm, secret) of the one key in a BIND or Knot key file.
fn parse(text: &str) -> Result<(String, String, String), String> {
    let mut name = None;
    let mut algorithm = None;
    let mut secret = None;
    let clean = |v: &str| {
        v.trim()
            .trim_end_matches(';')
            .trim()
            .trim_matches('"')
            .to_string()
    };
    for raw in text.lines() {
        let line = raw.split('#').next().unwrap_or("").trim();
        let line = line.strip_prefix("- ").unwrap_or(line).trim();
        if let Some(rest) = line.strip_prefix("key ") {
            // BIND: key "name" {
            let n = clean(rest.trim_end_matches('{'));
            if !n.is_empty() {
                name.get_or_insert(n);
            }
        } else if let Some(rest) = line.strip_prefix("id:") {
            name.get_or_insert(clean(rest));
        } else if let Some(rest) = line
            .strip_prefix("algorithm:")
            .or_else(|| line.strip_prefix("algorithm "))
        {
            algorithm.get_or_insert(clean(rest));
        } else if let Some(rest) = line
            .strip_prefix("secret:")
            .or_else(|| line.strip_prefix("secret "))
        {
            secret.get_or_insert(clean(rest));
        }
    }
    match (name, algorithm, secret) {
        (Some(n), Some(a), Some(s)) if !n.is_empty() && !s.is_empty() => Ok((n, a, s)),
        _ => Err(
            "no key found: want a BIND key file (tsig-keygen) or a Knot one (keymgr -t) with a name, \
             an algorithm and a secret"
                .into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn bind_and_knot_key_files() {
        let bind = "key \"pigsty-xfr\" {\n\talgorithm hmac-sha256;\n\tsecret \"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0\";\n};\n";
        let knot = "# hmac-sha256:pigsty-xfr:...\nkey:\n  - id: pigsty-xfr\n    algorithm: hmac-sha256\n    secret: c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0\n";
        for t in [bind, knot] {
            let (n, a, s) = parse(t).unwrap();
            assert_eq!((n.as_str(), a.as_str()), ("pigsty-xfr", "hmac-sha256"));
            assert_eq!(s, "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0");
        }
        assert!(parse("nothing here").is_err());
    }
}
