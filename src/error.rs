//! The error classes every command reports, their exit codes (Barn's, plus 8 for invalid records), and
//! the one-line `error:` / `next:` form.

use serde::Serialize;

use crate::dns::name::{Zone, Zones};
use crate::input::inventory::InputError;
use crate::store::StoreError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    Runtime,
    Usage,
    Capability,
    Conflict,
    Partial,
    Resource,
    Integrity,
    Invalid,
    Cancelled,
}

impl Class {
    pub fn exit_code(self) -> i32 {
        match self {
            Class::Runtime => 1,
            Class::Usage => 2,
            Class::Capability => 3,
            Class::Conflict => 4,
            Class::Partial => 5,
            Class::Resource => 6,
            Class::Integrity => 7,
            Class::Invalid => 8,
            Class::Cancelled => 130,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AppError {
    #[serde(rename = "error")]
    pub class: Class,
    pub message: String,
    pub next: String,
    /// Output that still belongs on stdout before the error (e.g. `status` of a stopped server).
    #[serde(skip)]
    pub report: Option<String>,
    /// The same report's JSON object, for `--json` (its fields follow the error's).
    #[serde(skip)]
    pub json_report: Option<serde_json::Value>,
}

impl AppError {
    pub fn new(class: Class, message: impl Into<String>, next: impl Into<String>) -> Self {
        AppError {
            class,
            message: message.into(),
            next: next.into(),
            report: None,
            json_report: None,
        }
    }

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

    /// The error object `--json` prints: the class, message and next, then the report's fields.
    pub fn json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_else(|_| serde_json::json!({}));
        if let (Some(o), Some(serde_json::Value::Object(r))) =
            (v.as_object_mut(), &self.json_report)
        {
            for (k, f) in r {
                o.entry(k.clone()).or_insert_with(|| f.clone());
            }
        }
        v
    }

    /// Bad input in `file` (exit 8).
    pub fn input(file: &str, e: InputError) -> Self {
        AppError::new(Class::Invalid, format!("{file}: {e}"), e.next)
    }
}

impl From<StoreError> for AppError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Integrity { message, next } => {
                AppError::new(Class::Integrity, message, next)
            }
            StoreError::Busy { message, next } => AppError::new(Class::Resource, message, next),
            StoreError::Usage { message, next } => AppError::new(Class::Usage, message, next),
            StoreError::Io { message, next } => AppError::new(Class::Runtime, message, next),
        }
    }
}

/// The `--zone` values (repeated, or listed in the environment variable), checked as a set (exit 2
/// when one is not a zone name, or the set is refused: see [`Zones::parse`]).
pub fn zones_arg<S: AsRef<str>>(raw: &[S]) -> Result<Zones, AppError> {
    Zones::parse(raw).map_err(|e| {
        AppError::new(
            Class::Usage,
            format!("--zone {e}"),
            format!(
                "give zones such as --zone {} --zone {} (or {}={})",
                crate::defaults::ZONES[0],
                crate::defaults::ZONES[1],
                crate::defaults::ENV_ZONE,
                crate::defaults::ZONES.join(",")
            ),
        )
    })
}

/// A `--zone` value, checked (exit 2 when it is not a zone name).
pub fn zone_arg(raw: &str) -> Result<Zone, AppError> {
    Zone::parse(raw).map_err(|e| {
        AppError::new(
            Class::Usage,
            format!("--zone {e}"),
            "give a zone such as pigsty.test",
        )
    })
}
