//! A bounded YAML reader: one document into a plain tree, with duplicate keys refused, `<<` merge keys
//! applied as Barn applies them, and alias expansion, nesting and node count capped so that a hostile
//! file is refused quickly and in little memory.

use std::cell::Cell;
use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};

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

/// Parses exactly one YAML document. Errors are plain sentences; the caller says which file.
pub fn parse(text: &str) -> Result<Yaml, String> {
    let budget = Cell::new(node_budget(text.len()));
    let seed = Seed {
        budget: &budget,
        depth: 0,
    };
    let de = serde_yaml::Deserializer::from_str(text);
    seed.deserialize(de).map_err(|e| {
        let msg = e.to_string();
        if msg.contains("more than one document") {
            "must be exactly one YAML document (found a second \"---\" document)".to_string()
        } else {
            msg
        }
    })
}

#[derive(Clone, Copy)]
struct Seed<'a> {
    budget: &'a Cell<usize>,
    depth: usize,
}

impl Seed<'_> {
    fn take<E: de::Error>(&self) -> Result<(), E> {
        let left = self.budget.get();
        if left == 0 {
            return Err(E::custom(format!(
                "expands to too many values (aliases or size); at most {MAX_NODES} are read"
            )));
        }
        self.budget.set(left - 1);
        Ok(())
    }
    fn child<E: de::Error>(&self) -> Result<Self, E> {
        if self.depth >= MAX_DEPTH {
            return Err(E::custom(format!("nests deeper than {MAX_DEPTH} levels")));
        }
        Ok(Seed {
            budget: self.budget,
            depth: self.depth + 1,
        })
    }
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Yaml;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Yaml, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = Yaml;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a YAML value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Yaml, E> {
        self.take()?;
        Ok(Yaml::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Yaml, E> {
        self.visit_unit()
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Yaml, E> {
        self.take()?;
        Ok(Yaml::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Yaml, E> {
        self.take()?;
        Ok(Yaml::Int(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Yaml, E> {
        self.take()?;
        Ok(Yaml::Int(v.into()))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Yaml, E> {
        self.take()?;
        Ok(Yaml::Int(v))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Yaml, E> {
        self.take()?;
        Ok(i128::try_from(v)
            .map(Yaml::Int)
            .unwrap_or(Yaml::Float(v as f64)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Yaml, E> {
        self.take()?;
        Ok(Yaml::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Yaml, E> {
        self.take()?;
        Ok(Yaml::Str(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Yaml, E> {
        self.take()?;
        Ok(Yaml::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Yaml, A::Error> {
        self.take()?;
        let child = self.child()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(child)? {
            items.push(item);
        }
        Ok(Yaml::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Yaml, A::Error> {
        self.take()?;
        let child = self.child()?;
        let mut entries: Vec<(Yaml, Yaml)> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        let mut merges: Vec<Yaml> = Vec::new();
        while let Some(key) = map.next_key_seed(child)? {
            let value = map.next_value_seed(child)?;
            if matches!(&key, Yaml::Str(s) if s == "<<") {
                merges.push(value);
                continue;
            }
            if !seen.insert(key_text(&key)) {
                return Err(de::Error::custom(format!(
                    "has the mapping key {key} twice"
                )));
            }
            entries.push((key, value));
        }
        for merge in merges {
            apply_merge(&mut entries, &mut seen, merge).map_err(de::Error::custom)?;
        }
        Ok(Yaml::Map(entries))
    }
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Yaml, A::Error> {
        // A local tag (`!unsafe 'x'`, `!vault ...`): keep the value, drop the tag. Barn reads
        // such values as plain strings, and they only ever matter in keys it does not read.
        let (_tag, variant): (String, _) = data.variant()?;
        variant.newtype_variant_seed(self)
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
    seen: &mut HashSet<String>,
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
            if seen.insert(key_text(&k)) {
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
