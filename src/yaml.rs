//! A bounded YAML reader: one document into a plain tree, with duplicate keys refused, `<<` merge keys
//! applied as Barn applies them, and alias expansion, nesting and node count capped so that a hostile
//! file is refused quickly and in little memory.

use std::collections::HashMap;
use std::fmt;

use saphyr_parser::{Event, Parser, ScalarStyle, Tag};

/// Deepest nesting of collections accepted (Barn limits group nesting to 64).
pub const MAX_DEPTH: usize = 64;
/// Nodes a document may expand to, whatever it does with aliases. A 100,000-name projection needs
/// about 100,000; a full Pigsty inventory a few thousand.
pub const MAX_NODES: usize = 400_000;
/// Nodes allowed on top of what the document's size could hold without aliases (see [`node_budget`]).
const ALIAS_SLACK: usize = 16_384;

#[derive(Debug, Clone, PartialEq)]
pub enum Yaml {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Seq(Vec<Yaml>),
    /// Entries in document order; keys are unique.
    Map(Vec<(Yaml, Yaml)>),
}

impl Yaml {
    /// The value of a string key in a mapping.
    pub fn get(&self, key: &str) -> Option<&Yaml> {
        match self {
            Yaml::Map(entries) => entries
                .iter()
                .find(|(k, _)| matches!(k, Yaml::Str(s) if s == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Yaml::Null => "null",
            Yaml::Bool(_) => "a boolean",
            Yaml::Int(_) => "an integer",
            Yaml::Float(_) => "a number",
            Yaml::Str(_) => "a string",
            Yaml::Seq(_) => "a list",
            Yaml::Map(_) => "a mapping",
        }
    }

    /// Any string inside this value that contains a template marker.
    pub fn find_template(&self) -> Option<&str> {
        match self {
            Yaml::Str(s) if s.contains("{{") => Some(s),
            Yaml::Seq(items) => items.iter().find_map(Yaml::find_template),
            Yaml::Map(entries) => entries
                .iter()
                .find_map(|(k, v)| k.find_template().or_else(|| v.find_template())),
            _ => None,
        }
    }
}

impl fmt::Display for Yaml {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Yaml::Null => f.write_str("null"),
            Yaml::Bool(b) => write!(f, "{b}"),
            Yaml::Int(i) => write!(f, "{i}"),
            Yaml::Float(x) => write!(f, "{x}"),
            Yaml::Str(s) => write!(f, "{s:?}"),
            Yaml::Seq(_) => f.write_str("[...]"),
            Yaml::Map(_) => f.write_str("{...}"),
        }
    }
}

/// A document of `len` bytes written out without aliases holds at most about one node per two bytes
/// (`[a,a,...]`); anything beyond that plus a small slack can only come from alias expansion.
pub fn node_budget(len: usize) -> usize {
    (len / 2 + ALIAS_SLACK).min(MAX_NODES)
}

/// Parses exactly one YAML document. Errors are plain sentences with the line; the caller says which
/// file. The parser streams events, so every bound applies while the file is read: nothing is buffered
/// beyond the tree itself, and an alias is expanded only when its size still fits the budget.
pub fn parse(text: &str) -> Result<Yaml, String> {
    let mut b = Builder {
        budget: node_budget(text.len()),
        anchors: HashMap::new(),
        stack: Vec::new(),
        root: None,
    };
    let mut documents = 0;
    for event in Parser::new_from_str(text) {
        let (event, span) = event.map_err(|e| {
            let info = if e.info().contains("recursion limit") {
                "nests too deeply"
            } else {
                e.info()
            };
            format!("line {}: {info}", e.marker().line())
        })?;
        let line = span.start.line();
        let at = |msg: String| format!("line {line}: {msg}");
        match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(at(
                        "starts a second document; an inventory is exactly one YAML document"
                            .into(),
                    ));
                }
            }
            Event::Scalar(value, style, anchor, tag) => {
                let merge = style == ScalarStyle::Plain && tag.is_none() && value == "<<";
                let v = resolve(&value, style, tag.as_deref());
                b.take(1).map_err(at)?;
                if anchor > 0 {
                    b.anchors.insert(anchor, (v.clone(), 1));
                }
                b.push(v, 1, merge, line).map_err(at)?;
            }
            Event::Alias(id) => {
                let (v, size) = b
                    .anchors
                    .get(&id)
                    .cloned()
                    .ok_or_else(|| at("refers to an unknown anchor".into()))?;
                b.take(size).map_err(at)?;
                b.push(v, size, false, line).map_err(at)?;
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if b.stack.len() >= MAX_DEPTH {
                    return Err(at(format!("nests deeper than {MAX_DEPTH} levels")));
                }
                b.take(1).map_err(at)?;
                let kind = if matches!(event, Event::SequenceStart(..)) {
                    Open::Seq(Vec::new())
                } else {
                    Open::Map {
                        entries: Vec::new(),
                        seen: HashMap::new(),
                        key: None,
                        merges: Vec::new(),
                    }
                };
                b.stack.push(Frame {
                    kind,
                    anchor,
                    size: 1,
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let Some(frame) = b.stack.pop() else {
                    return Err(at("closes a collection that was never opened".into()));
                };
                let v = match frame.kind {
                    Open::Seq(items) => Yaml::Seq(items),
                    Open::Map {
                        mut entries,
                        mut seen,
                        merges,
                        ..
                    } => {
                        for merge in merges {
                            apply_merge(&mut entries, &mut seen, merge).map_err(at)?;
                        }
                        Yaml::Map(entries)
                    }
                };
                if frame.anchor > 0 {
                    b.anchors.insert(frame.anchor, (v.clone(), frame.size));
                }
                b.push(v, frame.size, false, line).map_err(at)?;
            }
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => {}
        }
    }
    Ok(b.root.unwrap_or(Yaml::Null))
}

