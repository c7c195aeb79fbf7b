//! A minimal `sd_notify`: one datagram to `$NOTIFY_SOCKET` (a path, or `@name` for a Linux abstract
//! socket), which is all `Type=notify` needs. Without the variable (not under systemd) every call is a
//! no-op, so the daemon runs the same everywhere.

use std::io;
use std::os::unix::net::UnixDatagram;

const ENV: &str = "NOTIFY_SOCKET";

/// The sockets are bound and the zone is loaded; `status` is shown by `systemctl status`.
pub fn ready(status: &str) {
    send_logged(&format!("READY=1\nSTATUS={}", one_line(status)));
}

/// Shutdown has begun.
pub fn stopping() {
    send_logged("STOPPING=1\nSTATUS=stopping");
}

/// A newline would start another `KEY=` assignment.
fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

fn send_logged(msg: &str) {
    match notify(msg) {
        Ok(_) => {}
        // The service manager gains nothing from a retry; say so and carry on serving.
        Err(e) => tracing::warn!("cannot notify the service manager: {e}"),
    }
}

/// Sends `msg` to `$NOTIFY_SOCKET`; `Ok(false)` when the variable is not set.
pub fn notify(msg: &str) -> io::Result<bool> {
    let Some(target) = std::env::var_os(ENV).filter(|v| !v.is_empty()) else {
        return Ok(false);
    };
    let target = target
        .to_str()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "NOTIFY_SOCKET is not UTF-8"))?;
    send_to(target, msg)?;
    Ok(true)
}

/// Sends one datagram to `target`: a filesystem path, or `@name` for an abstract socket (Linux).
pub fn send_to(target: &str, msg: &str) -> io::Result<()> {
    let sock = UnixDatagram::unbound()?;
    let sent = if let Some(name) = target.strip_prefix('@') {
        send_abstract(&sock, name, msg)?
    } else if target.starts_with('/') {
        sock.send_to(msg.as_bytes(), target)?
    } else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("NOTIFY_SOCKET={target} is neither an absolute path nor @abstract"),
        ));
    };
    if sent != msg.len() {
        return Err(io::Error::other("short write to NOTIFY_SOCKET"));
    }
    Ok(())
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn send_abstract(sock: &UnixDatagram, name: &str, msg: &str) -> io::Result<usize> {
    #[cfg(target_os = "android")]
    use std::os::android::net::SocketAddrExt;
    #[cfg(target_os = "linux")]
    use std::os::linux::net::SocketAddrExt;
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
    sock.send_to_addr(msg.as_bytes(), &addr)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
use no_abstract_sockets as send_abstract;

/// Where abstract sockets do not exist (macOS). Compiled on Linux for its test.
#[cfg(any(not(any(target_os = "linux", target_os = "android")), test))]
fn no_abstract_sockets(_sock: &UnixDatagram, name: &str, _msg: &str) -> io::Result<usize> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        format!("abstract socket @{name} exists only on Linux"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn recv(sock: &UnixDatagram) -> String {
        sock.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut buf = [0u8; 512];
        let n = sock.recv(&mut buf).unwrap();
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }

    #[test]
    fn without_abstract_sockets_the_error_says_so() {
        let (a, _b) = UnixDatagram::pair().unwrap();
        let e = no_abstract_sockets(&a, "x", "READY=1").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::Unsupported);
        assert!(e.to_string().contains("@x exists only on Linux"), "{e}");
    }

    #[test]
    fn sends_to_a_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify.sock");
        let sock = UnixDatagram::bind(&path).unwrap();
        send_to(path.to_str().unwrap(), "READY=1\nSTATUS=x").unwrap();
        assert_eq!(recv(&sock), "READY=1\nSTATUS=x");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn sends_to_an_abstract_socket() {
        use std::os::linux::net::SocketAddrExt;
        let name = format!("pigsty-dns-test-{}", std::process::id());
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let sock = UnixDatagram::bind_addr(&addr).unwrap();
        send_to(&format!("@{name}"), "STOPPING=1").unwrap();
        assert_eq!(recv(&sock), "STOPPING=1");
    }

    #[test]
    fn refuses_a_relative_target_and_keeps_status_on_one_line() {
        assert!(send_to("relative.sock", "READY=1").is_err());
        assert_eq!(one_line("a\nb\rc"), "a b c");
    }
}
