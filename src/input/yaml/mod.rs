//! A bounded YAML reader: one document into a plain tree, with duplicate keys refused, `<<` merge keys
//! applied as Barn applies them, and alias expansion (in nodes and in copied text), nesting and node
//! count capped so that a hostile file is refused quickly and in little memory.

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

use saphyr_parser::{Event, Parser, ScalarStyle, Tag};

mod block;

/// Deepest nesting of collections accepted (Barn limits group nesting to 64).
pub const MAX_DEPTH: usize = 64;
/// Nodes a document may expand to, whatever it does with aliases. A 100,000-name projection needs
/// about 100,000; a full Pigsty inventory a few thousand.
pub const MAX_NODES: usize = 400_000;
/// Said by the error of a file past [`MAX_NODES`]: valid YAML, but more than the reader takes.
pub const LIMIT: &str = "the reader's limit";
/// Nodes allowed on top of what the document's size could hold without aliases (see [`node_budget`]).
const ALIAS_SLACK: usize = 16_384;
/// What anchors and aliases may copy on top of the document's size (see [`copy_budget`]).
const COPY_SLACK: usize = 64 * 1024;
/// Characters the parser may read past the end of the last value it produced (see [`Lookahead`]).
pub const MAX_LOOKAHEAD: usize = 256 * 1024;

#[derive(Debug, Clone, PartialEq)]
pub enum Yaml {
    Null,
    Bool(bool, Written),
    Int(i128, Written),
    Float(f64, Written),
    Str(String),
    Seq(Vec<Yaml>),
    /// Entries in document order; keys are unique.
    Map(Vec<(Yaml, Yaml)>),
}

/// A plain scalar's text as written, kept where printing the value again would show something else
/// (`1e0` printed as `1`, `0x1` as `1`, `True` as `true`): an error quotes what the user wrote. Empty
/// (no allocation) when the text is the value's own printed form, as for nearly every scalar. For
/// messages only: it takes no part in comparisons (`0x1` and `1` are one value). A thin pointer keeps a
/// node at 32 bytes. Nulls keep none: `null` names what was read, however written (`~`, ``, `Null`).
#[derive(Clone, Default)]
pub struct Written(Option<Box<Box<str>>>);

impl Written {
    /// `text` when it differs from `shown`, the value's printed form.
    fn unless(text: &str, shown: impl FnOnce() -> bool) -> Written {
        Written((!shown()).then(|| Box::new(text.into())))
    }

    /// The text as written, if it is not the value's printed form.
    pub fn text(&self) -> Option<&str> {
        self.0.as_deref().map(|t| &**t)
    }
}

impl PartialEq for Written {
    fn eq(&self, _: &Written) -> bool {
        true
    }
}

/// Shows the text, so the readers' trees compared through `{:?}` agree on it too.
impl fmt::Debug for Written {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.text() {
            Some(t) => write!(f, "{t:?}"),
            None => f.write_str("_"),
        }
    }
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
            Yaml::Bool(..) => "a boolean",
            Yaml::Int(..) => "an integer",
            Yaml::Float(..) => "a number",
            Yaml::Str(_) => "a string",
            Yaml::Seq(_) => "a list",
            Yaml::Map(_) if self.is_vault() => "a !vault (encrypted) value",
            Yaml::Map(_) => "a mapping",
        }
    }

    /// A `!vault` value (see [`VAULT_KEY`]).
    pub fn is_vault(&self) -> bool {
        matches!(self, Yaml::Map(e) if e.len() == 1 && matches!(&e[0].0, Yaml::Str(k) if k == VAULT_KEY))
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

/// A scalar as written (cut to a readable length, as every quoted value is); a string quoted.
impl fmt::Display for Yaml {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Yaml::Bool(_, w) | Yaml::Int(_, w) | Yaml::Float(_, w) if w.text().is_some() => {
                f.write_str(&crate::output::text::cut(w.text().unwrap_or_default()))
            }
            Yaml::Null => f.write_str("null"),
            Yaml::Bool(b, _) => write!(f, "{b}"),
            Yaml::Int(i, _) => write!(f, "{i}"),
            Yaml::Float(x, _) => write!(f, "{x}"),
            Yaml::Str(s) => f.write_str(&crate::output::text::quote(s)),
            Yaml::Seq(_) => f.write_str("[...]"),
            Yaml::Map(_) if self.is_vault() => f.write_str("a !vault (encrypted) value"),
            Yaml::Map(_) => f.write_str("{...}"),
        }
    }
}

