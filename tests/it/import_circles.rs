//! The crate's files import each other without circles: each `use crate::…`, `super::…`, `self::…` or
//! child-module path in a file's code, and each path anywhere in it that starts with `crate::`,
//! `super::`, `self::`, the bare name of a child module (`pigsty::derive(…)`) or a name a `use` brought
//! in (`records::merge::f()`), is an edge to the file
//! that holds the module it names (its `#[cfg(test)]` items left out), and no set of files may reach
//! itself. A child using its own parent or ancestor is not an edge: a folder is one concern and its
//! `mod.rs` is the child's context. It reads the source text, not the compiler's view, so it is kept
//! simple: string and char literals and comments are dropped first, and a path is resolved to the
//! longest module prefix that has a file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

#[test]
fn no_file_level_import_circles_under_src() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let circles = circles(&src);
    assert!(
        circles.is_empty(),
        "{} import circle(s) under src/:\n{}",
        circles.len(),
        circles
            .iter()
            .map(|c| format!("  {}", c.join(" ↔ ")))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// `error.rs` is a leaf: every wing reports through it, so it names none of them (each wing turns its
/// own errors into an `AppError` at its edge).
#[test]
fn error_rs_imports_nothing_of_the_crate() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    collect(&src, &src, &mut files);
    let error: Module = vec!["error".into()];
    let names = imports(&error, &code(&files[&error]), &files);
    assert!(names.is_empty(), "src/error.rs imports {names:?}");
}

/// The checker finds a circle when there is one (so the test above can fail).
#[test]
fn the_checker_sees_a_circle() {
    let dir = tempfile::tempdir().unwrap();
    let write = |p: &str, t: &str| {
        let p = dir.path().join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, t).unwrap();
    };
    write("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n");
    write("a.rs", "use crate::b::{self, X};\n// use crate::c;\n");
    write("b/mod.rs", "pub mod inner;\nuse inner::Y;\n");
    write(
        "b/inner.rs",
        "use super::Z;\nfn f() { let _ = \"crate::c\"; crate::a::g(); }\n",
    );
    write(
        "c.rs",
        "use crate::a;\n#[cfg(test)]\nmod tests { use crate::c; }\n",
    );
    assert_eq!(
        circles(dir.path()),
        vec![vec![
            "a.rs".to_string(),
            "b/inner.rs".into(),
            "b/mod.rs".into()
        ]]
    );
}

/// The circle the first checker missed (`inventory ↔ records`): a parent calls its child by the bare
/// name (`pig::derive()`), the child reads a sibling wing, the wing uses the parent. Around it, text a
/// reader does not follow, each of which would close a second circle (`rec ↔ z`) if it were counted: a
/// path in a raw string, in a string over two lines, after a `'"'` char literal, in a block comment;
/// and a `#[cfg(test)] mod tests;` at the top of a file hides none of the code after it. A second circle
/// goes through a path below a name a `use` brought in (`w::deep::f()` after `use crate::w;`).
#[test]
fn the_checker_sees_a_circle_through_a_child_called_by_its_bare_name() {
    let dir = tempfile::tempdir().unwrap();
    let write = |p: &str, t: &str| {
        let p = dir.path().join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, t).unwrap();
    };
    write(
        "lib.rs",
        "pub mod inv;\npub mod rec;\npub mod w;\npub mod y;\npub mod z;\n",
    );
    write(
        "inv/mod.rs",
        "#[cfg(test)]\nmod tests;\npub mod pig;\npub fn f() { pig::derive(); }\n",
    );
    write("inv/tests.rs", "use super::f;\n");
    write(
        "inv/pig.rs",
        "pub fn derive() -> usize { crate::rec::MAX }\n",
    );
    write(
        "rec.rs",
        "use crate::inv::f;\npub const MAX: usize = 1;\n\
         fn g() { let _ = r#\"crate::z::a \"x\" \"#; let _ = '\"'; let _ = \"one\n crate::z::b\"; }\n\
         /* crate::z::c /* nested */ crate::z::d */\n",
    );
    write("z.rs", "use crate::rec;\n");
    write("w/mod.rs", "pub mod deep;\n");
    write("w/deep.rs", "pub fn f() { crate::y::h() }\n");
    write("y.rs", "use crate::w;\npub fn h() { w::deep::f() }\n");
    assert_eq!(
        circles(dir.path()),
        vec![
            vec![
                "inv/mod.rs".to_string(),
                "inv/pig.rs".into(),
                "rec.rs".into()
            ],
            vec!["w/deep.rs".to_string(), "y.rs".into()]
        ]
    );
}

