use super::*;

fn p(text: &str) -> HostsFile {
    parse(text.as_bytes()).unwrap()
}

fn err(text: &str) -> HostsError {
    parse(text.as_bytes()).unwrap_err()
}

/// (line number, class, names) of every answering line.
fn shape(f: &HostsFile) -> Vec<(usize, LineClass, Vec<&str>)> {
    f.lines
        .iter()
        .map(|l| {
            (
                l.number,
                l.class,
                l.names.iter().map(String::as_str).collect(),
            )
        })
        .collect()
}

const MIXED: &str = "127.0.0.1\tlocalhost
::1     localhost ip6-localhost

# pigsty dns records
10.10.10.10 meta pigsty c.pigsty g.pigsty
10.10.10.2  pg-meta  # sandbox vip for pg-meta
10.10.10.11 node-1   # sandbox node node-1

10.10.10.12 mine
10.9.9.9 legacy # pigsty dns
# barn:begin
10.10.10.10\tmeta.pigsty.test pg-meta.pigsty.test
10.10.10.11\tnode-1.pigsty.test
# barn:end
192.168.1.5 nas
";

#[test]
fn both_classes_of_block_and_the_rest_are_told_apart_with_their_line_numbers() {
    use LineClass::*;
    let f = p(MIXED);
    assert_eq!(
        shape(&f),
        vec![
            (1, Other, vec!["localhost"]),
            (2, Other, vec!["localhost", "ip6-localhost"]),
            (5, Pigsty, vec!["meta", "pigsty", "c.pigsty", "g.pigsty"]),
            (6, Pigsty, vec!["pg-meta"]),
            (7, Pigsty, vec!["node-1"]),
            // The blank line ended the section; the `# pigsty dns` comment marks line 10 alone.
            (9, Other, vec!["mine"]),
            (10, Pigsty, vec!["legacy"]),
            (12, Barn, vec!["meta.pigsty.test", "pg-meta.pigsty.test"]),
            (13, Barn, vec!["node-1.pigsty.test"]),
            (15, Other, vec!["nas"]),
        ]
    );
    assert_eq!(f.barn, Some(BarnBlock { begin: 11, end: 14 }));
    assert_eq!(
        f.lines[3].text,
        "10.10.10.2  pg-meta  # sandbox vip for pg-meta"
    );
    assert!(f.skipped.is_empty());
}

#[test]
fn the_pigsty_section_ends_at_a_whole_line_comment_or_a_barn_marker_but_not_an_inline_one() {
    use LineClass::*;
    let f = p("# Pigsty DNS Records\n10.10.10.10 meta # the admin node\n# my own\n10.10.10.3 x\n");
    assert_eq!(
        shape(&f),
        vec![(2, Pigsty, vec!["meta"]), (4, Other, vec!["x"])]
    );
    let f = p(
        "# pigsty dns records\n10.10.10.10 meta\n# barn:begin\n10.10.10.11\tb\n# barn:end\n10.10.10.12 c\n",
    );
    assert_eq!(
        shape(&f),
        vec![
            (2, Pigsty, vec!["meta"]),
            (4, Barn, vec!["b"]),
            (6, Other, vec!["c"])
        ]
    );
    // A skipped line inside the section does not end it; `# pigsty dns` alone is not the header.
    let f = p("# pigsty dns records\nbogus x\n10.10.10.2 pg-meta\n# pigsty dns\n10.10.10.3 y\n");
    assert_eq!(
        shape(&f),
        vec![(3, Pigsty, vec!["pg-meta"]), (5, Other, vec!["y"])]
    );
    // Only the exact comment marks a single line: a longer one does not.
    let f = p("10.9.9.9 a # pigsty dns\n10.9.9.8 b #pigsty dns\n10.9.9.7 c # pigsty dns vip\n");
    assert_eq!(
        shape(&f),
        vec![
            (1, Pigsty, vec!["a"]),
            (2, Pigsty, vec!["b"]),
            (3, Other, vec!["c"])
        ]
    );
}