/// A document of `len` bytes written out without aliases holds at most about one node per two bytes
/// (`[a,a,...]`); anything beyond that plus a small slack can only come from alias expansion.
pub fn node_budget(len: usize) -> usize {
    (len / 2 + ALIAS_SLACK).min(MAX_NODES)
}

/// An anchor keeps a copy of its value and every alias makes another. Counting an alias's nodes alone
/// let one long string be copied at the price of one node, and anchors were free (both found by the
/// `check` fuzz target). Every copy now spends its nodes plus its text bytes from this budget: the
/// document's size again plus a small slack. Aliases still spend their nodes from [`node_budget`] too.
fn copy_budget(len: usize) -> usize {
    len.saturating_add(COPY_SLACK)
}

/// The document's characters as the parser reads them, cut off [`MAX_LOOKAHEAD`] past the end of the
/// last event. saphyr-parser keeps every token of a flow collection that could still turn out to be a
/// mapping key (`- [a, b, ...]`, `[[...]]`) until it closes, at about 180 bytes a token, before it
/// produces a single event for the budgets to see: a 4 MiB `- [a,a,...]` took 700 MB (found through
/// the `check` fuzz target). Past the limit the input ends early and `parse` reports the overrun.
struct Lookahead<'a> {
    chars: std::str::Chars<'a>,
    read: usize,
    line: usize,
    /// Index (in characters) the parser may read up to; moved on by every event.
    limit: Rc<Cell<usize>>,
    /// The line where the limit was reached.
    overrun: Rc<Cell<Option<usize>>>,
}

impl Iterator for Lookahead<'_> {
    type Item = char;

    fn next(&mut self) -> Option<char> {
        if self.read >= self.limit.get() {
            self.overrun.set(Some(self.line));
            return None;
        }
        let c = self.chars.next()?;
        self.read += 1;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }
}

/// Parses exactly one YAML document. Errors are plain sentences with the line; the caller says which
/// file. A document in the plain block subset is read in one pass ([`block`]); any other, and any that
/// might be refused, by [`full`].
pub fn parse(text: &str) -> Result<Yaml, String> {
    block::parse(text, node_budget(text.len())).map_or_else(|| full(text), Ok)
}

/// The tree [`block`] reads, or `None` where it leaves the document to [`full`] (for the fuzz target
/// that compares the two).
pub fn block_subset(text: &str) -> Option<Yaml> {
    block::parse(text, node_budget(text.len()))
}

