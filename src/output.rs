//! How a command's result reaches the user: one `Report` holding both its text and its JSON, rendered
//! once by `main` as `--json` asks, and the stable JSON encoding every file and report uses.

use serde::Serialize;
use serde_json::Value;

/// The `format` number of every JSON report and file this program writes.
pub const FORMAT: u32 = 1;

/// Pretty JSON with a trailing newline; serde_json keeps struct field order, and maps we build are
/// sorted (serde_json's default map), so the output is deterministic.
pub fn to_json<T: Serialize>(v: &T) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}

/// A command's output in both forms. `text` is printed as is (it ends in a newline or is empty).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    pub text: String,
    pub json: Value,
}

impl Report {
    pub fn new(text: impl Into<String>, json: Value) -> Report {
        Report {
            text: text.into(),
            json,
        }
    }

    /// Text only; `--json` gets `{}`, for commands whose only output is their effect.
    pub fn text(text: impl Into<String>) -> Report {
        Report::new(text, Value::Object(Default::default()))
    }

    pub fn render(&self, json: bool) -> String {
        if json {
            to_json(&self.json)
        } else {
            self.text.clone()
        }
    }
}
