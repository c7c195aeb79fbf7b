//! The hosts file (`/etc/hosts`, macOS `/private/etc/hosts`): a bounded, safe read and a pure parse into
//! the lines that answer lookups, each with its line number and class.
//!
//! Lines are read as glibc's `files` backend reads them (`nss/nss_files/files-hosts.c` with
//! `files-parse.c`): everything from the first `#` on is a comment, fields are separated by C
//! `isspace` (so a CRLF line end's `\r` and tabs are separators), the first field is the address, the
//! rest are names. A line whose address is neither IPv4 nor IPv6 as `inet_pton` reads it is skipped,
//! as glibc skips it ("Illegal address: ignore line"); so is an address without a name.
//!
//! Classes:
//! - **Barn block**: the lines between the exact lines `# barn:begin` and `# barn:end`. Barn's own rule
//!   (`internal/hostconfig/hostconfig.go`) refuses a second block, a nested begin, an end without a
//!   begin, an unterminated block and any other line containing `# barn:`; each is a [`HostsError`]
//!   here too, with its line number, since `barn hosts uninstall` would refuse the same file.
//! - **Old Pigsty section**: the comment line `# pigsty dns records` and the address lines after it.
//!   It has no end marker, so it ends at the first line that is blank, a whole-line comment or a Barn
//!   marker (an inline comment such as `# sandbox vip for pg-meta` does not end it). Anywhere else, a
//!   line whose comment is exactly `# pigsty dns` (what Pigsty's `node` role and `vagrant/dns` append)
//!   is in this class too.
//! - **Other**: everything else.

use std::io::Read;
use std::net::{IpAddr, Ipv4Addr};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde::Serialize;

/// Barn's bound (`hostconfig.go`): a hosts file over 1 MiB is refused, not read in part.
pub const MAX_BYTES: usize = 1 << 20;

const BEGIN: &[u8] = b"# barn:begin";
const END: &[u8] = b"# barn:end";
const MARKER: &[u8] = b"# barn:";
const PIGSTY_HEADER: &str = "pigsty dns records";
const PIGSTY_MARK: &str = "pigsty dns";

/// Who a line belongs to, and so what removes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LineClass {
    /// Inside Barn's `# barn:begin` … `# barn:end` block: `barn hosts uninstall` removes it.
    Barn,
    /// The old Pigsty sandbox section or a `# pigsty dns` line: nobody owns it.
    Pigsty,
    /// Anything else the user wrote.
    Other,
}

impl LineClass {
    pub fn describe(self) -> &'static str {
        match self {
            LineClass::Barn => "Barn's block",
            LineClass::Pigsty => "the old Pigsty section",
            LineClass::Other => "a line of your own",
        }
    }
}

/// One line that answers lookups: an address and at least one name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostsLine {
    /// 1-based.
    pub number: usize,
    /// The line as written, without its line end (`\n`, `\r\n`); invalid UTF-8 replaced.
    pub text: String,
    pub address: IpAddr,
    /// As written (case and any trailing dot kept).
    pub names: Vec<String>,
    pub class: LineClass,
}

impl HostsLine {
    /// The IPv4 address an IPv4 lookup gets from this line: the address itself, a v4-mapped IPv6
    /// address (`::ffff:a.b.c.d`) unmapped, and `::1` as 127.0.0.1, as glibc's line parser converts
    /// them for an `AF_INET` lookup (`gethostbyname`, `gethostbyaddr` of an IPv4 address).
    pub fn ipv4(&self) -> Option<Ipv4Addr> {
        match self.address {
            IpAddr::V4(a) => Some(a),
            IpAddr::V6(a) if a.is_loopback() => Some(Ipv4Addr::LOCALHOST),
            IpAddr::V6(a) => a.to_ipv4_mapped(),
        }
    }
}

/// Why a line with a first field answers nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// Neither IPv4 nor IPv6: glibc ignores the line.
    BadAddress,
    /// An address and no name.
    NoName,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub number: usize,
    pub text: String,
    pub reason: SkipReason,
}

/// Where Barn's block is: the marker lines, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BarnBlock {
    pub begin: usize,
    pub end: usize,
}

/// A parsed hosts file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostsFile {
    /// Every line that answers lookups, in file order.
    pub lines: Vec<HostsLine>,
    pub skipped: Vec<Skipped>,
    pub barn: Option<BarnBlock>,
}

/// What makes a hosts file unreadable for us; each carries its line where there is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HostsErrorKind {
    /// A directory, FIFO, socket or device (or a symlink to one; on macOS any symlink).
    NotRegular,
    TooLarge,
    Nul,
    Unreadable,
    /// A line containing `# barn:` that is neither marker exactly.
    MalformedMarker,
    /// `# barn:begin` inside a block.
    NestedBegin,
    /// A second block.
    DuplicateBlock,
    EndWithoutBegin,
    Unterminated,
}

