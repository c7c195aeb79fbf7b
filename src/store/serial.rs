//! Choosing the next serial: one above the newest generation whose header holds and that is no step
//! above 2^31 − 1 past the served serial (RFC 1982 §3.1), so a junk or forged file never moves it;
//! and the files passed over, each with why and the command that fixes it.

use std::path::{Path, PathBuf};

use super::{StoreError, claim};
use crate::zone::generation::HeaderClaim;

/// RFC 1982 §3.1: the largest step after which a serial is still newer.
pub const MAX_SERIAL_STEP: u32 = (1 << 31) - 1;

/// Why `serial` may not follow the live serial `live` (RFC 1982 §3.1): a step above 2^31 − 1 makes it
/// *older* under serial arithmetic, so secondaries would never refresh. `None` when it may, when
/// nothing is live (`live` 0), or when it is not above `live` at all.
pub fn serial_step_error(serial: u32, live: u32) -> Option<String> {
    let step = serial.checked_sub(live).filter(|_| live > 0)?;
    (step > MAX_SERIAL_STEP).then(|| {
        format!(
            "is serial {serial}, {step} after the live serial {live}: a step above 2^31 - 1 is older              under serial arithmetic (RFC 1982), so secondaries would never take it"
        )
    })
}

/// A generation file passed over when choosing the next serial: never served, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassedOver {
    pub serial: u32,
    pub path: PathBuf,
    pub reason: String,
}

impl PassedOver {
    /// The exact command that fixes it.
    pub fn fix(&self) -> String {
        fix_for(&self.path, &self.reason)
    }
}

/// The command that repairs a generation file refused for `reason`: its mode for a mode, else removing
/// it (it is never served, so nothing is lost).
pub fn fix_for(path: &Path, reason: &str) -> String {
    let quoted = crate::output::text::shell_quote(&path.display().to_string());
    if reason.starts_with("has mode") {
        format!("chmod 600 {quoted}")
    } else {
        format!("rm {quoted}")
    }
}

/// The newest file that may set the next serial, and those above it that may not.
pub(super) struct SerialBase {
    /// Its index in the list (the list's length when there is none).
    pub(super) index: usize,
    serial: u32,
    pub(super) claim: Option<HeaderClaim>,
    pub(super) passed_over: Vec<PassedOver>,
}

/// The newest file whose header holds behind its self-digest and name, and that is no step above
/// 2^31 − 1 after the served serial: a junk or forged file above it never moves the serial.
pub(super) fn serial_base(files: &[(u32, PathBuf)], served: u32) -> SerialBase {
    let mut passed_over = Vec::new();
    for (index, (serial, path)) in files.iter().enumerate() {
        let checked = claim(path).and_then(|c| match serial_step_error(*serial, served) {
            Some(why) => Err(why),
            None => Ok(c),
        });
        match checked {
            Ok(c) => {
                return SerialBase {
                    index,
                    serial: *serial,
                    claim: Some(c),
                    passed_over,
                };
            }
            Err(reason) => passed_over.push(PassedOver {
                serial: *serial,
                path: path.clone(),
                reason: crate::output::text::bound(reason),
            }),
        }
    }
    SerialBase {
        index: files.len(),
        serial: 0,
        claim: None,
        passed_over,
    }
}

/// One above the base and the served serial, stepping over a bad file that holds that name, so no two
/// files share a serial.
pub(super) fn next_serial(
    files: &[(u32, PathBuf)],
    base: &SerialBase,
    served: u32,
) -> Result<u32, StoreError> {
    let used_up = || StoreError::Integrity {
        message: format!(
            "the serial space is used up: serial {} is stored and good",
            base.serial.max(served)
        ),
        next: "start a new state directory (secondaries must then be reset)".into(),
    };
    let mut next = base.serial.max(served).checked_add(1).ok_or_else(used_up)?;
    while files.iter().any(|(s, _)| *s == next) {
        next = next.checked_add(1).ok_or_else(used_up)?;
    }
    if let Some(why) = serial_step_error(next, served) {
        return Err(StoreError::Integrity {
            message: format!("the next serial {why}"),
            next: "remove the bad generation files that load passes over (see pigsty-dns history)"
                .into(),
        });
    }
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_is_bounded_by_2_31_minus_1_from_the_live_serial() {
        assert_eq!(serial_step_error(3_000_000_000, 0), None, "nothing live");
        assert_eq!(serial_step_error(1, 5), None, "not above");
        assert_eq!(
            serial_step_error(5 + MAX_SERIAL_STEP, 5),
            None,
            "the edge is in"
        );
        let e = serial_step_error(6 + MAX_SERIAL_STEP, 5).unwrap();
        assert!(e.contains("RFC 1982") && e.contains("2147483653"), "{e}");
        assert_eq!(fix_for(Path::new("/s/g"), "has mode 640"), "chmod 600 /s/g");
        assert_eq!(fix_for(Path::new("/s/g h"), "junk"), "rm '/s/g h'");
    }
}
