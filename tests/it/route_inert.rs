//! The escape walk over the route commands (issue 33 item 2): a hosts file and an nsswitch.conf full of
//! terminal escapes under `--root`, then `route status`, `route install --dry-run` and `route uninstall
//! --dry-run`, text and JSON: nothing reaches the terminal raw, and the hosts line is still shown
//! (escaped), so the user can find it.

use crate::util::*;

#[test]
fn escape_walk_over_route_status_install_and_uninstall() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("root");
    std::fs::create_dir_all(root.join("etc")).unwrap();
    std::fs::write(
        root.join("etc/hosts"),
        format!(
            "127.0.0.1 localhost\n10.10.10.10 {ESCAPES}pg-meta.pigsty.test meta.pigsty.test # {ESCAPES}\n10.10.10.11\t\u{202e}evil.pigsty.test\n# {ESCAPES}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        root.join("etc/nsswitch.conf"),
        format!("hosts: files {ESCAPES} resolve [!UNAVAIL=return] dns\n"),
    )
    .unwrap();
    std::fs::write(root.join("etc/resolv.conf"), "nameserver 127.0.0.53\n").unwrap();
    let home = t.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let r = root.to_str().unwrap();
    let env = [("HOME", home.to_str().unwrap())];
    let mut shown = false;
    for json in [false, true] {
        let j: &[&str] = if json { &["--json"] } else { &[] };
        let runs = [
            vec!["route", "status", "--root", r],
            vec!["route", "install", "--dry-run", "--root", r],
            vec![
                "route",
                "install",
                "--dry-run",
                "--adapter",
                "nm-dnsmasq",
                "--root",
                r,
            ],
            vec![
                "route",
                "install",
                "--dry-run",
                "--adapter",
                "resolved-delegate",
                "--root",
                r,
            ],
            vec!["route", "uninstall", "--dry-run", "--root", r],
        ];
        for args in runs {
            let out = run_env(&[&args[..], j].concat(), &env);
            assert_run_inert(&args.join(" "), &out);
            shown |= out.stdout.contains("OWNED") || out.stderr.contains("OWNED");
        }
    }
    assert!(shown, "no command showed the hosts line at all");
}
