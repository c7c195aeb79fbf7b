//! How the installer runs systemctl / launchctl / loginctl: through a `Runner`, so the logic above it is
//! unit-tested against a fake that records every call and never touches the host.

use std::io;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Output {
    /// None when the program was killed by a signal.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }
}

pub trait Runner {
    /// Runs `argv[0]` with the rest as arguments and waits for it (bounded).
    fn run(&mut self, argv: &[String]) -> io::Result<Output>;
}

/// The real thing. Each program gets at most `timeout`; then it is killed (by its PID: it is our child).
pub struct SystemRunner {
    pub timeout: Duration,
}

impl Default for SystemRunner {
    fn default() -> Self {
        SystemRunner {
            timeout: Duration::from_secs(90),
        }
    }
}

impl Runner for SystemRunner {
    fn run(&mut self, argv: &[String]) -> io::Result<Output> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "empty command"))?;
        let child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let pid = child.id();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        match rx.recv_timeout(self.timeout) {
            Ok(out) => {
                let out = out?;
                Ok(Output {
                    code: out.status.code(),
                    stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                    stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
                })
            }
            Err(_) => {
                if let Ok(pid) = libc::pid_t::try_from(pid) {
                    // SAFETY: kill(2) on the PID of the child we spawned and have not reaped yet.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
                Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "{program} did not finish within {} s",
                        self.timeout.as_secs()
                    ),
                ))
            }
        }
    }
}

#[cfg(test)]
pub mod fake {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// Answers by the first rule whose prefix matches the command line; records every call in `log`
    /// (shared, so the order against other fakes can be checked).
    pub struct FakeRunner {
        pub rules: Vec<(String, Output)>,
        pub log: Rc<RefCell<Vec<String>>>,
    }

    impl FakeRunner {
        pub fn new(log: Rc<RefCell<Vec<String>>>) -> Self {
            FakeRunner {
                rules: Vec::new(),
                log,
            }
        }

        pub fn on(mut self, prefix: &str, code: i32, stdout: &str) -> Self {
            self.rules.push((
                prefix.to_string(),
                Output {
                    code: Some(code),
                    stdout: stdout.into(),
                    stderr: if code == 0 {
                        String::new()
                    } else {
                        format!("{prefix}: failed")
                    },
                },
            ));
            self
        }
    }

    impl Runner for FakeRunner {
        fn run(&mut self, argv: &[String]) -> io::Result<Output> {
            let line = argv.join(" ");
            self.log.borrow_mut().push(format!("run {line}"));
            Ok(self
                .rules
                .iter()
                .find(|(p, _)| line.starts_with(p.as_str()))
                .map(|(_, o)| o.clone())
                .unwrap_or(Output {
                    code: Some(0),
                    ..Output::default()
                }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_runner_reports_code_and_output_and_times_out() {
        let mut r = SystemRunner::default();
        let out = r
            .run(&[
                "sh".into(),
                "-c".into(),
                "echo hi; echo err >&2; exit 3".into(),
            ])
            .unwrap();
        assert_eq!(out.code, Some(3));
        assert_eq!(out.stdout, "hi\n");
        assert_eq!(out.stderr, "err\n");
        let mut r = SystemRunner {
            timeout: Duration::from_millis(200),
        };
        let t = std::time::Instant::now();
        let e = r.run(&["sleep".into(), "5".into()]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert!(t.elapsed() < Duration::from_secs(3));
        assert!(r.run(&[]).is_err());
    }
}
