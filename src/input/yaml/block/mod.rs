//! The one-pass reader for the plain block subset of YAML that Barn writes, and that most hand-written
//! projections are: block mappings and sequences indented with spaces, one-line flow collections, plain
//! scalars of name-like characters, comments. At 100,000 names the full reader (saphyr-parser, a
//! character at a time, an owned token per scalar) was the largest part of `check` and `load`; this
//! reads the same document in one pass over the bytes.
//!
//! It only ever says "this is the tree" or "not mine": anything outside the subset, and anything that
//! could be an error (a repeated key, a budget reached, a line the full reader would look past), is
//! left to the full reader, so every refusal and every rarer construct (quotes, anchors, merge keys,
//! tags, multi-line scalars) still has one reader and one message. Where it answers, the full reader
//! gives the same tree; the `check` fuzz target and the tests below compare the two.

use std::borrow::Cow;
use std::collections::HashSet;

use saphyr_parser::ScalarStyle;

use super::{MAX_LOOKAHEAD, Yaml, resolve};

/// Longest line read here, and longest run of comment or blank lines: with both, the full reader never
/// reads [`MAX_LOOKAHEAD`] past its last event on a document this reader takes, so it never refuses one
/// for that.
const MAX_LINE: usize = 16 * 1024;
const MAX_GAP: usize = MAX_LOOKAHEAD / 4;
/// YAML allows an implicit key of at most 1,024 characters.
const MAX_KEY: usize = 1024;
/// Nesting taken here; the full reader's limit (`MAX_DEPTH`) is higher.
const MAX_NESTING: usize = 32;
/// Keys of a mapping compared one by one below this size, through a set above it.
const LINEAR_KEYS: usize = 16;

/// The tree of `text`, or `None` when the document is not in the subset (or might be refused). `budget`
/// is the full reader's node budget: a document that would reach it is left to that reader.
pub(super) fn parse(text: &str, budget: usize) -> Option<Yaml> {
    let mut r = Reader {
        stack: Vec::new(),
        root: None,
        nodes: 0,
        budget,
    };
    let mut gap = 0;
    let mut started = false;
    for line in text.as_bytes().split(|&b| b == b'\n') {
        if line.len() > MAX_LINE || !line.iter().all(|&b| (b' '..=b'~').contains(&b)) {
            return None;
        }
        let indent = line.iter().take_while(|&&b| b == b' ').count();
        let content = &line[indent..];
        if content.is_empty() || content[0] == b'#' {
            gap += line.len() + 1;
            if gap > MAX_GAP {
                return None;
            }
            continue;
        }
        gap = 0;
        // An explicit start of the one document, before anything else (a second one is refused).
        if !started && line == b"---" {
            started = true;
            continue;
        }
        started = true;
        r.line(indent, content)?;
    }
    r.close_above(None)?;
    r.root
}

enum Open {
    Seq(Vec<Yaml>),
    Map {
        entries: Vec<(Yaml, Yaml)>,
        /// The keys, once there are more than [`LINEAR_KEYS`].
        seen: Option<HashSet<String>>,
        /// A key whose value is the block that follows (or null).
        pending: Option<String>,
    },
}

struct Frame {
    indent: usize,
    open: Open,
}

struct Reader {
    stack: Vec<Frame>,
    root: Option<Yaml>,
    nodes: usize,
    budget: usize,
}

impl Reader {
    fn count(&mut self) -> Option<()> {
        self.nodes += 1;
        (self.nodes <= self.budget).then_some(())
    }

    fn open(&mut self, indent: usize, open: Open) -> Option<()> {
        if self.stack.len() >= MAX_NESTING {
            return None;
        }
        self.count()?;
        self.stack.push(Frame { indent, open });
        Some(())
    }