#[test]
fn barn_markers_broken_every_way_are_errors_with_their_line() {
    use HostsErrorKind::*;
    for (text, kind, line, needle) in [
        (
            "# barn:begin\n10.10.10.10\tmeta\n# barn:begin\n# barn:end\n",
            NestedBegin,
            3,
            "begun on line 1",
        ),
        (
            "# barn:begin\n# barn:end\n1.2.3.4 x\n# barn:begin\n# barn:end\n",
            DuplicateBlock,
            4,
            "lines 1-2",
        ),
        ("1.2.3.4 x\n# barn:end\n", EndWithoutBegin, 2, "without"),
        (
            "1.2.3.4 x\n# barn:begin\n10.10.10.10\tmeta\n",
            Unterminated,
            2,
            "unterminated",
        ),
        (
            "# barn:begin v2\n# barn:end\n",
            MalformedMarker,
            1,
            "barn:begin v2",
        ),
        (" # barn:begin\n# barn:end\n", MalformedMarker, 1, "neither"),
        ("# barn:\n", MalformedMarker, 1, "neither"),
        ("10.1.1.1 a # barn:owned\n", MalformedMarker, 1, "neither"),
        (
            "# barn:begin\r\n# barn:end\r\n",
            MalformedMarker,
            1,
            "carriage return",
        ),
        ("# barn:begin\n# barn:end \n", MalformedMarker, 2, "neither"),
    ] {
        let e = err(text);
        assert_eq!((e.kind, e.line), (kind, Some(line)), "{text:?}: {e}");
        assert!(e.to_string().contains(needle), "{text:?}: {e}");
        assert!(e.to_string().starts_with(&format!("line {line}: ")), "{e}");
        assert!(e.next().contains("barn hosts uninstall"), "{}", e.next());
    }
    // `# BARN:begin` is not Barn's (its rule is case-sensitive): an ordinary comment.
    assert_eq!(p("# BARN:begin\n1.2.3.4 x\n").barn, None);
}

#[test]
fn crlf_tabs_vertical_tabs_and_comments_split_as_glibc_splits() {
    let f = p("10.10.10.2\tpg-meta\r\n10.10.10.3 \x0b a\x0cb\r\n10.10.10.4 c#d e\r\n\r\n#x\r\n");
    assert_eq!(
        shape(&f),
        vec![
            (1, LineClass::Other, vec!["pg-meta"]),
            (2, LineClass::Other, vec!["a", "b"]),
            (3, LineClass::Other, vec!["c"]),
        ]
    );
    // The text is what a user deletes: without the CR, with the tab.
    assert_eq!(f.lines[0].text, "10.10.10.2\tpg-meta");
    // A CRLF Pigsty section still works: the CR is a separator, not part of the comment.
    let f = p("# pigsty dns records\r\n10.10.10.10 meta\r\n\r\n10.9.9.9 x # pigsty dns\r\n");
    assert_eq!(
        shape(&f),
        vec![
            (2, LineClass::Pigsty, vec!["meta"]),
            (4, LineClass::Pigsty, vec!["x"])
        ]
    );
}

#[test]
fn ipv6_lines_are_read_and_bad_addresses_skipped_as_glibc_skips_them() {
    let f = p(
        "::1 localhost\nfe80::1%eth0 zoned\n::ffff:10.10.10.11 node-1\n2001:db8::5 six\n10.1 short\n010.10.10.1 octal\n999.1.1.1 big\n10.10.10.9\nnode-9 10.10.10.9\n",
    );
    let names: Vec<_> = f.lines.iter().map(|l| l.names[0].as_str()).collect();
    assert_eq!(names, ["localhost", "node-1", "six"]);
    assert_eq!(f.lines[0].ipv4(), Some(Ipv4Addr::LOCALHOST));
    assert_eq!(f.lines[1].ipv4(), Some(Ipv4Addr::new(10, 10, 10, 11)));
    assert_eq!(f.lines[2].ipv4(), None);
    let skipped: Vec<_> = f.skipped.iter().map(|s| (s.number, s.reason)).collect();
    assert_eq!(
        skipped,
        [
            (2, SkipReason::BadAddress),
            (5, SkipReason::BadAddress),
            (6, SkipReason::BadAddress),
            (7, SkipReason::BadAddress),
            (8, SkipReason::NoName),
            (9, SkipReason::BadAddress),
        ]
    );
}

