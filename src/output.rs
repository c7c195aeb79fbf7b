//! How a command's result reaches the user: one `Report` holding both its text and its JSON, rendered
//! once by `main` as `--json` asks, and the stable JSON encoding every file and report uses.

use std::rc::Rc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

/// The `format` number of every JSON report and file this program writes.
pub const FORMAT: u32 = 1;

/// Pretty JSON with a trailing newline; serde_json keeps struct field order, and maps we build are
/// sorted (serde_json's default map), so the output is deterministic.
pub fn to_json<T: Serialize>(v: &T) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}

/// A command's output in both forms. `text` is printed as is (it ends in a newline or is empty). The
/// JSON is either rendered when the report is made (so a struct keeps its field order) or, for reports
/// that can be large (`check` and `load` at 100,000 names), built only when `--json` asks for it, so
/// the text form never pays for it.
#[derive(Clone, Default)]
pub struct Report {
    pub text: String,
    json: Json,
}

#[derive(Clone, Default)]
enum Json {
    /// The command has one output for both modes.
    #[default]
    Same,
    Rendered(String),
    Lazy(Rc<dyn Fn() -> String>),
    /// Built as a value, so that [`Report::set_json_fields`] adds to it without rendering and parsing
    /// it again (a first `load --json` at 100,000 names is a diff of tens of megabytes).
    LazyValue(Rc<dyn Fn() -> serde_json::Value>),
}

impl std::fmt::Debug for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Report")
            .field("text", &self.text)
            .finish_non_exhaustive()
    }
}

impl Report {
    pub fn new(text: impl Into<String>, json: impl Serialize) -> Report {
        Report {
            text: text.into(),
            json: Json::Rendered(to_json(&json)),
        }
    }

    /// The JSON is built by `build` if and when it is rendered.
    pub fn lazy<T: Serialize>(text: impl Into<String>, build: impl Fn() -> T + 'static) -> Report {
        Report {
            text: text.into(),
            json: Json::Lazy(Rc::new(move || to_json(&build()))),
        }
    }

    /// Like [`Report::lazy`] for a JSON object built as a value (a sorted map).
    pub fn lazy_value(
        text: impl Into<String>,
        build: impl Fn() -> serde_json::Value + 'static,
    ) -> Report {
        Report {
            text: text.into(),
            json: Json::LazyValue(Rc::new(build)),
        }
    }

    /// Text only; `--json` gets `{}`.
    pub fn text(text: impl Into<String>) -> Report {
        Report::new(text, serde_json::json!({}))
    }

    /// One output for both modes (`export` prints its format whatever `--json` says; `serve` nothing).
    pub fn same(text: impl Into<String>) -> Report {
        Report {
            text: text.into(),
            json: Json::Same,
        }
    }

    fn rendered(&self) -> Option<String> {
        match &self.json {
            Json::Same => None,
            Json::Rendered(j) => Some(j.clone()),
            Json::Lazy(f) => Some(f()),
            Json::LazyValue(f) => Some(to_json(&f())),
        }
    }

    /// The JSON form as a value, to embed in another report (the text as a string when there is none).
    pub fn json_value(&self) -> serde_json::Value {
        self.rendered()
            .and_then(|j| serde_json::from_str(&j).ok())
            .unwrap_or_else(|| serde_json::Value::String(self.text.clone()))
    }

    /// Adds (or replaces) top-level JSON fields, when the JSON is rendered; the object is then a sorted map.
    pub fn set_json_fields(&mut self, fields: Vec<(&'static str, serde_json::Value)>) {
        if let Json::LazyValue(build) = &self.json {
            let build = build.clone();
            self.json = Json::LazyValue(Rc::new(move || {
                let mut v = build();
                for (k, f) in &fields {
                    v[*k] = f.clone();
                }
                v
            }));
            return;
        }
        let before = Report {
            text: String::new(),
            json: std::mem::take(&mut self.json),
        };
        self.json = Json::Lazy(Rc::new(move || {
            let mut v: serde_json::Value = before
                .rendered()
                .and_then(|j| serde_json::from_str(&j).ok())
                .unwrap_or_else(|| serde_json::json!({}));
            for (k, f) in &fields {
                v[*k] = f.clone();
            }
            to_json(&v)
        }));
    }

    pub fn render(&self, json: bool) -> String {
        let rendered = if json { self.rendered() } else { None };
        rendered.unwrap_or_else(|| self.text.clone())
    }
}

/// RFC 3339 UTC timestamp with seconds, e.g. `2026-12-01T09:50:24Z`.
pub fn rfc3339(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil-from-days (Howard Hinnant's algorithm), valid for the whole u64 range we can meet.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

pub fn now_rfc3339() -> String {
    rfc3339(SystemTime::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lazy_report_builds_its_json_only_when_asked() {
        let built = Rc::new(std::cell::Cell::new(0));
        let b = built.clone();
        let mut r = Report::lazy("text\n", move || {
            b.set(b.get() + 1);
            serde_json::json!({"a": 1})
        });
        r.set_json_fields(vec![("live", serde_json::Value::from("live"))]);
        assert_eq!(r.render(false), "text\n");
        assert_eq!(built.get(), 0);
        assert_eq!(r.render(true), "{\n  \"a\": 1,\n  \"live\": \"live\"\n}\n");
        assert_eq!(built.get(), 1);
        assert_eq!(Report::same("x").render(true), "x");
        // Built as a value, the fields go in without a second render: the same sorted object.
        let mut v = Report::lazy_value("t\n", || serde_json::json!({"b": 1, "a": [2]}));
        v.set_json_fields(vec![("live", serde_json::Value::from("live"))]);
        assert_eq!(v.render(false), "t\n");
        assert_eq!(
            v.render(true),
            "{\n  \"a\": [\n    2\n  ],\n  \"b\": 1,\n  \"live\": \"live\"\n}\n"
        );
    }
    use std::time::Duration;

    #[test]
    fn formats_rfc3339() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(1_795_946_424)),
            "2026-11-29T10:00:24Z"
        );
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29T00:00:00Z"
        );
    }
}