    /// One line that holds something, `indent` spaces in.
    fn line(&mut self, indent: usize, content: &[u8]) -> Option<()> {
        self.close_above(Some(indent))?;
        if content[0] == b'-' && content.get(1).is_none_or(|&b| b == b' ') {
            // A sequence entry: the next one of this sequence, or the first of a key's value.
            match self.stack.last() {
                Some(Frame {
                    indent: i,
                    open: Open::Seq(_),
                }) if *i == indent => {}
                Some(Frame {
                    indent: i,
                    open:
                        Open::Map {
                            pending: Some(_), ..
                        },
                }) if *i < indent => self.open(indent, Open::Seq(Vec::new()))?,
                None if self.root.is_none() => self.open(indent, Open::Seq(Vec::new()))?,
                _ => return None,
            }
            let rest = &content[1..];
            let spaces = rest.iter().take_while(|&&b| b == b' ').count();
            let rest = &rest[spaces..];
            if rest.is_empty() || rest[0] == b'#' {
                return None;
            }
            if is_key(rest) {
                // `- key: value`: a mapping whose keys are in this column.
                self.open(indent + 1 + spaces, new_map())?;
                return self.entry(rest);
            }
            let (v, end) = self.value(rest, 0)?;
            at_end(&rest[end..])?;
            return self.attach(v);
        }
        match self.stack.last_mut() {
            Some(Frame {
                indent: i,
                open: Open::Map { pending, .. },
            }) if *i == indent => {
                // The previous key had nothing under it: null.
                if let Some(k) = pending.take() {
                    self.count()?;
                    self.insert(k, Yaml::Null)?;
                }
            }
            Some(Frame {
                indent: i,
                open: Open::Map {
                    pending: Some(_), ..
                },
            }) if *i < indent => self.open(indent, new_map())?,
            None if self.root.is_none() => self.open(indent, new_map())?,
            _ => return None,
        }
        self.entry(content)
    }

    /// `key: value`, `key:` or `key: # comment` into the open mapping.
    fn entry(&mut self, s: &[u8]) -> Option<()> {
        let k = scalar_len(s);
        if k == 0 || k > MAX_KEY || s.get(k) != Some(&b':') {
            return None;
        }
        let Yaml::Str(key) = plain(&s[..k]) else {
            return None;
        };
        self.count()?;
        let rest = &s[k + 1..];
        if !rest.is_empty() && rest[0] != b' ' {
            return None;
        }
        let spaces = rest.iter().take_while(|&&b| b == b' ').count();
        let rest = &rest[spaces..];
        if rest.is_empty() || rest[0] == b'#' {
            let Some(Frame {
                open: Open::Map { pending, .. },
                ..
            }) = self.stack.last_mut()
            else {
                return None;
            };
            *pending = Some(key);
            return Some(());
        }
        let (v, end) = self.value(rest, 0)?;
        at_end(&rest[end..])?;
        self.insert(key, v)
    }

    /// A scalar or a one-line flow collection at the start of `s`, and where it ends.
    fn value(&mut self, s: &[u8], depth: usize) -> Option<(Yaml, usize)> {
        if depth + self.stack.len() >= MAX_NESTING {
            return None;
        }
        self.count()?;
        match s.first()? {
            b'[' => {
                let mut items = Vec::new();
                let mut at = skip_spaces(s, 1);
                if s.get(at) == Some(&b']') {
                    return Some((Yaml::Seq(items), at + 1));
                }
                loop {
                    let (v, n) = self.value(&s[at..], depth + 1)?;
                    items.push(v);
                    at = skip_spaces(s, at + n);
                    match s.get(at)? {
                        b',' => at = skip_spaces(s, at + 1),
                        b']' => return Some((Yaml::Seq(items), at + 1)),
                        _ => return None,
                    }
                }
            }
            b'{' => {
                let mut entries: Vec<(Yaml, Yaml)> = Vec::new();
                let mut at = skip_spaces(s, 1);
                if s.get(at) == Some(&b'}') {
                    return Some((Yaml::Map(entries), at + 1));
                }
                loop {
                    let k = scalar_len(&s[at..]);
                    if k == 0 || k > MAX_KEY || s.get(at + k) != Some(&b':') {
                        return None;
                    }
                    if s.get(at + k + 1) != Some(&b' ') {
                        return None;
                    }
                    let key = plain(&s[at..at + k]);
                    if !matches!(key, Yaml::Str(_)) || entries.iter().any(|(e, _)| *e == key) {
                        return None;
                    }
                    self.count()?;
                    at = skip_spaces(s, at + k + 1);
                    let (v, n) = self.value(&s[at..], depth + 1)?;
                    entries.push((key, v));
                    at = skip_spaces(s, at + n);
                    match s.get(at)? {
                        b',' => at = skip_spaces(s, at + 1),
                        b'}' => return Some((Yaml::Map(entries), at + 1)),
                        _ => return None,
                    }
                }
            }
            _ => {
                let n = scalar_len(s);
                (n > 0).then(|| (plain(&s[..n]), n))
            }
        }
    }

