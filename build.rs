//! Build script: the version `pigsty-dns --version` prints. From a git checkout it carries the commit
//! (`0.1.0 (git 0123456789ab)`); from a tarball without `.git`, or without git, just the version. It
//! reruns only when the checkout's HEAD or the branch it points to moves, so a build from git names
//! the commit it was built from.

use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (out.status.success() && !text.is_empty()).then(|| text.to_string())
}

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let dir = Path::new(&manifest);
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    println!("cargo:rerun-if-changed=build.rs");
    // Only a checkout whose top is this package counts (a tarball unpacked inside another repository
    // must not take that repository's commit).
    let top = git(dir, &["rev-parse", "--show-toplevel"]);
    let ours = top.is_some_and(|t| Path::new(&t).canonicalize().ok() == dir.canonicalize().ok());
    let commit = ours
        .then(|| git(dir, &["rev-parse", "--short=12", "HEAD"]))
        .flatten();
    if let Some(commit) = &commit {
        // HEAD, the ref it names, and packed-refs (git-path resolves worktrees' own HEAD).
        let mut watch = vec!["HEAD".to_string(), "packed-refs".to_string()];
        if let Some(r) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
            watch.push(r);
        }
        for w in &watch {
            // (a path that does not exist would make cargo rerun this script on every build)
            let p = git(
                dir,
                &["rev-parse", "--path-format=absolute", "--git-path", w],
            );
            if let Some(p) = p.filter(|p| Path::new(p).exists()) {
                println!("cargo:rerun-if-changed={p}");
            }
        }
        println!("cargo:rustc-env=PIGSTY_DNS_VERSION={version} (git {commit})");
    } else {
        println!("cargo:rustc-env=PIGSTY_DNS_VERSION={version}");
    }
    // The man pages' date: the commit's (so a rebuild of the same commit is byte-identical), none
    // from a tarball.
    let date = ours
        .then(|| git(dir, &["show", "-s", "--format=%cs", "HEAD"]))
        .flatten()
        .unwrap_or_default();
    println!("cargo:rustc-env=PIGSTY_DNS_DATE={date}");
}
