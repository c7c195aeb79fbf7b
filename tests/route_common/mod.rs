//! Helpers the route tests share.
#![allow(dead_code)]

use std::path::Path;

/// Every file under `root` (relative paths, sorted): what proves "nothing written" or "nothing left".
pub fn tree(root: &Path) -> Vec<String> {
    let mut v = vec![];
    walk(root, root, &mut v);
    v.sort();
    v
}

fn walk(base: &Path, d: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(d).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(base, &p, out);
        } else {
            out.push(p.strip_prefix(base).unwrap().display().to_string());
        }
    }
}
