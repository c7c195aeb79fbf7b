use super::super::{full, node_budget};
use super::*;

fn fast(text: &str) -> Option<Yaml> {
    parse(text, node_budget(text.len()))
}

/// Read here, and the same tree as the full reader's.
fn same(text: &str) {
    let t = fast(text).unwrap_or_else(|| panic!("not read here:\n{text}"));
    let f = full(text).unwrap_or_else(|e| panic!("the full reader refuses it: {e}\n{text}"));
    assert_eq!(format!("{t:?}"), format!("{f:?}"), "{text}");
}

fn left(text: &str) {
    assert!(fast(text).is_none(), "read here:\n{text}");
}

#[test]
fn reads_what_barn_writes_as_the_full_reader_does() {
    same(include_str!("../../../../zones/pigsty.test.yml"));
    same(include_str!("../../../../zones/ha.yml"));
    same(
        "# c\nall:\n  hosts:\n    10.10.10.10: { nodename: meta }\n  vars:\n    admin_ip: 10.10.10.10        # c\n    vm_hosts:\n      - address: 10.10.10.10\n        names: [adm.pigsty, i.pigsty, meta]\n        # c\n      - address: 10.10.10.11\n        names:\n          - a\n          - b-1\n",
    );
    same("all:\n  hosts: {10.10.10.10: {nodename: meta, pg_seq: 1}, 10.10.10.11: {}}\n");
    same("a:\n  b:\n  c: 1\nd: [x, [y, z], {e: f}, []]\n");
    same("- a\n- b: 1\n  c:\n- d\n");
    same("a: [1, 0x1f, 1.5, true, null, x.y, 1e3, _a]\nb:\n");
    same("  a:\n    - x\n    -   y   # c\n  b: 2\n");
    same("a:\n");
}

#[test]
fn leaves_everything_else_to_the_full_reader() {
    for text in [
        "",
        "# only\n",
        "a: 'q'\n",
        "a: \"q\"\n",
        "a: &x 1\nb: *x\n",
        "a: {<<: {b: 1}}\n",
        "a: !!str 1\n",
        "a: 1\na: 2\n",
        "a: {b: 1, b: 2}\n",
        "a:\n- x\n",
        "a: x\n  y\n",
        "a: x y\n",
        "a: x#y\n",
        "a:b\n",
        "a: 1\n---\nb: 2\n",
        "--- a: 1\n",
        "a: 1\n...\n",
        "a:\t1\n",
        "a: 1\r\n",
        "a: é\n",
        "a: [x,\n  y]\n",
        "a: [x, ]\n",
        "a: {x}\n",
        "? a\n: b\n",
        "1: a\n",
        "true: a\n",
        "- -1\n",
        "a: -1\n",
        "a: .inf\n",
        "a: |\n  x\n",
        "- x\n  - y\n",
        "a:\n  b: 1\n c: 2\n",
        "x\n",
        "a: [x]: y\n",
        "a: b: c\n",
        "-\n  a: 1\n",
    ] {
        left(text);
    }
    left(&format!("a: {}\n", "x".repeat(MAX_LINE)));
    left(&format!("{}: 1\n", "k".repeat(MAX_KEY + 1)));
    left(&format!("a: 1\n{}b: 2\n", "#\n".repeat(MAX_GAP)));
    left(&format!("a: {}1{}\n", "[".repeat(40), "]".repeat(40)));
}

#[test]
fn leaves_a_document_past_the_node_budget() {
    let text = "a: [1, 2, 3]\n";
    assert!(parse(text, 6).is_some());
    assert!(parse(text, 5).is_none());
}

#[test]
fn many_keys_are_checked_for_repeats_through_a_set() {
    let mut text = String::from("hosts:\n");
    for i in 0..40 {
        text.push_str(&format!("  10.0.0.{i}: {{}}\n"));
    }
    same(&text);
    text.push_str("  10.0.0.7: {}\n");
    left(&text);
    assert!(full(&text).is_err());
}

/// Documents built from pieces in and out of the subset: whatever is read here, the full reader
/// reads to the same tree. (Over 80 lines: the pieces are listed one a line, and the generator is one
/// loop that reads best whole.)
#[test]
fn agrees_with_the_full_reader_on_generated_documents() {
    // Lines of the subset (keys, entries, values, comments), some that are not.
    const KEYS: &[&str] = &["a", "b", "c", "10.0.0.1", "x-y", "a/b", "_k"];
    const VALUES: &[&str] = &[
        "1",
        "x",
        "null",
        "true",
        "0x1f",
        "1.5",
        "1e3",
        "[x, y]",
        "{p: q}",
        "{}",
        "[]",
        "[1, {z: 2}]",
        "{f: [g, h], i: j}",
        "10.10.10.10",
        "x # c",
    ];
    const ODD: &[&str] = &[
        "-",
        "'q'",
        "&a x",
        "*a",
        ": ",
        "k:v",
        "- - y",
        "a: b: c",
        "[x,",
        "---",
        "? k",
        "!t x",
        "<<: {m: 1}",
        "1: x",
        "a: x y",
        "#c",
        "x",
        "a: {b: 1, b: 2}",
        "a:\tb",
        "- 'q'",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let pick = |list: &[&'static str], r: u64| list[(r % list.len() as u64) as usize];
    let mut read = 0;
    for _ in 0..40_000 {
        let mut text = String::new();
        // Indentation that mostly follows the structure: in after a key, else level or out.
        let mut indent: usize = 0;
        for _ in 0..(next() % 12 + 1) {
            let (k, v) = (pick(KEYS, next()), pick(VALUES, next()));
            let line = match next() % 16 {
                0..=3 => format!("{k}: {v}"),
                4..=6 => format!("{k}:"),
                7..=8 => format!("- {v}"),
                9..=10 => format!("- {k}: {v}"),
                11 => format!("- {k}:"),
                12 => "# c".to_string(),
                _ => pick(ODD, next()).to_string(),
            };
            text.push_str(&" ".repeat(indent));
            text.push_str(&line);
            text.push('\n');
            let opened = line.ends_with(':');
            indent = match next() % 8 {
                _ if opened && next() % 5 > 0 => {
                    indent + 2 + 2 * usize::from(line.starts_with('-'))
                }
                0 => indent + 1,
                1..=3 => indent.saturating_sub(2 * (next() % 3) as usize),
                _ => indent,
            };
        }
        if let Some(t) = fast(&text) {
            read += 1;
            let f = full(&text).unwrap_or_else(|e| panic!("full refuses {text:?}: {e}"));
            assert_eq!(format!("{t:?}"), format!("{f:?}"), "{text:?}");
        }
    }
    assert!(
        read > 4_000,
        "only {read} generated documents were read here"
    );
}
