//! The error classes every command reports, their exit codes (Barn's, plus 8 for invalid records), and
//! the one-line `error:` / `next:` form (a pair per problem when a file's problems are listed together,
//! [`AppError::problems`]). A leaf: each wing turns its own errors into an [`AppError`] at its
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

/// One problem of several found at once: its message and what to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub message: String,
    pub next: String,
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
    /// The problems found with this one, independent of it (a file's whole list, `input::problems`).
    /// Same class: one exit code for all. Boxed: most errors are one, and every `Result` carries it.
    #[serde(skip)]
    pub more: Option<Box<More>>,
}

/// The further problems of an [`AppError`] and how many more were found than are listed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct More {
    pub listed: Vec<Problem>,
    pub not_listed: usize,
}

impl AppError {
    pub fn new(class: Class, message: impl Into<String>, next: impl Into<String>) -> Self {
        AppError {
            class,
            message: message.into(),
            next: next.into(),
            report: None,
            json_report: None,
            more: None,
        }
    }

    /// Every problem to print, each an `error:` and a `next:` line: this one, those found with it,
    /// and the count of those not listed.
    pub fn problems(&self) -> Vec<Problem> {
        let mut all = self.listed();
        let n = self.not_listed();
        if n > 0 {
            all.push(Problem {
                message: format!(
                    "and {n} more problem{} not listed",
                    if n == 1 { "" } else { "s" }
                ),
                next: "fix the ones above and run check again for the rest".into(),
            });
        }
        all
    }

    /// How many problems were found with this one, listed or not.
    pub fn others(&self) -> usize {
        self.more
            .as_ref()
            .map_or(0, |m| m.listed.len() + m.not_listed)
    }

    /// This problem and those listed with it.
    fn listed(&self) -> Vec<Problem> {
        let mut all = vec![Problem {
            message: self.message.clone(),
            next: self.next.clone(),
        }];
        if let Some(m) = &self.more {
            all.extend(m.listed.iter().cloned());
        }
        all
    }

    fn not_listed(&self) -> usize {
        self.more.as_ref().map_or(0, |m| m.not_listed)
    }

    /// The error object `--json` prints: the class, message and next (the first problem), `errors`
    /// (every listed problem, the first included) and `errors_not_listed` when the cap cut the list,
    /// then the report's fields.
    pub fn json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_else(|_| serde_json::json!({}));
        if let Some(o) = v.as_object_mut() {
            o.insert("errors".into(), serde_json::json!(self.listed()));
            if self.not_listed() > 0 {
                o.insert("errors_not_listed".into(), self.not_listed().into());
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_problem_stays_on_top_and_the_cut_is_counted() {
        let mut e = AppError::new(Class::Invalid, "f: a is wrong", "fix a");
        let one = e.json();
        assert_eq!(
            one["errors"],
            serde_json::json!([{"message": "f: a is wrong", "next": "fix a"}])
        );
        assert!(one.get("errors_not_listed").is_none());
        e.more = Some(Box::new(More {
            listed: vec![Problem {
                message: "f: b is wrong".into(),
                next: "fix b".into(),
            }],
            not_listed: 3,
        }));
        let v = e.json();
        assert_eq!(v["error"], "invalid");
        assert_eq!(v["message"], "f: a is wrong");
        assert_eq!(v["errors"][1]["next"], "fix b");
        assert_eq!(v["errors_not_listed"], 3);
        let lines: Vec<String> = e.problems().into_iter().map(|p| p.message).collect();
        assert_eq!(
            lines,
            [
                "f: a is wrong",
                "f: b is wrong",
                "and 3 more problems not listed"
            ]
        );
    }
}
