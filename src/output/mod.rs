//! How a command's result reaches the user: one `Report` holding both its text and its JSON, rendered
//! once by `main` as `--json` asks, and the stable JSON encoding every file and report uses.

pub mod text;

use std::rc::Rc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::error::AppError;

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
    /// An [`Object`] rendered straight from the command's structs, with the fields
    /// [`Report::set_json_fields`] added going in at their sorted place: no `serde_json::Value` tree
    /// (a first `load --json` at 100,000 names is a diff of tens of megabytes).
    LazyObject {
        render: RenderObject,
        extra: Vec<Extra>,
    },
}

/// Renders an [`Object`] with these fields added.
type RenderObject = Rc<dyn Fn(&[Extra]) -> String>;

/// A top-level field added to a report's JSON object.
type Extra = (&'static str, serde_json::Value);

/// The map serializer of serde_json's pretty printer over a byte buffer, the one [`Object`] writes to.
type PrettyMap<'a, 'b> =
    serde_json::ser::Compound<'a, &'b mut Vec<u8>, serde_json::ser::PrettyFormatter<'static>>;

/// A value that can be one entry of an [`Object`]: any `Serialize`, behind a non-generic method so that
/// an object can hold values of different types.
trait Field {
    fn entry(&self, key: &str, map: &mut PrettyMap<'_, '_>) -> serde_json::Result<()>;
}

impl<T: Serialize> Field for T {
    fn entry(&self, key: &str, map: &mut PrettyMap<'_, '_>) -> serde_json::Result<()> {
        serde::ser::SerializeMap::serialize_entry(map, key, self)
    }
}

/// A JSON object of borrowed fields, written with its keys sorted: the bytes `to_json` gives for the
/// same object built as a `serde_json::Value` (whose map is a `BTreeMap`), without building it. Only
/// the top level is sorted here: a nested struct is written in its field order, so give it its keys
/// sorted (as `commands::report::sorted` does) where the Value-built bytes must be kept.
#[derive(Default)]
pub struct Object<'a> {
    fields: Vec<(&'static str, Box<dyn Field + 'a>)>,
}

impl<'a> Object<'a> {
    pub fn new() -> Object<'a> {
        Object::default()
    }

    pub fn field(mut self, key: &'static str, value: impl Serialize + 'a) -> Object<'a> {
        self.fields.push((key, Box::new(value)));
        self
    }

    /// Pretty JSON with a trailing newline, `extra` added (or replacing a field of the same key).
    fn render(self, extra: &[Extra]) -> String {
        let mut fields = self.fields;
        for (k, v) in extra {
            fields.retain(|(f, _)| f != k);
            fields.push((k, Box::new(v)));
        }
        fields.sort_by(|a, b| a.0.cmp(b.0));
        let mut out = Vec::new();
        let mut ser = serde_json::Serializer::pretty(&mut out);
        let written =
            serde::Serializer::serialize_map(&mut ser, Some(fields.len())).and_then(|mut map| {
                for (k, v) in &fields {
                    v.entry(k, &mut map)?;
                }
                serde::ser::SerializeMap::end(map)
            });
        if written.is_err() {
            return "{}\n".into();
        }
        out.push(b'\n');
        // serde_json writes only UTF-8.
        String::from_utf8(out).unwrap_or_else(|_| "{}\n".into())
    }
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

    /// Like [`Report::lazy`] for a JSON object that `build` makes of `data`'s fields, rendered with its
    /// keys sorted (and open to [`Report::set_json_fields`] without a second render).
    pub fn lazy_object<T: 'static>(
        text: impl Into<String>,
        data: T,
        build: for<'a> fn(&'a T) -> Object<'a>,
    ) -> Report {
        Report {
            text: text.into(),
            json: Json::LazyObject {
                render: Rc::new(move |extra| build(&data).render(extra)),
                extra: Vec::new(),
            },
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
            Json::LazyObject { render, extra } => Some(render(extra)),
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
        if let Json::LazyObject { extra, .. } = &mut self.json {
            extra.extend(fields);
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
        // The JSON reaches terminals too: nothing in it a terminal would act on.
        let rendered = if json {
            self.rendered().map(crate::output::text::json_inert)
        } else {
            None
        };
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

/// A command's report kept with its error: the error wing knows nothing of reports.
impl AppError {
    /// Keeps the command's text report, which still goes to stdout before the error (not with `--json`).
    pub fn with_report(mut self, report: crate::output::Report) -> Self {
        self.report = Some(report.text);
        self
    }

    /// Keeps the report in both forms: its text goes to stdout before the error, and with `--json` its
    /// fields follow the error's in the one object printed (`status` of a stopped server: the probes
    /// and the status file, as the text form shows them).
    pub fn with_full_report(mut self, report: crate::output::Report) -> Self {
        self.json_report = serde_json::from_str(&report.render(true))
            .ok()
            .filter(serde_json::Value::is_object);
        self.with_report(report)
    }
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
        // An object: the added fields go in at their sorted place, without a second render.
        let mut v = Report::lazy_object("t\n", vec![2], |a| {
            Object::new().field("b", 1).field("a", a)
        });
        v.set_json_fields(vec![("live", serde_json::Value::from("live"))]);
        v.set_json_fields(vec![("b", serde_json::Value::from(3))]);
        assert_eq!(v.render(false), "t\n");
        assert_eq!(
            v.render(true),
            "{\n  \"a\": [\n    2\n  ],\n  \"b\": 3,\n  \"live\": \"live\"\n}\n"
        );
        let empty = Report::lazy_object("", (), |_| Object::new());
        assert_eq!(empty.render(true), to_json(&serde_json::json!({})));
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
