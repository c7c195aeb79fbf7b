//! The one way `route` runs programs, so every adapter can be tested with a scripted runner and the
//! real one can be bounded (a hung `resolvectl` must not hang the installer).

use std::collections::VecDeque;
use std::time::Duration;

pub use crate::sys::exec::Output;

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
        // route reports a program that could not start or finish as an output with no exit code.
        crate::sys::exec::run(argv, self.limit).unwrap_or_else(|e| Output {
            code: None,
            stdout: String::new(),
            stderr: e.to_string(),
        })
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