/// The hosts file cannot be read safely or breaks Barn's marker rule: one failing status item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostsError {
    pub kind: HostsErrorKind,
    /// 1-based, where the reason is on a line.
    pub line: Option<usize>,
    /// One sentence naming the offending value.
    pub reason: String,
}

impl HostsError {
    fn at(kind: HostsErrorKind, line: usize, reason: impl Into<String>) -> HostsError {
        HostsError {
            kind,
            line: Some(line),
            reason: reason.into(),
        }
    }

    fn file(kind: HostsErrorKind, reason: impl Into<String>) -> HostsError {
        HostsError {
            kind,
            line: None,
            reason: reason.into(),
        }
    }

    /// What to do about it: the marker errors are Barn's to repair, the rest are the file's.
    pub fn next(&self) -> &'static str {
        match self.kind {
            HostsErrorKind::NotRegular => {
                "make the hosts file a regular file (on Linux a symlink to one is read too; pigsty-dns never writes it)"
            }
            HostsErrorKind::TooLarge | HostsErrorKind::Nul => {
                "repair the hosts file by hand: glibc and Barn both expect a small text file"
            }
            HostsErrorKind::Unreadable => "check the hosts file's permissions",
            _ => {
                "repair Barn's block by hand so exactly one `# barn:begin` … `# barn:end` pair remains (Barn refuses this file too), then run `barn hosts uninstall`"
            }
        }
    }
}

impl std::fmt::Display for HostsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(n) => write!(f, "line {n}: {}", self.reason),
            None => f.write_str(&self.reason),
        }
    }
}

impl std::error::Error for HostsError {}

/// Reads and parses the hosts file at `path`; `Ok(None)` when there is none.
pub fn read(path: &Path) -> Result<Option<HostsFile>, HostsError> {
    match read_bytes(path)? {
        Some(bytes) => parse(&bytes).map(Some),
        None => Ok(None),
    }
}

/// The bytes of the hosts file, read safely: a regular file (on Linux through a symlink too, which
/// must resolve to one; on macOS no symlink, as Barn refuses them), at most [`MAX_BYTES`]. Opened
/// non-blocking, so a FIFO planted there cannot hang `route status`. `Ok(None)`: no such file.
pub fn read_bytes(path: &Path) -> Result<Option<Vec<u8>>, HostsError> {
    let shown = path.display();
    let link = match std::fs::symlink_metadata(path) {
        Ok(m) => m.file_type().is_symlink(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(HostsError::file(
                HostsErrorKind::Unreadable,
                format!("cannot read {shown}: {e}"),
            ));
        }
    };
    let via = match (link, std::fs::read_link(path)) {
        (true, Ok(t)) => format!(" (a symlink to {})", t.display()),
        _ => String::new(),
    };
    if link && !cfg!(target_os = "linux") {
        return Err(HostsError::file(
            HostsErrorKind::NotRegular,
            format!("{shown} is a symlink{via}; only a regular file is read here"),
        ));
    }
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            HostsError::file(
                HostsErrorKind::Unreadable,
                format!("cannot read {shown}{via}: {e}"),
            )
        })?;
    let meta = f.metadata().map_err(|e| {
        HostsError::file(
            HostsErrorKind::Unreadable,
            format!("cannot read {shown}{via}: {e}"),
        )
    })?;
    if !meta.file_type().is_file() {
        return Err(HostsError::file(
            HostsErrorKind::NotRegular,
            format!(
                "{shown}{via} is {}, not a regular file",
                what(&meta.file_type())
            ),
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len().min(MAX_BYTES as u64) as usize + 1);
    (&mut f)
        .take(MAX_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| {
            HostsError::file(
                HostsErrorKind::Unreadable,
                format!("cannot read {shown}{via}: {e}"),
            )
        })?;
    if bytes.len() > MAX_BYTES {
        return Err(HostsError::file(
            HostsErrorKind::TooLarge,
            format!(
                "{shown} is larger than {MAX_BYTES} bytes (1 MiB), Barn's limit for a hosts file"
            ),
        ));
    }
    Ok(Some(bytes))
}

fn what(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else {
        "not a file"
    }
}

/// C `isspace` in the C locale: glibc splits hosts lines on these (`\v` included, unlike Rust's
/// `is_ascii_whitespace`).
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn trim(b: &[u8]) -> &[u8] {
    let start = b.iter().position(|&c| !is_space(c)).unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|&c| !is_space(c))
        .map_or(start, |e| e + 1);
    &b[start..end.max(start)]
}

/// The parse's state between lines.
#[derive(Default)]
struct State {
    file: HostsFile,
    open: Option<usize>,
    pigsty: bool,
}

