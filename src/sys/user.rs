//! Who we run as, and the few questions about other users and processes the installers ask.

pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

pub fn is_root() -> bool {
    euid() == 0
}

/// The login name of `uid`: the passwd entry, else `$USER`, else the number.
pub fn user_name(uid: u32) -> String {
    // SAFETY: getpwuid returns NULL or a pointer to a static entry whose pw_name is NUL-terminated;
    // it is copied out at once, before any other passwd call.
    let from_db = unsafe {
        let pw = libc::getpwuid(uid);
        if pw.is_null() || (*pw).pw_name.is_null() {
            None
        } else {
            Some(
                std::ffi::CStr::from_ptr((*pw).pw_name)
                    .to_string_lossy()
                    .into_owned(),
            )
        }
    };
    from_db
        .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| uid.to_string())
}

/// The home directory of the account `name`, from the passwd entry.
pub fn home_of(name: &str) -> Option<std::path::PathBuf> {
    let c = std::ffi::CString::new(name).ok()?;
    // SAFETY: c is a valid NUL-terminated string; getpwnam returns NULL or a pointer to a static entry
    // whose pw_dir is NUL-terminated, copied out at once, before any other passwd call.
    unsafe {
        let pw = libc::getpwnam(c.as_ptr());
        if pw.is_null() || (*pw).pw_dir.is_null() {
            return None;
        }
        let dir = std::ffi::CStr::from_ptr((*pw).pw_dir)
            .to_string_lossy()
            .into_owned();
        (!dir.is_empty()).then(|| std::path::PathBuf::from(dir))
    }
}

/// Whether an account of that name exists.
pub fn user_exists(name: &str) -> bool {
    let Ok(c) = std::ffi::CString::new(name) else {
        return false;
    };
    // SAFETY: c is a valid NUL-terminated string; we only test the result for null.
    unsafe { !libc::getpwnam(c.as_ptr()).is_null() }
}

/// Why `name` is a login account, or `None` for a system account or no account: a uid in
/// /etc/login.defs' `UID_MIN`-`UID_MAX` (1000-60000 by default), or a system uid with both a shell
/// listed in /etc/shells and a home directory that exists (someone logs in there). `useradd --system
/// --no-create-home` gives `/bin/sh` and a home that does not exist: a system account.
pub fn login_account(name: &str) -> Option<String> {
    let c = std::ffi::CString::new(name).ok()?;
    let field = |p: *const libc::c_char| {
        if p.is_null() {
            String::new()
        } else {
            // SAFETY: a non-null passwd field is a NUL-terminated string.
            unsafe { std::ffi::CStr::from_ptr(p) }
                .to_string_lossy()
                .into_owned()
        }
    };
    // SAFETY: c is NUL-terminated; the fields are copied out before any other passwd call.
    let (uid, shell, home) = unsafe {
        let pw = libc::getpwnam(c.as_ptr());
        if pw.is_null() {
            return None;
        }
        ((*pw).pw_uid, field((*pw).pw_shell), field((*pw).pw_dir))
    };
    let defs = std::fs::read_to_string("/etc/login.defs").unwrap_or_default();
    let def = |key: &str, default: u32| {
        defs.lines()
            .rev()
            .find_map(|l| {
                let mut w = l.split_whitespace();
                (w.next() == Some(key)).then(|| w.next()?.parse().ok())?
            })
            .unwrap_or(default)
    };
    if (def("UID_MIN", 1000)..=def("UID_MAX", 60000)).contains(&uid) {
        return Some(format!("uid {uid} is in the range of people's accounts"));
    }
    // passwd(5): an empty shell is /bin/sh.
    let shell = if shell.is_empty() {
        "/bin/sh".into()
    } else {
        shell
    };
    let shells = std::fs::read_to_string("/etc/shells").unwrap_or_default();
    let login_shell = shells.lines().any(|l| l.trim() == shell);
    let lived_in =
        !home.is_empty() && home != "/nonexistent" && std::path::Path::new(&home).is_dir();
    (login_shell && lived_in).then(|| {
        format!(
            "its shell {} is a login shell (/etc/shells) and its home {} exists",
            crate::output::text::shown(&shell),
            crate::output::text::shown(&home)
        )
    })
}

/// Whether a process with this pid exists (ours or not).
pub fn pid_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists; it sends nothing.
    pid > 0
        && (unsafe { libc::kill(pid, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn we_are_alive_and_have_a_name() {
        assert!(pid_alive(std::process::id()));
        assert!(!pid_alive(0));
        assert!(!user_name(euid()).is_empty());
        assert!(!user_exists("no such user\u{1}"));
        assert!(home_of("root").is_some_and(|h| h.is_absolute()));
        assert_eq!(home_of("no such user\u{1}"), None);
    }
}