/// The full reader. The parser streams events, so every bound applies while the file is read: nothing
/// is buffered beyond the tree itself and at most [`MAX_LOOKAHEAD`] of text ahead of it, and an alias
/// is expanded only when its size still fits the budget.
pub fn full(text: &str) -> Result<Yaml, String> {
    let mut b = Builder {
        budget: node_budget(text.len()),
        copy_budget: copy_budget(text.len()),
        anchors: HashMap::new(),
        stack: Vec::new(),
        root: None,
        documents: 0,
    };
    let limit = Rc::new(Cell::new(MAX_LOOKAHEAD));
    let overrun = Rc::new(Cell::new(None));
    let input = Lookahead {
        chars: text.chars(),
        read: 0,
        line: 1,
        limit: limit.clone(),
        overrun: overrun.clone(),
    };
    let overran = |line: usize| {
        format!(
            "line {line}: has a list, mapping or value of over {} KiB that must be read whole before \
             it can be parsed (a flow [...] or {{...}} in key position, or one long scalar); write long \
             lists one item per line",
            MAX_LOOKAHEAD / 1024
        )
    };
    for event in Parser::new_from_iter(input) {
        // Whatever the parser made of the input cut short, the overrun is the error.
        if let Some(line) = overrun.get() {
            return Err(overran(line));
        }
        let (event, span) = event.map_err(|e| {
            let info = if e.info().contains("recursion limit") {
                "nests too deeply"
            } else {
                e.info()
            };
            format!("line {}: {info}", e.marker().line())
        })?;
        limit.set(span.end.index().saturating_add(MAX_LOOKAHEAD));
        let line = span.start.line();
        b.event(event, line)
            .map_err(|msg| format!("line {line}: {msg}"))?;
    }
    if let Some(line) = overrun.get() {
        return Err(overran(line));
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
    /// Scalar text in it so far (keys included): what a copy of it costs in text.
    bytes: usize,
}

struct Builder {
    budget: usize,
    /// What anchors and aliases may still copy: nodes plus text bytes.
    copy_budget: usize,
    /// Anchored values, their node counts and their text sizes.
    anchors: HashMap<usize, (Yaml, usize, usize)>,
    stack: Vec<Frame>,
    root: Option<Yaml>,
    /// Documents started so far.
    documents: usize,
}

impl Builder {
    /// Takes one parser event at `line`; an error is a sentence for after "line N: ".
    fn event(&mut self, event: Event<'_>, line: usize) -> Result<(), String> {
        match event {
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err(
                        "starts a second document; an inventory is exactly one YAML document"
                            .into(),
                    );
                }
                Ok(())
            }
            Event::Scalar(value, style, anchor, tag) => {
                let merge = style == ScalarStyle::Plain && tag.is_none() && value == "<<";
                let bytes = value.len();
                let v = match tag.as_deref() {
                    Some(t) if scalar_tag(t)? => vault(value.into_owned()),
                    t => resolve(value, style, t),
                };
                self.take(1)?;
                if anchor > 0 {
                    // The anchor's copy; the value itself goes into the tree.
                    self.copy(1, bytes)?;
                    self.anchors.insert(anchor, (v.clone(), 1, bytes));
                }
                self.push(v, 1, bytes, merge, line)
            }
            Event::Alias(id) => {
                let &(_, size, bytes) = self
                    .anchors
                    .get(&id)
                    .ok_or_else(|| "refers to an unknown anchor".to_string())?;
                // Spent before the copy is made.
                self.take(size)?;
                self.copy(size, bytes)?;
                let v = self.anchors[&id].0.clone();
                self.push(v, size, bytes, false, line)
            }
            Event::SequenceStart(anchor, tag) => {
                collection_tag(tag.as_deref(), "seq", "a list")?;
                self.open(Open::Seq(Vec::new()), anchor)
            }
            Event::MappingStart(anchor, tag) => {
                collection_tag(tag.as_deref(), "map", "a mapping")?;
                let map = Open::Map {
                    entries: Vec::new(),
                    seen: HashMap::new(),
                    key: None,
                    merges: Vec::new(),
                };
                self.open(map, anchor)
            }
            Event::SequenceEnd | Event::MappingEnd => self.close(line),
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => Ok(()),
        }
    }

    fn open(&mut self, kind: Open, anchor: usize) -> Result<(), String> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(format!("nests deeper than {MAX_DEPTH} levels"));
        }
        self.take(1)?;
        self.stack.push(Frame {
            kind,
            anchor,
            size: 1,
            bytes: 0,
        });
        Ok(())
    }

    fn close(&mut self, line: usize) -> Result<(), String> {
        let Some(frame) = self.stack.pop() else {
            return Err("closes a collection that was never opened".into());
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
                    apply_merge(&mut entries, &mut seen, merge)?;
                }
                Yaml::Map(entries)
            }
        };
        if frame.anchor > 0 {
            self.copy(frame.size, frame.bytes)?;
            self.anchors
                .insert(frame.anchor, (v.clone(), frame.size, frame.bytes));
        }
        self.push(v, frame.size, frame.bytes, false, line)
    }

    fn take(&mut self, n: usize) -> Result<(), String> {
        if n > self.budget {
            return Err(format!(
                "expands to too many values (aliases or size); at most {MAX_NODES} are read, \
                 {LIMIT} (a host with one variable is 4 values)"
            ));
        }
        self.budget -= n;
        Ok(())
    }

    /// Pays for a copy (an anchor's or an alias's) of a value of `nodes` nodes holding `bytes` of text.
    fn copy(&mut self, nodes: usize, bytes: usize) -> Result<(), String> {
        let cost = nodes.saturating_add(bytes);
        if cost > self.copy_budget {
            return Err(
                "copies too much through anchors and aliases; at most the file's size again \
                 (plus 64 KiB) is copied"
                    .into(),
            );
        }
        self.copy_budget -= cost;
        Ok(())
    }

    /// Puts a finished value where it belongs: the root, the open list, or the open mapping.
    fn push(
        &mut self,
        v: Yaml,
        size: usize,
        bytes: usize,
        merge: bool,
        line: usize,
    ) -> Result<(), String> {
        let Some(top) = self.stack.last_mut() else {
            self.root = Some(v);
            return Ok(());
        };
        top.size += size;
        top.bytes += bytes;
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

/// The key under which Ansible shows a `!vault` value (`ansible-inventory --list`), and under which the
/// tree keeps it: a mapping, so every reader that wants a string, a number or a list refuses it.
pub const VAULT_KEY: &str = "__ansible_vault";

/// A scalar's tag, as Ansible's loader takes it: the core schema's (`!!str`, `!!int`, ...; resolved as
/// [`resolve`] says) and `!unsafe` (the literal text) keep the value, `!vault` and
/// `!vault-encrypted` make it an encrypted value (`Ok(true)`), any other tag Ansible cannot construct
/// and refuses the file.
fn scalar_tag(t: &Tag) -> Result<bool, String> {
    if t.is_yaml_core_schema() {
        return match t.suffix.as_str() {
            "str" | "null" | "bool" | "int" | "float" => Ok(false),
            other => Err(format!(
                "has the tag !!{}, which changes the value; Ansible does not read it as text",
                crate::output::text::cut(other)
            )),
        };
    }
    match (t.handle.as_str(), t.suffix.as_str()) {
        ("!", "unsafe") => Ok(false),
        ("!", "vault" | "vault-encrypted") => Ok(true),
        (h, suffix) => Err(format!(
            "has the tag {}, which Ansible cannot read (it refuses the file)",
            crate::output::text::quote(&format!("{h}{suffix}"))
        )),
    }
}

/// A collection's tag: none, or the core schema's tag of its own kind; `!!seq` on a mapping (or any
/// other) is a file Ansible cannot read.
fn collection_tag(t: Option<&Tag>, own: &str, kind: &str) -> Result<(), String> {
    match t {
        None => Ok(()),
        Some(t) if t.is_yaml_core_schema() && t.suffix == own => Ok(()),
        Some(t) => {
            let shown = if t.is_yaml_core_schema() {
                format!("!!{}", t.suffix)
            } else {
                format!("{}{}", t.handle, t.suffix)
            };
            Err(format!(
                "has the tag {} on {kind}; Ansible cannot read the file",
                crate::output::text::quote(&shown)
            ))
        }
    }
}

/// A `!vault` scalar as Ansible shows it: `{__ansible_vault: <ciphertext>}`.
fn vault(text: String) -> Yaml {
    Yaml::Map(vec![(Yaml::Str(VAULT_KEY.into()), Yaml::Str(text))])
}

/// YAML 1.2 core schema resolution of a scalar (what serde_yaml did): quoted and block scalars are
/// strings; plain ones may be null, booleans, integers or floats. Local tags such as `!unsafe` keep
/// the value; `!!str` forces a string.
/// The event's text becomes the string without a copy (one scalar per name at 100,000 names).
fn resolve(text: Cow<'_, str>, style: ScalarStyle, tag: Option<&Tag>) -> Yaml {
    if let Some(t) = tag.filter(|t| t.is_yaml_core_schema()) {
        match t.suffix.as_str() {
            "str" => return Yaml::Str(text.into_owned()),
            "null" => return Yaml::Null,
            _ => {}
        }
    }
    if style != ScalarStyle::Plain {
        return Yaml::Str(text.into_owned());
    }
    let value: &str = &text;
    match value {
        "" | "~" | "null" | "Null" | "NULL" => return Yaml::Null,
        "true" | "True" | "TRUE" => return Yaml::Bool(true, written(value, "true")),
        "false" | "False" | "FALSE" => return Yaml::Bool(false, written(value, "false")),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Yaml::Float(f64::INFINITY, written(value, ""));
        }
        "-.inf" | "-.Inf" | "-.INF" => return Yaml::Float(f64::NEG_INFINITY, written(value, "")),
        ".nan" | ".NaN" | ".NAN" => return Yaml::Float(f64::NAN, written(value, "")),
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
        return Yaml::Int(i, Written::unless(value, || decimal(value)));
    }
    let float_like = value.bytes().any(|b| b.is_ascii_digit())
        && value
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
        && value.matches('.').count() <= 1;
    // Parsed only when it looks like a number (a float parse of every name was a few percent of `check`).
    if float_like && let Ok(f) = value.parse::<f64>() {
        return Yaml::Float(f, Written::unless(value, || f.to_string() == value));
    }
    Yaml::Str(text.into_owned())
}

fn written(value: &str, shown: &str) -> Written {
    Written::unless(value, || value == shown)
}

/// Whether an integer's text is its printed form: decimal, no `+`, no leading zero, no `-0`.
fn decimal(value: &str) -> bool {
    let digits = value.strip_prefix('-').unwrap_or(value);
    let Some(first) = digits.bytes().next() else {
        return false;
    };
    digits.bytes().all(|b| b.is_ascii_digit()) && (first != b'0' || value == "0")
}

/// A key's identity for duplicate detection: its value, not how it is written (`1` and `0x1` are one
/// key). A list or mapping as a key, which no inventory has, compares as its `{:?}`.
fn key_text(key: &Yaml) -> String {
    match key {
        Yaml::Str(s) => format!("s{s}"),
        Yaml::Null => "n".into(),
        Yaml::Bool(b, _) => format!("b{b}"),
        Yaml::Int(i, _) => format!("i{i}"),
        Yaml::Float(x, _) => format!("f{x:?}"),
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
mod tests;
