//! Shell completions and man pages generated from the clap definitions (binary-only): `pigsty-dns
//! completions SHELL` prints a script, `pigsty-dns man DIR` writes `pigsty-dns.1` and one
//! page per subcommand (`pigsty-dns-route-install.1`, …). Packaging (deploy/debian/build-deb.sh, the
//! Homebrew formula) runs these on the built binary, so no hand-written copy can drift from the code.

use std::path::{Path, PathBuf};

use clap::CommandFactory;
use pigsty_dns::error::{AppError, Class};
use pigsty_dns::output::Report;
use pigsty_dns::sys::fs::{WriteOptions, write_atomic};

use crate::args::Cli;

pub const BIN_NAME: &str = "pigsty-dns";

/// The completion script for `shell`, from `cmd` (the real one: `Cli::command()`).
pub fn completion_script(shell: clap_complete::Shell, mut cmd: clap::Command) -> String {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, BIN_NAME, &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

/// Every man page of `cmd`: (file name, roff), the top page first, then one per visible subcommand at
/// every depth (as clap_mangen's `generate_to` names them, but in memory so they can be written
/// atomically).
pub fn man_pages(cmd: clap::Command) -> Result<Vec<(String, Vec<u8>)>, std::io::Error> {
    fn walk(cmd: clap::Command, out: &mut Vec<(String, Vec<u8>)>) -> Result<(), std::io::Error> {
        let subs: Vec<clap::Command> = cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .cloned()
            .collect();
        // every page's footer names the program and its version (clap gives subcommands none)
        // an empty date would vanish from the .TH line and shift the fields after it: " " stays one
        let date = Some(env!("PIGSTY_DNS_DATE")).filter(|d| !d.is_empty());
        let man = clap_mangen::Man::new(cmd)
            .date(date.unwrap_or(" "))
            .source(format!("{BIN_NAME} {}", env!("PIGSTY_DNS_VERSION")))
            .manual("pigsty-dns manual");
        let mut roff = Vec::new();
        man.render(&mut roff)?;
        out.push((man.get_filename(), roff));
        for sub in subs {
            walk(sub, out)?;
        }
        Ok(())
    }
    let mut cmd = cmd.disable_help_subcommand(true);
    // build() names the subcommands for their pages: "pigsty-dns-route-install"
    cmd.build();
    let mut out = Vec::new();
    walk(cmd, &mut out)?;
    Ok(out)
}

pub fn completions(shell: clap_complete::Shell) -> Report {
    Report::same(completion_script(shell, Cli::command()))
}

/// `pigsty-dns man DIR`: every page into DIR (created if missing), each written atomically.
pub fn man(dir: &Path) -> Result<Report, AppError> {
    let pages = man_pages(Cli::command()).map_err(|e| {
        AppError::new(
            Class::Runtime,
            format!("cannot render the man pages: {e}"),
            "report this as a bug",
        )
    })?;
    let opts = WriteOptions {
        create_parents: true,
        ..WriteOptions::mode(0o644)
    };
    let mut written: Vec<PathBuf> = Vec::new();
    for (name, roff) in &pages {
        let path = dir.join(name);
        write_atomic(&path, roff, &opts).map_err(|e| {
            AppError::new(
                Class::Runtime,
                format!(
                    "cannot write {}: {}",
                    pigsty_dns::output::text::path(&path),
                    e.source
                ),
                "give a writable directory: pigsty-dns man DIR",
            )
        })?;
        written.push(path);
    }
    let text: String = written
        .iter()
        .map(|p| format!("wrote {}\n", pigsty_dns::output::text::path(p)))
        .collect();
    Ok(Report::new(
        text,
        serde_json::json!({ "written": written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>() }),
    ))
}

#[cfg(test)]
mod tests;
