//! Advisory whole-file locks (flock): the kernel drops one when its holder dies, so a killed process
//! never leaves a lock behind.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// Takes an exclusive lock without waiting: Ok(true) when taken, Ok(false) when someone holds it.
pub fn try_lock(f: &File) -> io::Result<bool> {
    // SAFETY: flock on a file descriptor we own for the duration of the call.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(e)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_second_holder_is_refused_until_the_first_closes() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("lock");
        let a = File::create(&p).unwrap();
        let b = File::open(&p).unwrap();
        assert!(super::try_lock(&a).unwrap());
        assert!(!super::try_lock(&b).unwrap());
        drop(a);
        assert!(super::try_lock(&b).unwrap());
    }
    use std::fs::File;
}
