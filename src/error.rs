//! The error classes every command reports, their exit codes (Barn's, plus 8 for invalid records), and
//! the one-line `error:` / `next:` form. A leaf: each wing turns its own errors into an [`AppError`] at its
//! edge (the store's in `store`, bad input in `input::read`, a `--zone` value in `dns::name`, a report
//! kept with the error in `output`).

use serde::Serialize;

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
}