    /// Puts a finished value into the open sequence, or under the open mapping's pending key, or at the
    /// root.
    fn attach(&mut self, v: Yaml) -> Option<()> {
        match self.stack.last_mut() {
            None if self.root.is_none() => {
                self.root = Some(v);
                Some(())
            }
            None => None,
            Some(Frame {
                open: Open::Seq(items),
                ..
            }) => {
                items.push(v);
                Some(())
            }
            Some(Frame {
                open: Open::Map { pending, .. },
                ..
            }) => {
                let k = pending.take()?;
                self.insert(k, v)
            }
        }
    }

    /// A new key of the open mapping; a repeated one is the full reader's to report.
    fn insert(&mut self, k: String, v: Yaml) -> Option<()> {
        let Some(Frame {
            open: Open::Map { entries, seen, .. },
            ..
        }) = self.stack.last_mut()
        else {
            return None;
        };
        let repeated = match seen {
            Some(set) => !set.insert(k.clone()),
            None => entries
                .iter()
                .any(|(e, _)| matches!(e, Yaml::Str(s) if *s == k)),
        };
        if repeated {
            return None;
        }
        if seen.is_none() && entries.len() >= LINEAR_KEYS {
            let mut set: HashSet<String> = entries
                .iter()
                .filter_map(|(e, _)| match e {
                    Yaml::Str(s) => Some(s.clone()),
                    _ => None,
                })
                .collect();
            set.insert(k.clone());
            *seen = Some(set);
        }
        entries.push((Yaml::Str(k), v));
        Some(())
    }

    /// Closes every collection indented more than `indent` (all of them for `None`), innermost first.
    fn close_above(&mut self, indent: Option<usize>) -> Option<()> {
        while self
            .stack
            .last()
            .is_some_and(|f| indent.is_none_or(|i| f.indent > i))
        {
            let mut frame = self.stack.pop()?;
            if let Open::Map { pending, .. } = &mut frame.open
                && let Some(k) = pending.take()
            {
                self.stack.push(frame);
                self.count()?;
                self.insert(k, Yaml::Null)?;
                frame = self.stack.pop()?;
            }
            let v = match frame.open {
                Open::Seq(items) => Yaml::Seq(items),
                Open::Map { entries, .. } => Yaml::Map(entries),
            };
            self.attach(v)?;
        }
        Some(())
    }
}

fn new_map() -> Open {
    Open::Map {
        entries: Vec::new(),
        seen: None,
        pending: None,
    }
}

/// Length of the plain scalar at the start of `s`: a letter, digit or `_`, then those and `.`, `-`, `/`
/// (no character that YAML gives a meaning to, so the text is the scalar). 0 when there is none.
fn scalar_len(s: &[u8]) -> usize {
    match s.first() {
        Some(b) if b.is_ascii_alphanumeric() || *b == b'_' => {}
        _ => return 0,
    }
    s.iter()
        .take_while(|&&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'/'))
        .count()
}

/// The scalar as the full reader resolves a plain one.
fn plain(s: &[u8]) -> Yaml {
    // Only ASCII reaches here (checked per line).
    let text = std::str::from_utf8(s).unwrap_or_default();
    resolve(Cow::Borrowed(text), ScalarStyle::Plain, None)
}

/// Whether `s` starts with `key:` followed by a space or the end of the line.
fn is_key(s: &[u8]) -> bool {
    let k = scalar_len(s);
    k > 0 && s.get(k) == Some(&b':') && s.get(k + 1).is_none_or(|&b| b == b' ')
}

fn skip_spaces(s: &[u8], mut at: usize) -> usize {
    while s.get(at) == Some(&b' ') {
        at += 1;
    }
    at
}

/// After a value: spaces, then the end of the line or a comment.
fn at_end(rest: &[u8]) -> Option<()> {
    let spaces = rest.iter().take_while(|&&b| b == b' ').count();
    match rest.get(spaces) {
        None => Some(()),
        Some(b'#') if spaces > 0 => Some(()),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests;
