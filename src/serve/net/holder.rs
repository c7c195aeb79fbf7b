//! Who holds a port, for the bind error. Linux: `/proc/net/{udp,tcp}[6]` gives the socket inode, and
//! `/proc/<pid>/fd` links name the process (only our own processes are visible without privileges).
//! Elsewhere (macOS) there is no /proc, and the error simply names no holder.

use crate::dns::transport::Transport;

/// Who holds `port`; `None` where there is no `/proc` to ask (chosen at run time, so the one body
/// compiles on every platform).
pub(super) fn find(transport: Transport, port: u16) -> Option<String> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let tables: &[&str] = match transport {
        Transport::Udp => &["/proc/net/udp", "/proc/net/udp6"],
        Transport::Tcp => &["/proc/net/tcp", "/proc/net/tcp6"],
    };
    let mut sockets = Vec::new();
    for table in tables {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(state), Some(uid), Some(inode)) =
                (f.get(1), f.get(3), f.get(7), f.get(9))
            else {
                continue;
            };
            let Some(p) = local
                .rsplit(':')
                .next()
                .and_then(|h| u16::from_str_radix(h, 16).ok())
            else {
                continue;
            };
            // TCP: only listeners (state 0A) hold the port.
            if p != port || (transport == Transport::Tcp && *state != "0A") {
                continue;
            }
            sockets.push((uid.to_string(), format!("socket:[{inode}]")));
        }
    }
    let (uid, _) = sockets.first()?.clone();
    if let Some(found) = process_with_socket(&sockets) {
        return Some(found);
    }
    Some(format!("a process of uid {uid} (not visible to this user)"))
}

fn process_with_socket(sockets: &[(String, String)]) -> Option<String> {
    // Bounded by the number of processes and their descriptors; only runs after a failed bind.
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let pid = entry.file_name();
        let Some(pid) = pid
            .to_str()
            .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let Ok(link) = std::fs::read_link(fd.path()) else {
                continue;
            };
            if sockets.iter().any(|(_, s)| link.as_os_str() == s.as_str()) {
                let comm = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
                return Some(format!("{} (pid {pid})", comm.trim()));
            }
        }
    }
    None
}
