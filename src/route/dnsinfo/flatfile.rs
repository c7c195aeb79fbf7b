//! `/etc/resolver` read exactly as configd reads it (`dnsinfo/dnsinfo_flatfile.c`,
//! `_dnsinfo_flatfile_create_resolver`): lines end at `\n` only (a `\r` stays in the value); the
//! words are what `strsep(&line, " \t")` gives, so every single space or tab separates — a line with
//! leading whitespace has an empty first word and is no keyword, and `domain  x` (two blanks) has an
//! empty value, which sets no domain yet uses up the one `domain` line; a keyword counts only with a
//! value word, and toward its maximum even when the value is then unusable; `port` is `strtol` with
//! base 0 (`0x14ea`, `012`); a `nameserver` is a numeric address, or one with a trailing `.port`. A file
//! with no keyword and value is no resolver; one without a `domain` keyword is for its file name.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use super::super::files;

/// One entry of `/etc/resolver` as configd reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolverFile {
    pub path: PathBuf,
    pub name: String,
    /// The `domain` line's value (trailing dots trimmed), else the file name; `None` when the line's
    /// value was empty (`domain  x`, `domain .`).
    pub domain: Option<String>,
    /// The domain came from a `domain` line, not the file name.
    pub domain_line: bool,
    /// The addresses of the usable `nameserver` lines (of the first three).
    pub nameservers: Vec<IpAddr>,
    pub port: Option<u16>,
    pub options: Option<String>,
    /// Carries pigsty-dns's ownership marker.
    pub ours: bool,
}

/// configd's keywords and how many lines of each count (`MAXNS` nameservers).
fn max_count(key: &str) -> Option<usize> {
    match key {
        "nameserver" => Some(3),
        "domain" | "flags" | "interface" | "options" | "port" | "search" | "search_order"
        | "sortlist" | "timeout" => Some(1),
        _ => None,
    }
}

pub fn read_file(path: &Path) -> Option<ResolverFile> {
    let bytes = std::fs::read(path).ok()?;
    let name = path.file_name()?.to_string_lossy().into_owned();
    parse(path, name, &String::from_utf8_lossy(&bytes))
}

fn parse(path: &Path, name: String, text: &str) -> Option<ResolverFile> {
    let mut f = ResolverFile {
        path: path.to_path_buf(),
        domain: None,
        name,
        domain_line: false,
        nameservers: vec![],
        port: None,
        options: None,
        ours: files::owned(text).is_some(),
    };
    let mut counts: Vec<(String, usize)> = Vec::new();
    let mut created = false;
    for line in text.split('\n').filter(|l| !l.is_empty()) {
        let mut words = line.split([' ', '\t']);
        let key = words.next().unwrap_or_default();
        if key.starts_with(';') || key.starts_with('#') {
            continue;
        }
        let key = key.to_ascii_lowercase();
        let Some(max) = max_count(&key) else { continue };
        let Some(word) = words.next() else { continue };
        let n = match counts.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => n,
            None => {
                counts.push((key.clone(), 0));
                &mut counts.last_mut().expect("just pushed").1
            }
        };
        *n += 1;
        if *n > max {
            continue;
        }
        created = true;
        match key.as_str() {
            "domain" => {
                f.domain_line = true;
                let d = word.trim_end_matches('.');
                f.domain = (!d.is_empty()).then(|| d.to_string());
            }
            "nameserver" => f.nameservers.extend(nameserver(word)),
            "port" => f.port = u16::try_from(strtol0(word)).ok(),
            "options" => {
                let o: Vec<&str> = std::iter::once(word)
                    .chain(words)
                    .filter(|w| !w.is_empty())
                    .collect();
                if !o.is_empty() {
                    f.options = Some(o.join(" "));
                }
            }
            _ => {}
        }
    }
    if !created {
        return None;
    }
    if !counts.iter().any(|(k, _)| k == "domain") {
        f.domain = Some(f.name.clone());
    }
    Some(f)
}

/// `_dnsinfo_parse_nameserver`: a numeric address (an IPv6 one may carry `%scope`), else one with a
/// trailing `.port` (the port, base 10, kept by configd in the address; not needed here).
fn nameserver(word: &str) -> Option<IpAddr> {
    let numeric = |w: &str| {
        w.parse::<IpAddr>().ok().or_else(|| {
            w.split_once('%')?
                .0
                .parse::<std::net::Ipv6Addr>()
                .ok()
                .map(IpAddr::V6)
        })
    };
    numeric(word).or_else(|| {
        let (addr, port) = word.rsplit_once('.')?;
        (0..=i64::from(u16::MAX))
            .contains(&strtol(port, 10))
            .then(|| numeric(addr))
            .flatten()
    })
}

