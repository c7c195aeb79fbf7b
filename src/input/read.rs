//! Reading one `host-names.yml` from disk for `check`, `load` and `serve --records`: bounded size, UTF-8,
//! then the inventory rules and the record rules, each failure one `error:` naming the file.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::digest::sha256_hex;
use crate::dns::name::Zones;
use crate::error::{AppError, Class, More, Problem};
use crate::input::inventory::{self, InputError, MAX_INPUT_BYTES, Reading, View};
use crate::input::problems::Problems;
use crate::input::records::RecordSet;
use crate::zone::generation::Input;

/// The view a file was read as, and the notes of its derivation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewInfo {
    pub view: View,
    pub notes: Vec<String>,
}

/// Reads and validates an input file as `reading` says; returns the record set, what to record as its
/// input and the view it was read as.
pub fn read_as(
    path: &Path,
    zone: &(impl Clone + Into<Zones>),
    reading: &Reading,
) -> Result<(RecordSet, Input, ViewInfo), AppError> {
    let shown = crate::output::text::path(path);
    let bytes = read_bytes(path, &shown)?;
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        AppError::new(
            Class::Invalid,
            format!("{shown}: is not UTF-8 text (byte {})", e.valid_up_to()),
            "save the file as UTF-8",
        )
    })?;
    // Every problem of the file is collected (`input::problems`) and all are reported together.
    let mut problems = Problems::default();
    let inv = inventory::parse_into(text, reading, &mut problems);
    if inv.as_ref().is_some_and(|i| i.view == View::HostAccess) {
        // Alone: with variables beside it, what the view found in the file is not what Ansible reads.
        beside_the_file(path, &shown)?;
    }
    let read = inv.and_then(|mut inv| {
        let info = ViewInfo {
            view: inv.view,
            notes: std::mem::take(&mut inv.notes),
        };
        RecordSet::from_inventory_into(inv, zone, &mut problems).map(|set| (set, info))
    });
    let Some((set, info)) = read.filter(|_| problems.is_empty()) else {
        return Err(AppError::inputs(&shown, problems));
    };
    let abs = std::path::absolute(path).unwrap_or_else(|_| PathBuf::from(path));
    Ok((
        set,
        Input {
            path: abs.display().to_string(),
            sha256: sha256_hex(&bytes),
        },
        info,
    ))
}

/// The file's bytes, at most [`MAX_INPUT_BYTES`]: opened without blocking, a regular file only.
fn read_bytes(path: &Path, shown: &str) -> Result<Vec<u8>, AppError> {
    // Non-blocking open and fstat: a FIFO or a device would block the command forever.
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path);
    let mut f = f.map_err(|e| {
        let class = if e.kind() == std::io::ErrorKind::NotFound {
            Class::Usage
        } else {
            Class::Runtime
        };
        AppError::new(
            class,
            format!("cannot read \"{shown}\": {e}"),
            "give the path of Barn's host-names.yml",
        )
    })?;
    let meta = f.metadata().map_err(|e| {
        AppError::new(
            Class::Runtime,
            format!("cannot read \"{shown}\": {e}"),
            "check the file",
        )
    })?;
    if !meta.file_type().is_file() {
        return Err(AppError::new(
            Class::Usage,
            format!("\"{shown}\" is not a regular file"),
            "give the path of Barn's host-names.yml itself (not a pipe, device or directory)",
        ));
    }
    // Sized from the file (plus one byte, so the end is seen without growing): doubling from empty
    // left a 4 MiB buffer for a 2.3 MB file, and copied it on every step.
    let mut bytes = Vec::with_capacity(meta.len().min(MAX_INPUT_BYTES as u64) as usize + 1);
    (&mut f)
        .take(MAX_INPUT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| {
            AppError::new(
                Class::Runtime,
                format!("cannot read \"{shown}\": {e}"),
                "check the file",
            )
        })?;
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(AppError::new(
            Class::Invalid,
            format!("{shown}: is larger than {MAX_INPUT_BYTES} bytes (4 MiB), the inventory limit"),
            "split the records or remove what pigsty-dns does not read",
        ));
    }
    Ok(bytes)
}

/// Ansible would also read `group_vars/` and `host_vars/` beside the inventory; the literal view reads
/// one file, so it refuses rather than miss what they set.
fn beside_the_file(path: &Path, shown: &str) -> Result<(), AppError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    for sub in ["group_vars", "host_vars"] {
        let beside = dir.join(sub);
        if beside.exists() {
            return Err(AppError::new(
                Class::Invalid,
                format!(
                    "{shown}: {} is beside it; Ansible would merge its variables, which the literal \
                     host-access view does not read",
                    crate::output::text::path(&beside)
                ),
                "move those variables into the file itself, or read it with --identity-only",
            ));
        }
    }
    Ok(())
}

/// Bad input becomes the commands' error here, at the input wing's edge.
impl AppError {
    /// Bad input in `file` (exit 8).
    pub fn input(file: &str, e: InputError) -> Self {
        AppError::new(Class::Invalid, format!("{file}: {e}"), e.next)
    }

    /// Every problem found in `file` (exit 8): the first is the error, the others come with it.
    pub fn inputs(file: &str, problems: Problems) -> Self {
        let (listed, not_listed) = problems.into_parts();
        let mut listed = listed.into_iter().map(|e| AppError::input(file, e));
        let mut first = listed.next().unwrap_or_else(|| {
            AppError::new(
                Class::Invalid,
                format!("{file}: could not be read"),
                "run check on it again",
            )
        });
        let listed: Vec<Problem> = listed
            .map(|e| Problem {
                message: e.message,
                next: e.next,
            })
            .collect();
        if !listed.is_empty() || not_listed > 0 {
            first.more = Some(Box::new(More { listed, not_listed }));
        }
        first
    }
}
