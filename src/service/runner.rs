//! How the installer runs systemctl / launchctl / loginctl: through a `Runner`, so the logic above it is
//! unit-tested against a fake that records every call and never touches the host.

use std::io;
use std::time::Duration;

pub use crate::sys::exec::Output;

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
        crate::sys::exec::run(argv, self.timeout)
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
