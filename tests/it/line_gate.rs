//! The guard of "a value never starts a line of ours", read from the source: every `error:` / `next:`
//! line is written through `text::one_line`, every print to the terminal through a gate, the log
//! writer through `text::LogLines`, and every inventory path joins a name from the file through
//! `text::segment`. It reads the text (code before a file's first `#[cfg(test)]`), so a new writer
//! that forgets the gate fails here, not on a forged file.

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "tests") {
                files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") && !p.ends_with("tests.rs") {
            out.push(p);
        }
    }
}

/// Each non-test source file under src/ with its code (up to the first `#[cfg(test)]`).
fn code() -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    all.sort();
    all.into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let code = text
                .split("#[cfg(test)]")
                .next()
                .unwrap_or_default()
                .to_string();
            let name = p.strip_prefix(&src).unwrap().display().to_string();
            (name, code)
        })
        .collect()
}

/// The statement starting at `at`: up to the `;` (or the line's end for a macro that ends a block).
fn statement(code: &str, at: usize) -> &str {
    let rest = &code[at..];
    let end = rest.find(";\n").map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

fn offenders(code: &[(String, String)], starts: &[&str], ok: impl Fn(&str) -> bool) -> Vec<String> {
    let mut bad = Vec::new();
    for (name, text) in code {
        for start in starts {
            for (at, _) in text.match_indices(start) {
                let s = statement(text, at);
                if !ok(s) {
                    let line = text[..at].lines().count();
                    bad.push(format!(
                        "src/{name}:{line}: {}",
                        s.lines().next().unwrap_or("")
                    ));
                }
            }
        }
    }
    bad
}

#[test]
fn every_error_and_next_line_goes_through_one_line() {
    let bad = offenders(&code(), &["\"error: {", "\"next: {"], |s| {
        s.contains("one_line(")
    });
    assert!(
        bad.is_empty(),
        "error:/next: written without text::one_line:\n{}",
        bad.join("\n")
    );
}

#[test]
fn every_print_to_the_terminal_goes_through_a_gate() {
    let gates = ["for_terminal(", "one_line(", "json_inert(", "text::path("];
    // A fixed text and numbers only: the route lab's crash switch (its variable's value is a number).
    let fixed = ["(\"{CRASH_ENV}={n}: SIGKILL after change {done} ({what})\")"];
    let bad = offenders(&code(), &["println!(", "print!(", "eprint!("], |s| {
        gates.iter().any(|g| s.contains(g)) || fixed.iter().any(|f| s.contains(f))
    });
    assert!(
        bad.is_empty(),
        "printed without a gate:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_log_writer_is_the_line_gate() {
    let bad = offenders(&code(), &["tracing_subscriber::fmt()"], |s| {
        s.contains("with_writer(|| pigsty_dns::output::text::LogLines(")
    });
    assert!(
        bad.is_empty(),
        "a log subscriber without text::LogLines:\n{}",
        bad.join("\n")
    );
    assert!(
        code()
            .iter()
            .any(|(_, c)| c.contains("tracing_subscriber::fmt()")),
        "the guard looks for the subscriber where it is built"
    );
}

#[test]
fn inventory_paths_join_names_through_segment() {
    // `"{path}.{name}"` or `"{path}[{key}]"` with a name from the file; an index (`[{i}]`) is a number.
    // `lookup`'s key is the variable's name, which our code asks for, never one from the file.
    let ours = [("input/inventory/walk.rs", "key")];
    let mut bad = Vec::new();
    for (name, text) in code()
        .iter()
        .filter(|(n, _)| n.starts_with("input/inventory"))
    {
        for join in ["}.{", "}[{"] {
            for (at, _) in text.match_indices(join) {
                let ident: String = text[at + 3..]
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                let closed = text[at + 3 + ident.len()..].starts_with('}');
                let index = join == "}[{" && ident.len() < 2;
                let known = ours.contains(&(name.as_str(), ident.as_str()));
                if !ident.is_empty() && closed && !index && !known {
                    let line = text[..at].lines().count();
                    bad.push(format!("src/{name}:{line}: {join}{ident}}}"));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "a path joined without text::segment:\n{}",
        bad.join("\n")
    );
}
