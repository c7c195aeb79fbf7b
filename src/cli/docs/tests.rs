use super::*;

/// Every visible subcommand at every depth, as its path of names (`["route", "install"]`); clap's
/// own `help` subcommand is left out (the man pages have none).
fn paths(cmd: &clap::Command, prefix: &[String], out: &mut Vec<Vec<String>>) {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        if sub.get_name() == "help" {
            continue;
        }
        let mut p = prefix.to_vec();
        p.push(sub.get_name().to_string());
        out.push(p.clone());
        paths(sub, &p, out);
    }
}

/// The zsh function body that lists the commands under `parents`.
fn zsh_commands<'a>(zsh: &'a str, parents: &[String]) -> &'a str {
    let mut name = String::from("_pigsty-dns");
    for p in parents {
        name.push_str("__subcmd__");
        name.push_str(p);
    }
    let head = format!("\n{name}_commands() {{\n");
    zsh.find(&head)
        .map(|i| &zsh[i..])
        .map(|rest| &rest[..rest.find("\n}\n").unwrap_or(rest.len())])
        .unwrap_or("")
}

/// What the generated outputs miss of `cmd`'s tree: one line per (output, subcommand) pair. The
/// outputs are generated from `generated` (the real definitions), checked against `cmd`'s tree.
fn missing(cmd: &clap::Command, generated: clap::Command) -> Vec<String> {
    use clap_complete::Shell;
    let bash = completion_script(Shell::Bash, generated.clone());
    let zsh = completion_script(Shell::Zsh, generated.clone());
    let fish = completion_script(Shell::Fish, generated.clone());
    let pages = man_pages(generated).expect("render the man pages");
    let page = |name: &str| {
        pages
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, roff)| String::from_utf8_lossy(roff).into_owned())
    };
    let mut all = Vec::new();
    paths(cmd, &[], &mut all);
    assert!(all.len() > 10, "the tree walk found too little: {all:?}");
    let mut out = Vec::new();
    for path in &all {
        let (last, parents) = path.split_last().expect("a path has a name");
        let shown = path.join(" ");
        // bash: the case label that moves into the subcommand ("pigsty__dns__subcmd__route,install)")
        let mut key = String::from("pigsty__dns");
        for p in parents {
            key.push_str("__subcmd__");
            key.push_str(p);
        }
        if !bash.contains(&format!("{key},{last})")) {
            out.push(format!("bash: {shown}"));
        }
        if !zsh_commands(&zsh, parents).contains(&format!("\n'{last}:")) {
            out.push(format!("zsh: {shown}"));
        }
        let cond = match parents.last() {
            None => "__fish_pigsty_dns_needs_command\"".to_string(),
            Some(p) => format!("__fish_pigsty_dns_using_subcommand {p}; and not"),
        };
        let offered = format!("-f -a \"{last}\"");
        if !fish
            .lines()
            .any(|l| l.contains(&cond) && l.contains(&offered))
        {
            out.push(format!("fish: {shown}"));
        }
        let name = format!("{BIN_NAME}-{}.1", path.join("-"));
        let parent = if parents.is_empty() {
            format!("{BIN_NAME}.1")
        } else {
            format!("{BIN_NAME}-{}.1", parents.join("-"))
        };
        let listed = format!("{}(1)", name.trim_end_matches(".1").replace('-', "\\-"));
        if page(&name).is_none() {
            out.push(format!("man page {name}: {shown}"));
        }
        if !page(&parent).is_some_and(|roff| roff.contains(&listed)) {
            out.push(format!("man page {parent} does not list {shown}"));
        }
    }
    out
}

#[test]
fn completions_and_man_pages_cover_every_subcommand() {
    let cmd = Cli::command();
    let miss = missing(&cmd, Cli::command());
    assert!(miss.is_empty(), "{miss:#?}");
}

#[test]
fn a_subcommand_the_outputs_lack_is_reported_in_each() {
    // The tree gains a subcommand (and a nested one) the generated outputs do not have.
    let cmd = Cli::command()
        .subcommand(clap::Command::new("extra"))
        .mut_subcommand("route", |r| r.subcommand(clap::Command::new("extra")));
    let mut miss = missing(&cmd, Cli::command());
    miss.sort();
    assert_eq!(
        miss,
        [
            "bash: extra",
            "bash: route extra",
            "fish: extra",
            "fish: route extra",
            "man page pigsty-dns-extra.1: extra",
            "man page pigsty-dns-route-extra.1: route extra",
            "man page pigsty-dns-route.1 does not list route extra",
            "man page pigsty-dns.1 does not list extra",
            "zsh: extra",
            "zsh: route extra",
        ]
    );
}

#[test]
fn man_writes_every_page_and_names_the_version() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("man1");
    let report = man(&out).expect("man");
    let pages = man_pages(Cli::command()).expect("pages");
    for (name, roff) in &pages {
        assert_eq!(&std::fs::read(out.join(name)).expect(name), roff, "{name}");
        assert!(report.text.contains(name), "{}", report.text);
    }
    let top = String::from_utf8_lossy(&pages[0].1).into_owned();
    assert_eq!(pages[0].0, "pigsty-dns.1");
    // .TH title section date source manual: five fields, the date in its place
    let th = top.lines().find(|l| l.starts_with(".TH ")).expect(".TH");
    let date = Some(env!("PIGSTY_DNS_DATE"))
        .filter(|d| !d.is_empty())
        .map_or("\" \"".to_string(), str::to_string);
    assert_eq!(
        th,
        format!(
            ".TH pigsty-dns 1 {date} \"pigsty-dns {}\" \"pigsty-dns manual\"",
            env!("PIGSTY_DNS_VERSION")
        )
    );
}

#[test]
fn man_into_an_unwritable_place_is_one_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").expect("write");
    let e = man(&file.join("man1")).expect_err("a file is not a directory");
    assert_eq!(e.class.exit_code(), 1);
    assert!(e.message.contains("a-file"), "{}", e.message);
}
