//! Running a system program with a time limit: the one place that spawns `resolvectl`, `systemctl`,
//! `launchctl` and the like. Everything else reaches it through `sys::runner::Runner`.

use std::io::{self, Read};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Output {
    /// Exit code; `None` when the program could not be started, was killed by a signal, or hit the limit.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }
    pub fn ok_with(stdout: &str) -> Output {
        Output {
            code: Some(0),
            stdout: stdout.into(),
            stderr: String::new(),
        }
    }
    pub fn fail(code: i32, stderr: &str) -> Output {
        Output {
            code: Some(code),
            stdout: String::new(),
            stderr: stderr.into(),
        }
    }
    /// One line for messages: the first stderr line, else the first stdout line.
    pub fn summary(&self) -> String {
        let line = self
            .stderr
            .lines()
            .find(|l| !l.trim().is_empty())
            .or_else(|| self.stdout.lines().find(|l| !l.trim().is_empty()))
            .unwrap_or("");
        match self.code {
            Some(c) => format!("exit {c}: {line}"),
            None => format!("did not finish: {line}"),
        }
    }
}

/// Runs `argv[0]` (looked up on PATH) with the rest as arguments, no stdin, no pager, and waits at most
/// `limit`; then the child is killed (through its handle: it is ours) and the error is `TimedOut`.
pub fn run(argv: &[String], limit: Duration) -> io::Result<Output> {
    let (prog, args) = argv
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "empty command"))?;
    let mut child = Command::new(prog)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("SYSTEMD_PAGER", "")
        .spawn()
        .map_err(|e| io::Error::new(e.kind(), format!("cannot run {prog}: {e}")))?;
    // Drain both pipes on threads so a chatty program cannot block on a full pipe.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let out_t = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err_t = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait()? {
            Some(st) => break Some(st),
            None if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    match status {
        Some(st) => Ok(Output {
            code: st.code(),
            stdout,
            stderr,
        }),
        None => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!("{prog} did not finish within {} s", limit.as_secs_f64()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn reports_code_and_output_and_times_out() {
        let out = run(
            &argv(&["sh", "-c", "echo hi; echo err >&2; exit 3"]),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(out.code, Some(3));
        assert_eq!(out.stdout, "hi\n");
        assert_eq!(out.stderr, "err\n");
        let t = Instant::now();
        let e = run(&argv(&["sleep", "5"]), Duration::from_millis(200)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert!(t.elapsed() < Duration::from_secs(3));
        assert_eq!(
            run(&[], Duration::from_secs(1)).unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
        assert!(
            run(&argv(&["/nonexistent/prog"]), Duration::from_secs(1))
                .unwrap_err()
                .to_string()
                .contains("cannot run")
        );
    }
}
