//! The one way the installers run programs: through a `Runner`, so everything above it is tested
//! against a scripted runner that records every call and never touches the host, and the real one is
//! bounded (a hung `resolvectl` or `systemctl` must not hang the installer).

use std::time::Duration;

pub use super::exec::Output;

pub trait Runner {
    /// Runs `argv[0]` with the rest as arguments and waits for it. A program that could not start or
    /// finish in time is an output with no exit code and the reason in `stderr`.
    fn run(&mut self, argv: &[String]) -> Output;

    /// `getaddrinfo(name)` in this process with default hints — the path curl, Safari and every
    /// ordinary program take (on macOS `ai_flags` 0 means `AI_DEFAULT`, with `AI_ADDRCONFIG`:
    /// Libinfo's `mdns_module.c`) — as an output of one address a line. A scripted runner sees it as
    /// the command [`GETADDRINFO`]` NAME`.
    fn getaddrinfo(&mut self, name: &str) -> Output {
        getaddrinfo(name, GETADDRINFO_LIMIT)
    }
}

/// The command line a scripted runner sees for [`Runner::getaddrinfo`]: not a program.
pub const GETADDRINFO: &str = "getaddrinfo()";
/// How long one in-process lookup may take before it is given up (its thread ends by itself).
const GETADDRINFO_LIMIT: Duration = Duration::from_secs(10);

/// Rust's `ToSocketAddrs` (getaddrinfo with only `ai_socktype` set, so one address each), on a thread
/// of its own so a resolver that never answers cannot hang the caller past `limit`.
pub fn getaddrinfo(name: &str, limit: Duration) -> Output {
    use std::net::ToSocketAddrs;
    let (tx, rx) = std::sync::mpsc::channel();
    let owned = name.to_string();
    let spawned = std::thread::Builder::new()
        .name("getaddrinfo".into())
        .spawn(move || {
            let r = (owned.as_str(), 0)
                .to_socket_addrs()
                .map(|it| it.map(|a| a.ip().to_string()).collect::<Vec<_>>());
            let _ = tx.send(r);
        });
    let failed = |code, stderr: String| Output {
        code,
        stdout: String::new(),
        stderr,
    };
    if let Err(e) = spawned {
        return failed(
            None,
            format!("getaddrinfo {name}: cannot start a thread: {e}"),
        );
    }
    match rx.recv_timeout(limit) {
        Ok(Ok(addrs)) => {
            Output::ok_with(&addrs.iter().map(|a| format!("{a}\n")).collect::<String>())
        }
        Ok(Err(e)) => failed(Some(1), format!("getaddrinfo {name}: {e}")),
        Err(_) => failed(
            None,
            format!("getaddrinfo {name}: no answer within {} s", limit.as_secs()),
        ),
    }
}

/// Runs real programs, each bounded by `limit` (then killed, by its PID: it is our child).
pub struct SystemRunner {
    pub limit: Duration,
}

impl SystemRunner {
    pub fn new(limit: Duration) -> SystemRunner {
        SystemRunner { limit }
    }
}

impl Default for SystemRunner {
    fn default() -> Self {
        SystemRunner::new(Duration::from_secs(30))
    }
}

impl Runner for SystemRunner {
    fn run(&mut self, argv: &[String]) -> Output {
        super::exec::run(argv, self.limit).unwrap_or_else(|e| Output {
            code: None,
            stdout: String::new(),
            stderr: e.to_string(),
        })
    }

    fn getaddrinfo(&mut self, name: &str) -> Output {
        getaddrinfo(name, self.limit.min(GETADDRINFO_LIMIT))
    }
}

pub fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|s| s.to_string()).collect()
}

#[cfg(any(test, feature = "test-support"))]
pub use scripted::ScriptedRunner;

#[cfg(any(test, feature = "test-support"))]
mod scripted {
    use std::cell::RefCell;
    use std::collections::VecDeque;
    use std::rc::Rc;