#[test]
fn a_nul_byte_is_an_error_naming_its_line() {
    let e = err("1.2.3.4 a\n1.2.3.4 b\0\n");
    assert_eq!((e.kind, e.line), (HostsErrorKind::Nul, Some(2)));
    assert!(e.reason.contains("byte 19"), "{e}");
}

#[test]
fn an_empty_file_and_one_without_a_final_newline_parse() {
    assert_eq!(p(""), HostsFile::default());
    assert_eq!(p("1.2.3.4 a").lines.len(), 1);
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn read_takes_exactly_one_mib_and_refuses_one_byte_more() {
    let d = tempfile::tempdir().unwrap();
    let mut bytes = b"10.10.10.2 pg-meta\n".to_vec();
    bytes.resize(MAX_BYTES, b'\n');
    let f = read(&write(d.path(), "max", &bytes)).unwrap().unwrap();
    assert_eq!(f.lines.len(), 1);
    bytes.push(b'\n');
    let e = read(&write(d.path(), "over", &bytes)).unwrap_err();
    assert_eq!(e.kind, HostsErrorKind::TooLarge);
    assert!(e.reason.contains("1048576"), "{e}");
}

#[test]
fn read_of_a_missing_file_is_none_and_a_nul_fails_through_parse() {
    let d = tempfile::tempdir().unwrap();
    assert_eq!(read(&d.path().join("none")), Ok(None));
    let e = read(&write(d.path(), "nul", b"1.2.3.4 a\0")).unwrap_err();
    assert_eq!(e.kind, HostsErrorKind::Nul);
}

#[test]
fn read_follows_a_symlink_to_a_regular_file_and_refuses_directories_and_fifos() {
    let d = tempfile::tempdir().unwrap();
    let real = write(d.path(), "real", b"10.10.10.2 pg-meta\n");
    let link = d.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let got = read(&link);
    if cfg!(target_os = "linux") {
        assert_eq!(got.unwrap().unwrap().lines[0].names, ["pg-meta"]);
    } else {
        assert_eq!(got.unwrap_err().kind, HostsErrorKind::NotRegular);
    }

    let dir = d.path().join("dir");
    std::fs::create_dir(&dir).unwrap();
    let to_dir = d.path().join("to-dir");
    std::os::unix::fs::symlink(&dir, &to_dir).unwrap();
    for (path, needle) in [(&dir, "a directory"), (&to_dir, "a symlink to")] {
        let e = read(path).unwrap_err();
        assert_eq!(e.kind, HostsErrorKind::NotRegular, "{e}");
        assert!(e.reason.contains(needle), "{e}");
    }

    // A FIFO with no writer: a blocking open would hang here for ever.
    let fifo = d.path().join("fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let e = read(&fifo).unwrap_err();
    assert_eq!(e.kind, HostsErrorKind::NotRegular);
    assert!(e.reason.contains("a FIFO"), "{e}");
    let to_fifo = d.path().join("to-fifo");
    std::os::unix::fs::symlink(&fifo, &to_fifo).unwrap();
    assert_eq!(read(&to_fifo).unwrap_err().kind, HostsErrorKind::NotRegular);

    // A dangling symlink is not "no hosts file": it is one that cannot be read.
    let dangling = d.path().join("dangling");
    std::os::unix::fs::symlink(d.path().join("gone"), &dangling).unwrap();
    assert_eq!(
        read(&dangling).unwrap_err().kind,
        HostsErrorKind::Unreadable
    );
}
