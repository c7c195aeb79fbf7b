//! An error line has a length: every value and every path it names is cut (a path keeps its start and
//! its end and says how much was cut), so one error stays one readable line, however long the
//! author made the names.

use crate::util::*;

/// The line's length without the file's name: at most about 300 bytes.
fn readable(text: &str, must: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "host-names.yml", text);
    let shown = p.to_str().unwrap();
    let r = run(&["check", shown]);
    assert_eq!(r.code, 8, "{}", &r.stderr[..r.stderr.len().min(2000)]);
    let line = r.error_line();
    let rest = line.len() - shown.len();
    assert!(rest <= 300, "{rest} bytes: {line}");
    for m in must {
        assert!(line.contains(m), "want {m:?} in {line}");
    }
}

#[test]
fn a_200_kb_group_name_as_an_explicit_key_is_cut() {
    let big = "g".repeat(200_000);
    readable(
        &format!("all:\n  children:\n    ? {big}\n    : {{children: [a]}}\n"),
        &["(200000 bytes)", "children is a mapping"],
    );
}

#[test]
fn a_200_kb_host_key_is_cut() {
    // An explicit key: YAML refuses an implicit key over 1024 characters.
    let big = "1".repeat(200_000);
    readable(
        &format!("all:\n  hosts:\n    ? '{big}'\n    : {{}}\n"),
        &["(200000 bytes)", "is not an IPv4 address"],
    );
    readable(
        &format!("all:\n  hosts:\n    ? '{big}/24'\n    : {{}}\n"),
        &["(200003 bytes)", "is a CIDR"],
    );
}

#[test]
fn a_vm_hosts_address_of_200_kb_with_a_mask_is_cut() {
    let big = "1".repeat(200_000);
    readable(
        &format!(
            "all:\n  hosts: {{10.10.10.10: {{}}}}\n  vars:\n    vm_hosts: [{{address: '{big}/24', names: [x]}}]\n"
        ),
        &["(200003 bytes)", "vm_hosts[0].address"],
    );
}

#[test]
fn thirty_nested_groups_of_1000_characters_are_cut_in_the_middle() {
    let mut text = String::from("all:\n");
    let mut indent = String::from("  ");
    for i in 0..30 {
        text.push_str(&format!(
            "{indent}children:\n{indent}  n{i:02}{}:\n",
            "x".repeat(997)
        ));
        indent.push_str("    ");
    }
    text.push_str(&format!("{indent}children: [a]\n"));
    // The start (all.children."n00…) and the end (…n29…".children) are kept.
    readable(
        &text,
        &["all.children.\"n00", "bytes cut)", ".children: is a list"],
    );
}