enum Open {
    Seq(Vec<Yaml>),
    Map {
        entries: Vec<(Yaml, Yaml)>,
        /// Each key's text and the line it is on, for duplicate detection.
        seen: HashMap<String, usize>,
        /// The key waiting for its value, and whether it is the merge key `<<`.
        key: Option<(Yaml, bool, usize)>,
        merges: Vec<Yaml>,
    },
}

struct Frame {
    kind: Open,
    anchor: usize,
    /// Nodes in this collection so far (itself included): what an alias to it costs.
    size: usize,
}

struct Builder {
    budget: usize,
    /// Anchored values and their node counts.
    anchors: HashMap<usize, (Yaml, usize)>,
    stack: Vec<Frame>,
    root: Option<Yaml>,
}

impl Builder {
    fn take(&mut self, n: usize) -> Result<(), String> {
        if n > self.budget {
            return Err(format!(
                "expands to too many values (aliases or size); at most {MAX_NODES} are read"
            ));
        }
        self.budget -= n;
        Ok(())
    }

    /// Puts a finished value where it belongs: the root, the open list, or the open mapping.
    fn push(&mut self, v: Yaml, size: usize, merge: bool, line: usize) -> Result<(), String> {
        let Some(top) = self.stack.last_mut() else {
            self.root = Some(v);
            return Ok(());
        };
        top.size += size;
        match &mut top.kind {
            Open::Seq(items) => items.push(v),
            Open::Map {
                entries,
                seen,
                key,
                merges,
            } => match key.take() {
                None => *key = Some((v, merge, line)),
                Some((_, true, _)) => merges.push(v),
                Some((k, false, key_line)) => {
                    if let Some(first) = seen.insert(key_text(&k), key_line) {
                        return Err(format!(
                            "has the mapping key {k} twice (lines {first} and {key_line})"
                        ));
                    }
                    entries.push((k, v));
                }
            },
        }
        Ok(())
    }
}

/// YAML 1.2 core schema resolution of a scalar (what serde_yaml did): quoted and block scalars are
/// strings; plain ones may be null, booleans, integers or floats. Local tags such as `!unsafe` keep
/// the value; `!!str` forces a string.
fn resolve(value: &str, style: ScalarStyle, tag: Option<&Tag>) -> Yaml {
    if let Some(t) = tag.filter(|t| t.is_yaml_core_schema()) {
        match t.suffix.as_str() {
            "str" => return Yaml::Str(value.to_string()),
            "null" => return Yaml::Null,
            _ => {}
        }
    }
    if style != ScalarStyle::Plain {
        return Yaml::Str(value.to_string());
    }
    match value {
        "" | "~" | "null" | "Null" | "NULL" => return Yaml::Null,
        "true" | "True" | "TRUE" => return Yaml::Bool(true),
        "false" | "False" | "FALSE" => return Yaml::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Yaml::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return Yaml::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Yaml::Float(f64::NAN),
        _ => {}
    }
    let int = if let Some(hex) = value.strip_prefix("0x") {
        i128::from_str_radix(hex, 16).ok()
    } else if let Some(oct) = value.strip_prefix("0o") {
        i128::from_str_radix(oct, 8).ok()
    } else if value
        .trim_start_matches(['-', '+'])
        .bytes()
        .all(|b| b.is_ascii_digit())
        && value.len() <= 40
    {
        value.parse::<i128>().ok()
    } else {
        None
    };
    if let Some(i) = int {
        return Yaml::Int(i);
    }
    let float_like = value.bytes().any(|b| b.is_ascii_digit())
        && value
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
        && value.matches('.').count() <= 1;
    match value.parse::<f64>() {
        Ok(f) if float_like => Yaml::Float(f),
        _ => Yaml::Str(value.to_string()),
    }
}