/// Parses a hosts file's bytes. Errors: a NUL byte, or Barn's markers broken (see the module doc).
pub fn parse(bytes: &[u8]) -> Result<HostsFile, HostsError> {
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        return Err(HostsError::at(
            HostsErrorKind::Nul,
            line,
            format!("has a NUL byte (byte {at}): not a text file"),
        ));
    }
    let mut st = State::default();
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        line(&mut st, i + 1, raw)?;
    }
    if let Some(begin) = st.open {
        return Err(HostsError::at(
            HostsErrorKind::Unterminated,
            begin,
            "`# barn:begin` has no `# barn:end` after it: Barn's block is unterminated",
        ));
    }
    Ok(st.file)
}

fn line(st: &mut State, n: usize, raw: &[u8]) -> Result<(), HostsError> {
    if marker(st, n, raw)? {
        st.pigsty = false;
        return Ok(());
    }
    let body = trim(raw);
    if body.is_empty() {
        st.pigsty = false;
        return Ok(());
    }
    let (data, comment) = match body.iter().position(|&b| b == b'#') {
        Some(h) => (trim(&body[..h]), Some(trim(&body[h + 1..]))),
        None => (body, None),
    };
    let comment = comment.map(|c| String::from_utf8_lossy(c).into_owned());
    if data.is_empty() {
        // A whole-line comment: it starts the Pigsty section or ends it.
        st.pigsty = comment
            .as_deref()
            .is_some_and(|c| c.eq_ignore_ascii_case(PIGSTY_HEADER));
        return Ok(());
    }
    let text = String::from_utf8_lossy(raw.strip_suffix(b"\r").unwrap_or(raw)).into_owned();
    let mut fields = data.split(|&b| is_space(b)).filter(|f| !f.is_empty());
    let first = fields.next().unwrap_or_default();
    let Some(address) = std::str::from_utf8(first)
        .ok()
        .and_then(|s| s.parse::<IpAddr>().ok())
    else {
        st.file.skipped.push(Skipped {
            number: n,
            text,
            reason: SkipReason::BadAddress,
        });
        return Ok(());
    };
    let names: Vec<String> = fields
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    if names.is_empty() {
        st.file.skipped.push(Skipped {
            number: n,
            text,
            reason: SkipReason::NoName,
        });
        return Ok(());
    }
    let marked = comment
        .as_deref()
        .is_some_and(|c| c.eq_ignore_ascii_case(PIGSTY_MARK));
    let class = if st.open.is_some() {
        LineClass::Barn
    } else if st.pigsty || marked {
        LineClass::Pigsty
    } else {
        LineClass::Other
    };
    st.file.lines.push(HostsLine {
        number: n,
        text,
        address,
        names,
        class,
    });
    Ok(())
}

/// Applies Barn's marker rule to one raw line (without its `\n`, so a CRLF marker keeps its `\r`, as
/// Barn sees it). `Ok(true)`: the line was a marker.
fn marker(st: &mut State, n: usize, raw: &[u8]) -> Result<bool, HostsError> {
    use HostsErrorKind::*;
    if raw == BEGIN {
        if let Some(open) = st.open {
            return Err(HostsError::at(
                NestedBegin,
                n,
                format!("a second `# barn:begin` inside the block begun on line {open}"),
            ));
        }
        if let Some(b) = st.file.barn {
            return Err(HostsError::at(
                DuplicateBlock,
                n,
                format!(
                    "a second Barn block; the first is lines {}-{} (Barn keeps exactly one)",
                    b.begin, b.end
                ),
            ));
        }
        st.open = Some(n);
        return Ok(true);
    }
    if raw == END {
        let Some(begin) = st.open.take() else {
            return Err(HostsError::at(
                EndWithoutBegin,
                n,
                "`# barn:end` without a `# barn:begin` before it",
            ));
        };
        st.file.barn = Some(BarnBlock { begin, end: n });
        return Ok(true);
    }
    if raw.windows(MARKER.len()).any(|w| w == MARKER) {
        let shown = String::from_utf8_lossy(raw);
        let why = if raw
            .strip_suffix(b"\r")
            .is_some_and(|r| r == BEGIN || r == END)
        {
            "ends in a carriage return (a CRLF line end); Barn matches the exact lines `# barn:begin` and `# barn:end`"
        } else {
            "contains `# barn:` but is neither `# barn:begin` nor `# barn:end` exactly, which Barn refuses"
        };
        return Err(HostsError::at(
            MalformedMarker,
            n,
            format!("{:?} {why}", cut(&shown)),
        ));
    }
    Ok(false)
}

/// A value cut to a readable length for an error line.
fn cut(s: &str) -> String {
    const MAX: usize = 80;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests;