/// Every circle (strongly connected set of more than one file), each as sorted paths relative to `src`.
fn circles(src: &Path) -> Vec<Vec<String>> {
    let mut files = BTreeMap::new();
    collect(src, src, &mut files);
    let edges: BTreeMap<Module, BTreeSet<Module>> = files
        .iter()
        .map(|(m, p)| (m.clone(), imports(m, &code(p), &files)))
        .collect();
    let mut out: Vec<Vec<String>> = strongly_connected(&edges)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let mut names: Vec<String> = c
                .iter()
                .map(|m| {
                    files[m]
                        .strip_prefix(src)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned()
                })
                .collect();
            names.sort();
            names
        })
        .collect();
    out.sort();
    out
}

/// Each `.rs` file under `dir` by its module path (`lib.rs` is the root; `cli/` is the binary, another
/// crate).
fn collect(root: &Path, dir: &Path, files: &mut BTreeMap<Module, PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path == root.join("cli") {
            continue;
        }
        if path.is_dir() {
            collect(root, &path, files);
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = path.strip_prefix(root).unwrap().with_extension("");
        let mut module: Module = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        match module.last().map(String::as_str) {
            Some("lib") if module.len() == 1 => module.clear(),
            Some("mod") => {
                module.pop();
            }
            _ => {}
        }
        files.insert(module, path);
    }
}

/// The file's code without its `#[cfg(test)]` items, string and char literals, and comments.
fn code(path: &Path) -> String {
    let code = strip_literals(&std::fs::read_to_string(path).unwrap());
    let mut out = String::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        rest = &rest[at + "#[cfg(test)]".len()..];
        rest = &rest[item_end(rest)..];
    }
    out.push_str(rest);
    out
}

