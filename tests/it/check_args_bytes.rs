//! Paths are bytes on Unix: an argument that is not UTF-8 (or holds a newline) is taken as the path it
//! names, never a panic, and every line that names it shows it escaped (`\xff`, `\n`), one line.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;
use std::process::Command;

use crate::util::{BIN, Run, finish, write};

/// A name no UTF-8 reader can take, with a newline that would start a forged line.
const NAME: &[u8] = b"x\xff\nnext: forged.yml";
const SHOWN: &str = "x\\xff\\nnext: forged.yml";

fn hostile(dir: &Path) -> OsString {
    let mut p = dir.as_os_str().as_bytes().to_vec();
    p.push(b'/');
    p.extend_from_slice(NAME);
    OsString::from_vec(p)
}

fn run_os(args: &[&OsStr]) -> Run {
    let out = Command::new(BIN)
        .args(args)
        .env_remove("PIGSTY_DNS_STATE_DIR")
        .env_remove("PIGSTY_DNS_ZONE")
        .env_remove("PIGSTY_DNS_LISTEN")
        .output()
        .expect("run pigsty-dns");
    finish(out)
}

/// No panic, the path shown escaped, and no line the name's newline would have started.
fn shown_escaped(r: &Run, want_code: i32) {
    let all = format!("{}{}", r.stdout, r.stderr);
    assert_eq!(r.code, want_code, "{all}");
    assert!(!all.contains("panicked"), "{all}");
    assert!(all.contains(SHOWN), "want {SHOWN} in {all}");
    assert!(
        !all.lines().any(|l| l.starts_with("next: forged")),
        "a forged line: {all}"
    );
}

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

#[test]
fn check_load_and_serve_records_take_a_path_that_is_not_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let file = hostile(dir.path());
    let state = dir.path().join("state");
    let r = run_os(&[os("check"), &file]);
    shown_escaped(&r, 2);
    r.error_line();
    let r = run_os(&[os("load"), &file, os("--state-dir"), state.as_os_str()]);
    shown_escaped(&r, 2);
    r.error_line();
    let r = run_os(&[
        os("serve"),
        os("--listen"),
        os("127.0.0.1:0"),
        os("--records"),
        &file,
        os("--state-dir"),
        state.as_os_str(),
    ]);
    shown_escaped(&r, 2);
    r.error_line();
}

#[test]
fn a_file_whose_name_is_not_utf8_is_read_and_named_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let file = hostile(dir.path());
    std::fs::write(&file, "all: [\n").unwrap();
    let r = run_os(&[os("check"), &file]);
    shown_escaped(&r, 8);
    r.error_line();
}

#[test]
fn serve_tsig_key_export_output_and_man_take_a_path_that_is_not_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let good = write(
        dir.path(),
        "host-names.yml",
        "all:\n  hosts: {10.10.10.10: {nodename: meta}}\n",
    );
    let r = run_os(&[
        os("load"),
        good.as_os_str(),
        os("--state-dir"),
        state.as_os_str(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = run_os(&[
        os("serve"),
        os("--listen"),
        os("127.0.0.1:0"),
        os("--tsig-key"),
        &hostile(dir.path()),
        os("--state-dir"),
        state.as_os_str(),
    ]);
    shown_escaped(&r, 2);
    r.error_line();
    // A directory that does not exist: the write fails, naming it.
    let missing = hostile(&dir.path().join("no-such-dir"));
    let r = run_os(&[
        os("export"),
        os("--format"),
        os("hosts"),
        os("-o"),
        &missing,
        os("--state-dir"),
        state.as_os_str(),
    ]);
    assert_ne!(r.code, 0);
    shown_escaped(&r, r.code);
    r.error_line();
    // Under a regular file: no directory can be made there.
    let under_file = hostile(&good);
    let r = run_os(&[os("man"), &under_file]);
    assert_ne!(r.code, 0);
    shown_escaped(&r, r.code);
    r.error_line();
    let r = run_os(&[os("man"), &hostile(dir.path())]);
    shown_escaped(&r, 0);
}

#[test]
fn state_dir_takes_a_path_that_is_not_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let state = hostile(dir.path());
    let r = run_os(&[os("history"), os("--state-dir"), &state]);
    shown_escaped(&r, 0);
    let r = run_os(&[os("rollback"), os("1"), os("--state-dir"), &state]);
    shown_escaped(&r, 2);
    r.error_line();
    let r = run_os(&[os("export"), os("--state-dir"), &state]);
    shown_escaped(&r, 2);
    r.error_line();
    let r = run_os(&[
        os("status"),
        os("--server"),
        os("127.0.0.1:9"),
        os("--state-dir"),
        &state,
    ]);
    shown_escaped(&r, 1);
}
