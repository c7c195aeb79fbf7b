//! systemd-resolved's configuration as systemd reads it (resolved.conf(5)): the main file, then the
//! `resolved.conf.d/*.conf` drop-ins ordered by file name across /etc, /run, /usr/local/lib and
//! /usr/lib, a file in an earlier directory hiding the same name in a later one; within `[Resolve]`
//! sections the last assignment of a key wins. One reader for every setting pigsty-dns looks at
//! (`ReadEtcHosts=`, `Cache=`, `CacheFromLocalhost=`, `MulticastDNS=`).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The main file, relative to the root.
pub const MAIN: &str = "etc/systemd/resolved.conf";
/// Where the drop-ins are, relative to the root, highest precedence first.
const DROP_IN_DIRS: [&str; 4] = [
    "etc/systemd/resolved.conf.d",
    "run/systemd/resolved.conf.d",
    "usr/local/lib/systemd/resolved.conf.d",
    "usr/lib/systemd/resolved.conf.d",
];

fn read_lossy(path: &Path) -> Option<String> {
    std::fs::read(path)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// The texts systemd reads, in its order, below `root` (`/` for this host): the main file (when it
/// exists), then each drop-in in effect.
pub fn texts(root: &Path) -> Vec<String> {
    let mut texts: Vec<String> = read_lossy(&root.join(MAIN)).into_iter().collect();
    let mut drop_ins: BTreeMap<OsString, PathBuf> = BTreeMap::new();
    for dir in DROP_IN_DIRS.iter().rev() {
        let Ok(rd) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for p in rd.flatten().map(|e| e.path()) {
            if let (Some(n), true) = (p.file_name(), p.extension().is_some_and(|x| x == "conf")) {
                drop_ins.insert(n.to_os_string(), p.clone());
            }
        }
    }
    texts.extend(drop_ins.values().filter_map(|p| read_lossy(p)));
    texts
}

/// Every value assigned to `key` in a `[Resolve]` section of `texts`, in the order systemd applies
/// them, trimmed (an empty one resets the setting to its default).
pub fn assignments<'a, S: AsRef<str>>(texts: &'a [S], key: &str) -> Vec<&'a str> {
    let mut values = Vec::new();
    for text in texts {
        let mut in_resolve = false;
        for line in text.as_ref().lines().map(str::trim) {
            if line.starts_with('[') {
                in_resolve = line == "[Resolve]";
                continue;
            }
            if let Some((k, v)) = line.split_once('=')
                && in_resolve
                && k.trim() == key
            {
                values.push(v.trim());
            }
        }
    }
    values
}

/// systemd's boolean (`parse_boolean`); `None` for a word it does not read as one.
pub fn boolean(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "1" | "yes" | "y" | "true" | "t" | "on" => Some(true),
        "0" | "no" | "n" | "false" | "f" | "off" => Some(false),
        _ => None,
    }
}

/// A boolean setting: the last assignment systemd can read wins, an empty one resets to `default`,
/// and one it cannot read is ignored, as systemd ignores it (with a warning in its log).
pub fn boolean_setting<S: AsRef<str>>(texts: &[S], key: &str, default: bool) -> bool {
    assignments(texts, key).into_iter().fold(default, |now, v| {
        if v.is_empty() {
            default
        } else {
            boolean(v).unwrap_or(now)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drop_ins_by_name_across_directories_earlier_directory_hides_later() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        let put = |p: &str, t: &str| {
            std::fs::create_dir_all(r.join(p).parent().unwrap()).unwrap();
            std::fs::write(r.join(p), t).unwrap();
        };
        assert!(texts(r).is_empty());
        put(MAIN, "main");
        put("usr/lib/systemd/resolved.conf.d/b.conf", "usr b");
        put("etc/systemd/resolved.conf.d/b.conf", "etc b");
        put("usr/local/lib/systemd/resolved.conf.d/a.conf", "local a");
        put("run/systemd/resolved.conf.d/c.conf", "run c");
        put("etc/systemd/resolved.conf.d/d.txt", "not a drop-in");
        assert_eq!(texts(r), ["main", "local a", "etc b", "run c"]);
    }

    #[test]
    fn assignments_only_in_resolve_sections_in_order() {
        let t = [
            "[Resolve]\nCache=no\n#Cache=yes\n[Other]\nCache=x\n",
            "[Resolve]\n Cache = no-negative \nCache=\n",
        ];
        assert_eq!(assignments(&t, "Cache"), ["no", "no-negative", ""]);
        assert!(assignments(&t, "DNS").is_empty());
    }

    #[test]
    fn boolean_settings_ignore_what_systemd_cannot_read_and_reset_on_empty() {
        let s = |t: &[&str]| boolean_setting(t, "ReadEtcHosts", true);
        assert!(s(&[]));
        assert!(!s(&["[Resolve]\nReadEtcHosts=off\n"]));
        assert!(!s(&["[Resolve]\nReadEtcHosts=NO\nReadEtcHosts=maybe\n"]));
        assert!(s(&[
            "[Resolve]\nReadEtcHosts=no\n",
            "[Resolve]\nReadEtcHosts=\n"
        ]));
        assert!(s(&[
            "[Resolve]\nReadEtcHosts=no\n",
            "[Resolve]\nReadEtcHosts=T\n"
        ]));
    }
}