fn key_text(key: &Yaml) -> String {
    match key {
        Yaml::Str(s) => format!("s{s}"),
        other => format!("{other:?}"),
    }
}

/// `<<: *a` or `<<: [*a, *b]`: keys given explicitly win, and among merged mappings the first wins.
fn apply_merge(
    entries: &mut Vec<(Yaml, Yaml)>,
    seen: &mut HashMap<String, usize>,
    merge: Yaml,
) -> Result<(), String> {
    let sources = match merge {
        Yaml::Map(m) => vec![m],
        Yaml::Seq(items) => items
            .into_iter()
            .map(|i| match i {
                Yaml::Map(m) => Ok(m),
                other => Err(format!(
                    "has a merge key \"<<\" whose list holds {}; it takes mappings",
                    other.kind()
                )),
            })
            .collect::<Result<_, _>>()?,
        other => {
            return Err(format!(
                "has a merge key \"<<\" with {}; it takes a mapping or a list of them",
                other.kind()
            ));
        }
    };
    for source in sources {
        for (k, v) in source {
            if let std::collections::hash_map::Entry::Vacant(e) = seen.entry(key_text(&k)) {
                e.insert(0);
                entries.push((k, v));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_scalars_lists_and_maps() {
        let y = parse("a: 1\nb: [x, 'y']\nc: {d: true}\ne: ~\nf: 1.5\ng: '1'\n").unwrap();
        assert_eq!(y.get("a"), Some(&Yaml::Int(1)));
        assert_eq!(
            y.get("b"),
            Some(&Yaml::Seq(vec![
                Yaml::Str("x".into()),
                Yaml::Str("y".into())
            ]))
        );
        assert_eq!(y.get("c").and_then(|c| c.get("d")), Some(&Yaml::Bool(true)));
        assert_eq!(y.get("e"), Some(&Yaml::Null));
        assert_eq!(y.get("f"), Some(&Yaml::Float(1.5)));
        assert_eq!(y.get("g"), Some(&Yaml::Str("1".into())));
    }

    #[test]
    fn refuses_duplicate_keys() {
        let e = parse("a: 1\nb: 2\na: 3\n").unwrap_err();
        assert!(e.contains("mapping key \"a\" twice"), "{e}");
        assert!(parse("x:\n  y: 1\n  y: 1\n").is_err());
    }

    #[test]
    fn merge_keys_explicit_wins_then_first_merged() {
        let y = parse(
            "b: &b {k: from-b, m: b}\nc: &c {k: from-c, n: c}\nx:\n  <<: [*b, *c]\n  k: own\n",
        )
        .unwrap();
        let x = y.get("x").unwrap();
        assert_eq!(x.get("k"), Some(&Yaml::Str("own".into())));
        assert_eq!(x.get("m"), Some(&Yaml::Str("b".into())));
        assert_eq!(x.get("n"), Some(&Yaml::Str("c".into())));
        let y = parse("b: &b {k: from-b}\nc: &c {k: from-c}\nx: {<<: [*b, *c]}\n").unwrap();
        assert_eq!(
            y.get("x").unwrap().get("k"),
            Some(&Yaml::Str("from-b".into()))
        );
        assert!(parse("x: {<<: 3}\n").unwrap_err().contains("merge key"));
    }

    #[test]
    fn aliases_expand() {
        let y = parse("a: &v [1, 2]\nb: *v\n").unwrap();
        assert_eq!(y.get("b"), y.get("a"));
    }

    #[test]
    fn refuses_alias_bombs_and_deep_nesting() {
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let p = i - 1;
            bomb.push_str(&format!("a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"));
        }
        let e = parse(&bomb).unwrap_err();
        assert!(e.contains("too many values"), "{e}");
        let deep = format!("{}1{}", "[".repeat(100), "]".repeat(100));
        let e = parse(&deep).unwrap_err();
        assert!(e.contains("deeper") || e.contains("recursion"), "{e}");
    }

    #[test]
    fn refuses_two_documents_and_keeps_tagged_values() {
        assert!(
            parse("a: 1\n---\nb: 2\n")
                .unwrap_err()
                .contains("exactly one YAML document")
        );
        assert_eq!(
            parse("a: !unsafe 'x{{y'\n").unwrap().get("a"),
            Some(&Yaml::Str("x{{y".into()))
        );
    }
}
