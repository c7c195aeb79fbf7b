//! The one way `route` runs programs, so every adapter can be tested with a scripted runner and the
//! real one can be bounded (a hung `resolvectl` must not hang the installer).

use std::collections::VecDeque;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Output {
    /// Exit code; `None` when the program could not be started or was killed at the deadline.
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

pub trait Runner {
    fn run(&mut self, argv: &[String]) -> Output;
}

/// Runs real programs (looked up on PATH), each bounded by `limit`.
pub struct SystemRunner {
    pub limit: Duration,
}

impl Default for SystemRunner {
    fn default() -> Self {
        SystemRunner {
            limit: Duration::from_secs(30),
        }
    }
}

impl Runner for SystemRunner {
    fn run(&mut self, argv: &[String]) -> Output {
        let Some((prog, args)) = argv.split_first() else {
            return Output::fail(127, "empty command");
        };
        let mut child = match Command::new(prog)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("SYSTEMD_PAGER", "")
            .spawn()
        {
            Ok(c) => c,
            Err(e) => {
                return Output {
                    code: None,
                    stdout: String::new(),
                    stderr: format!("cannot run {prog}: {e}"),
                };
            }
        };
        // Drain both pipes on threads so a chatty program cannot block on a full pipe.
        let mut out_pipe = child.stdout.take();
        let mut err_pipe = child.stderr.take();
        let out_t = std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(p) = out_pipe.as_mut() {
                let _ = p.read_to_string(&mut s);
            }
            s
        });
        let err_t = std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(p) = err_pipe.as_mut() {
                let _ = p.read_to_string(&mut s);
            }
            s
        });
        let deadline = Instant::now() + self.limit;
        let code = loop {
            match child.try_wait() {
                Ok(Some(st)) => break st.code(),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => {
                    // Our own child, by its handle.
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
            }
        };
        let stdout = out_t.join().unwrap_or_default();
        let mut stderr = err_t.join().unwrap_or_default();
        if code.is_none() && stderr.is_empty() {
            stderr = format!("{prog} did not finish within {} s", self.limit.as_secs());
        }
        Output {
            code,
            stdout,
            stderr,
        }
    }
}

/// A runner for tests: answers each command from a list of (prefix, output) rules, first match
/// wins (a rule can be used once or forever), and records every command it was asked to run.
#[derive(Default)]
pub struct ScriptedRunner {
    rules: VecDeque<(Vec<String>, Output, bool)>,
    pub calls: Vec<Vec<String>>,
    /// What unmatched commands get.
    pub fallback: Option<Output>,
}

impl ScriptedRunner {
    pub fn new() -> Self {
        ScriptedRunner::default()
    }
    /// Every command starting with `prefix` gets `out`.
    pub fn always(&mut self, prefix: &str, out: Output) -> &mut Self {
        self.rules.push_back((words(prefix), out, false));
        self
    }
    /// The next command starting with `prefix` gets `out`, once; later rules take over after.
    pub fn once(&mut self, prefix: &str, out: Output) -> &mut Self {
        self.rules.push_front((words(prefix), out, true));
        self
    }
    /// Forgets every rule (the call log stays).
    pub fn reset(&mut self) {
        self.rules.clear();
    }
    /// The commands run so far, each joined with spaces.
    pub fn lines(&self) -> Vec<String> {
        self.calls.iter().map(|c| c.join(" ")).collect()
    }
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

impl Runner for ScriptedRunner {
    fn run(&mut self, argv: &[String]) -> Output {
        self.calls.push(argv.to_vec());
        let pos = self
            .rules
            .iter()
            .position(|(p, _, _)| argv.len() >= p.len() && argv[..p.len()] == p[..]);
        match pos {
            Some(i) => {
                let out = self.rules[i].1.clone();
                if self.rules[i].2 {
                    self.rules.remove(i);
                }
                out
            }
            None => self
                .fallback
                .clone()
                .unwrap_or_else(|| Output::fail(127, "not scripted")),
        }
    }
}

pub fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|s| s.to_string()).collect()
}