/// C's `strtol(s, NULL, 0)`: leading blanks, a sign, `0x` hex or `0` octal, then digits up to the first
/// that is not one; 0 when there are none (or -1 for no value when it would overflow, which configd
/// then refuses as out of range as it does any value past 65535).
pub fn strtol0(s: &str) -> i64 {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let body = t.strip_prefix(['+', '-']).unwrap_or(t);
    let neg = t.starts_with('-');
    let (radix, digits) = match body.strip_prefix("0x").or(body.strip_prefix("0X")) {
        Some(h) if h.starts_with(|c: char| c.is_ascii_hexdigit()) => (16, h),
        _ if body.starts_with('0') => (8, body),
        _ => (10, body),
    };
    let n = strtol(digits, radix);
    if neg { -n } else { n }
}

/// The leading digits of `s` in `radix`, saturating.
fn strtol(s: &str, radix: u32) -> i64 {
    s.chars()
        .map_while(|c| c.to_digit(radix))
        .fold(0i64, |n, d| {
            n.saturating_mul(i64::from(radix))
                .saturating_add(i64::from(d))
        })
}

/// Every entry of the resolver directory configd would read (every name but `.` and `..`, dotfiles
/// included), in directory order.
pub fn read_dir(dir: &Path) -> Vec<ResolverFile> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return vec![];
    };
    rd.flatten()
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_dir()))
        .filter_map(|e| read_file(&e.path()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Option<ResolverFile> {
        parse(Path::new("/etc/resolver/corp"), "corp".into(), text)
    }

    #[test]
    fn words_are_split_on_every_single_blank() {
        // Leading whitespace: an empty first word, no keyword; the file is for its name.
        let f = read("nameserver 10.1.2.3\n domain pigsty.test\n").unwrap();
        assert_eq!((f.domain.as_deref(), f.domain_line), (Some("corp"), false));
        assert!(read("  domain pigsty.test\n\tnameserver 10.1.2.3\n").is_none());
        // Two blanks: an empty value sets no domain, uses the one domain line, and the file name is not
        // used either.
        let f = read("domain  pigsty.test\ndomain pigsty.test\nnameserver 10.1.2.3\n").unwrap();
        assert_eq!((f.domain, f.domain_line), (None, true));
        let f = read("domain \nnameserver 10.1.2.3\n").unwrap();
        assert_eq!(f.domain, None);
        // A tab separates like a space; a keyword alone is nothing; keywords ignore case.
        let f = read("DOMAIN\tpigsty.test.\nport\n").unwrap();
        assert_eq!((f.domain.as_deref(), f.port), (Some("pigsty.test"), None));
        assert!(read("domain\n# nothing\n; else\n").is_none());
        // Only \n ends a line: a CRLF file's domain keeps its \r and claims no zone.
        let f = read("domain pigsty.test\r\nnameserver 10.1.2.3\r\nport 5354\r\n").unwrap();
        assert_eq!(f.domain.as_deref(), Some("pigsty.test\r"));
        assert_eq!(f.port, Some(5354), "strtol stops at the \\r");
        assert_eq!(
            f.nameservers,
            Vec::<IpAddr>::new(),
            "10.1.2.3\\r is no address"
        );
    }

    #[test]
    fn port_is_strtol_with_base_0_and_nameservers_are_numeric() {
        let port = |v: &str| read(&format!("port {v}\n")).unwrap().port;
        assert_eq!(port("5354"), Some(5354));
        assert_eq!(port("0x14ea"), Some(5354));
        assert_eq!(port("012"), Some(10));
        assert_eq!(port("5354abc"), Some(5354));
        assert_eq!(port("abc"), Some(0));
        assert_eq!(port("70000"), None);
        assert_eq!(port("-1"), None);
        // The first port line counts even when out of range.
        assert_eq!(read("port 70000\nport 5354\n").unwrap().port, None);
        let f = read(
            "nameserver 127.0.0.1.5354\nnameserver fe80::1%en0\nnameserver host.example\nnameserver 10.0.0.4\n",
        )
        .unwrap();
        assert_eq!(
            f.nameservers,
            [
                "127.0.0.1".parse::<IpAddr>().unwrap(),
                "fe80::1".parse().unwrap()
            ],
            "three lines count, usable or not"
        );
        let f = read("options  timeout:1\tndots:2 \n").unwrap();
        assert_eq!(f.options.as_deref(), Some("timeout:1 ndots:2"));
    }
}