    use super::{GETADDRINFO, Output, Runner};

    /// A fake program behind a command: its output from the command line, with state of its own.
    type Fake = Box<dyn FnMut(&[String]) -> Output>;

    /// What a rule answers: always the same output, or what a fake (a daemon, configd) makes of it.
    enum Answer {
        Fixed(Output),
        With(Fake),
    }

    /// A runner for tests: answers each command from a list of (prefix, output) rules, first match
    /// wins (a rule can be used once or forever), and records every command it was asked to run —
    /// in `calls`, and as `run <command line>` in a shared `log` when one is given, so the order
    /// against other fakes can be checked.
    #[derive(Default)]
    pub struct ScriptedRunner {
        rules: VecDeque<(Vec<String>, Answer, bool)>,
        pub calls: Vec<Vec<String>>,
        /// What unmatched commands get (default: exit 127, "not scripted").
        pub fallback: Option<Output>,
        pub log: Option<Rc<RefCell<Vec<String>>>>,
    }

    impl ScriptedRunner {
        pub fn new() -> Self {
            ScriptedRunner::default()
        }
        /// Unmatched commands succeed with no output, and every call goes to `log` too.
        pub fn logging(log: Rc<RefCell<Vec<String>>>) -> Self {
            ScriptedRunner {
                fallback: Some(Output::ok_with("")),
                log: Some(log),
                ..ScriptedRunner::default()
            }
        }
        /// Every command starting with `prefix` gets `out`.
        pub fn always(&mut self, prefix: &str, out: Output) -> &mut Self {
            self.rules
                .push_back((words(prefix), Answer::Fixed(out), false));
            self
        }
        /// The next command starting with `prefix` gets `out`, once; later rules take over after.
        pub fn once(&mut self, prefix: &str, out: Output) -> &mut Self {
            self.rules
                .push_front((words(prefix), Answer::Fixed(out), true));
            self
        }
        /// Every command starting with `prefix` gets what `f` makes of its whole command line.
        pub fn with(
            &mut self,
            prefix: &str,
            f: impl FnMut(&[String]) -> Output + 'static,
        ) -> &mut Self {
            self.rules
                .push_back((words(prefix), Answer::With(Box::new(f)), false));
            self
        }
        /// Builder form of `always`: exit `code` with `stdout` (a failure also says so on stderr).
        pub fn on(mut self, prefix: &str, code: i32, stdout: &str) -> Self {
            let out = if code == 0 {
                Output::ok_with(stdout)
            } else {
                Output {
                    code: Some(code),
                    stdout: stdout.into(),
                    stderr: format!("{prefix}: failed"),
                }
            };
            self.always(prefix, out);
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
            if let Some(log) = &self.log {
                log.borrow_mut().push(format!("run {}", argv.join(" ")));
            }
            let pos = self
                .rules
                .iter()
                .position(|(p, _, _)| argv.len() >= p.len() && argv[..p.len()] == p[..]);
            match pos {
                Some(i) => {
                    let out = match &mut self.rules[i].1 {
                        Answer::Fixed(o) => o.clone(),
                        Answer::With(f) => f(argv),
                    };
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

        /// Scripted like a command: `getaddrinfo() NAME`.
        fn getaddrinfo(&mut self, name: &str) -> Output {
            self.run(&[GETADDRINFO.to_string(), name.to_string()])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn getaddrinfo_in_process_answers_localhost_and_names_a_failure() {
        let out = getaddrinfo("localhost", Duration::from_secs(10));
        assert!(out.ok(), "{out:?}");
        assert!(
            out.stdout.lines().any(|l| l == "127.0.0.1" || l == "::1"),
            "{out:?}"
        );
        let bad = getaddrinfo("no-such-name.invalid", Duration::from_secs(10));
        assert!(
            !bad.ok() && bad.stderr.contains("no-such-name.invalid"),
            "{bad:?}"
        );
    }
}