/// Where the item that starts `code` ends: after its `;` (`mod tests;`, `use …;`) or after the `}` that
/// closes its first `{`, whichever comes first at depth 0.
fn item_end(code: &str) -> usize {
    let mut depth = 0usize;
    for (i, c) in code.char_indices() {
        match c {
            ';' if depth == 0 => return i + 1,
            '{' => depth += 1,
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// `text` with string literals (plain, byte, raw), char literals and comments (line, block, nested)
/// emptied, so neither a path inside them nor a brace counts; lifetimes are kept.
fn strip_literals(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == 'r'
            && (i == 0 || !ident(b[i - 1]) || b[i - 1] == 'b')
            && matches!(next, Some('"' | '#'))
        {
            // r"…", r#"…"#, br"…": ends at a quote followed by as many hashes.
            let hashes = b[i + 1..].iter().take_while(|&&h| h == '#').count();
            if b.get(i + 1 + hashes) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            i += hashes + 2;
            let closes = |j: usize| {
                b[j] == '"'
                    && b.len() > j + hashes
                    && b[j + 1..=j + hashes].iter().all(|&h| h == '#')
            };
            while i < b.len() && !closes(i) {
                i += 1;
            }
            i += 1 + hashes;
            out.push_str("\"\"");
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                i += if b[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && next == Some('\\') {
            // '\n', '\'', '\u{…}'
            i += 2;
            while i < b.len() && b[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else if c == '\'' && b.get(i + 2) == Some(&'\'') {
            i += 3;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The modules (other than itself and its ancestors) whose files `module`'s code names.
fn imports(module: &Module, code: &str, files: &BTreeMap<Module, PathBuf>) -> BTreeSet<Module> {
    let mut used = Vec::new();
    let mut other = String::new();
    let mut rest = code;
    while let Some(at) = find_word(rest, "use") {
        other.push_str(&rest[..at]);
        let stmt = &rest[at + 3..];
        let end = stmt.find(';').unwrap_or(stmt.len());
        used.extend(expand(&stmt[..end]));
        rest = &stmt[end..];
    }
    other.push_str(rest);
    let mut paths = inline_paths(&other);
    paths.extend(bare_paths(module, &other, &used, files));
    paths.extend(used);
    paths
        .iter()
        .filter_map(|p| resolve(module, p, files))
        .filter(|target| !module.starts_with(target))
        .collect()
}

/// Where `word` starts as a whole word in `text`.
fn find_word(text: &str, word: &str) -> Option<usize> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(i) = text[from..].find(word) {
        let at = from + i;
        let before = text[..at].chars().next_back().is_none_or(|c| !ident(c));
        let after = text[at + word.len()..]
            .chars()
            .next()
            .is_none_or(|c| !ident(c));
        if before && after {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// A use tree (`crate::a::{self, b::C, d as e}`) as its full paths.
fn expand(tree: &str) -> Vec<Vec<String>> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or("");
        return vec![segments(path)];
    };
    let prefix = segments(&tree[..open]);
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(expand)
        .map(|sub| {
            let mut full = prefix.clone();
            if sub != ["self"] {
                full.extend(sub);
            }
            full
        })
        .collect()
}

fn segments(path: &str) -> Vec<String> {
    path.split("::")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// `crate::…`, `super::…` and `self::…` paths written in code outside `use` lines.
fn inline_paths(code: &str) -> Vec<Vec<String>> {
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == ':';
    let mut out = Vec::new();
    for start in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(i) = code[from..].find(start) {
            let at = from + i;
            let fresh = code[..at].chars().next_back().is_none_or(|c| !ident(c));
            let len = code[at..]
                .find(|c: char| !ident(c))
                .unwrap_or(code.len() - at);
            if fresh {
                out.push(segments(&code[at..at + len]));
            }
            from = at + len;
        }
    }
    out
}

/// Paths outside `use` lines that start with a bare name: a child module of `module`
/// (`pigsty::derive(…)` in `inventory/mod.rs`), or a name a `use` brought in (`records::merge::f()`
/// after `use crate::input::records;`, which names `merge.rs`, not only `records/mod.rs`).
fn bare_paths(
    module: &Module,
    code: &str,
    used: &[Vec<String>],
    files: &BTreeMap<Module, PathBuf>,
) -> Vec<Vec<String>> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = code[from..].find("::") {
        let at = from + i;
        from = at + 2;
        let start = code[..at]
            .char_indices()
            .rev()
            .take_while(|(_, c)| ident(*c))
            .last()
            .map_or(at, |(j, _)| j);
        let fresh = code[..start]
            .chars()
            .next_back()
            .is_none_or(|c| !ident(c) && c != ':');
        if !fresh || start == at {
            continue;
        }
        let len = code[start..]
            .find(|c: char| !ident(c) && c != ':')
            .unwrap_or(code.len() - start);
        let path = segments(&code[start..start + len]);
        let mut child = module.clone();
        child.push(path[0].clone());
        if files.contains_key(&child) {
            out.push(path);
        } else if let Some(full) = used.iter().find(|u| u.last() == Some(&path[0])) {
            out.push(full.iter().chain(&path[1..]).cloned().collect());
        }
    }
    out
}

/// The module whose file holds what `path`, written in `module`, names.
fn resolve(module: &Module, path: &[String], files: &BTreeMap<Module, PathBuf>) -> Option<Module> {
    let (mut full, rest): (Module, &[String]) = match path.first().map(String::as_str) {
        Some("crate") => (Vec::new(), &path[1..]),
        Some("self") => (module.clone(), &path[1..]),
        Some("super") => {
            let mut base = module.clone();
            let ups = path.iter().take_while(|s| *s == "super").count();
            base.truncate(base.len().saturating_sub(ups));
            (base, &path[ups..])
        }
        Some(first) => {
            let mut child = module.clone();
            child.push(first.to_string());
            if !files.contains_key(&child) {
                return None;
            }
            (module.clone(), path)
        }
        None => return None,
    };
    full.extend(rest.iter().cloned());
    (0..=full.len())
        .rev()
        .map(|n| full[..n].to_vec())
        .find(|m| files.contains_key(m))
}

/// Tarjan's strongly connected components of the import graph.
fn strongly_connected(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct State<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, (usize, usize)>,
        stack: Vec<&'a Module>,
        on_stack: BTreeSet<&'a Module>,
        out: Vec<Vec<Module>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a Module) {
        let n = s.index.len();
        s.index.insert(v, (n, n));
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in &s.edges[v] {
            let Some((w, _)) = s.edges.get_key_value(w) else {
                continue;
            };
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.index[w].1.min(s.index[v].1);
                s.index.get_mut(v).unwrap().1 = low;
            } else if s.on_stack.contains(w) {
                let low = s.index[w].0.min(s.index[v].1);
                s.index.get_mut(v).unwrap().1 = low;
            }
        }
        if s.index[v].0 == s.index[v].1 {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            s.out.push(component);
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}
