//! The live generation as the route sees it: the newest good generation in the daemon's state dir,
//! for the reverse zone its /24 names (routed beside the zone) and the canonical names its PTRs give
//! (what the reverse lookups must return). Route runs as root while the files belong to the daemon's
//! user, so they are checked against the state dir's owner, with every other rule of the store.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::input::records::{self, Ptr, Record};
use crate::store;

/// Where the generations are kept, below a state dir (the store's own layout).
const GENERATIONS: &str = "generations";

/// What the route takes from the live generation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Live {
    pub state_dir: PathBuf,
    /// The first served zone (where a single label goes).
    pub zone: String,
    /// Every forward zone the generation serves, `zone` first.
    pub zones: Vec<String>,
    pub serial: u32,
    /// `C.B.A.in-addr.arpa`; `None` for the empty zone.
    pub reverse: Option<String>,
    pub ptr: Vec<Ptr>,
    /// The served names, sorted by name (lowercase, without the trailing dot): what the hosts
    /// findings compare with and the default name the native check resolves.
    pub records: Vec<Record>,
}

/// The newest generation of `state_dir` that checks out; Ok(None) when it has none (nothing loaded
/// yet, or a state dir that does not exist).
pub fn read(state_dir: &Path) -> Result<Option<Live>, String> {
    let owner = match std::fs::metadata(state_dir) {
        Ok(m) if m.is_dir() => m.uid(),
        Ok(_) => return Err(format!("{} is not a directory", state_dir.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", state_dir.display())),
    };
    let dir = state_dir.join(GENERATIONS);
    // As the store refuses them: a directory others can write to holds nothing the route trusts.
    for d in [state_dir, dir.as_path()] {
        if let Ok(m) = std::fs::symlink_metadata(d)
            && (m.mode() & 0o022 != 0 || m.uid() != owner)
        {
            return Err(format!(
                "{} is writable by others or not owned by uid {owner}: its generations are not read",
                d.display()
            ));
        }
    }
    let rd = match std::fs::read_dir(&dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot list {}: {e}", dir.display())),
    };
    let mut files: Vec<(u32, PathBuf)> = rd
        .flatten()
        .filter_map(|e| {
            let (serial, _) = e.file_name().to_str().and_then(store::parse_file_name)?;
            Some((serial, e.path()))
        })
        .collect();
    files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    Ok(files
        .into_iter()
        .find_map(|(_, p)| store::check_file_of(&p, owner).ok())
        .map(|g| Live {
            state_dir: state_dir.to_path_buf(),
            zone: g.zone.clone(),
            zones: served_zones(&g),
            serial: g.serial,
            reverse: records::reverse_zone(&g.records),
            ptr: g.ptr,
            records: g.records,
        }))
}

/// The forward zones a generation serves: its `zones` list, or its one `zone` for a generation of one
/// zone (which records no list, as the releases that served one zone wrote it). The one place the
/// route reads it.
fn served_zones(g: &crate::zone::generation::Generation) -> Vec<String> {
    if g.zones.is_empty() {
        vec![g.zone.clone()]
    } else {
        g.zones.clone()
    }
}

/// Why there is no reverse zone to route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoLive {
    /// No `--state-dir`, and no running daemon's state dir at the default places.
    NoStateDir,
    /// The state dir has no generation with addresses (nothing loaded yet, or the empty zone).
    Empty(PathBuf),
    /// Its newest generation serves none of the route's zones.
    OtherZone {
        dir: PathBuf,
        zones: Vec<String>,
    },
    Unreadable(String),
}

impl NoLive {
    /// The plan's note: why only the forward `zones` are routed, and what to do about it.
    pub fn note(&self, zones: &[String]) -> String {
        let zone = zones.join(", ");
        let only = format!("routing only {zone}");
        match self {
            NoLive::NoStateDir => format!(
                "{only}: no state dir of a running daemon found, so no reverse zone is known (give --state-dir DIR, the daemon's)"
            ),
            NoLive::Empty(d) => format!(
                "{only}: no generation with addresses in {} yet (the empty zone has no reverse zone); run route install again after the first load to route the reverse zone too",
                d.display()
            ),
            NoLive::OtherZone { dir, zones: other } => format!(
                "{only}: the newest generation in {} serves {}, none of the routed zones",
                dir.display(),
                other.join(", ")
            ),
            NoLive::Unreadable(e) => format!("{only}: {e}"),
        }
    }
}

/// The live generation of `state_dir` serving any of `zones`, with a reverse zone; else why there is
/// none.
pub fn for_zones(state_dir: Option<&Path>, zones: &[String]) -> Result<Live, NoLive> {
    let dir = state_dir.ok_or(NoLive::NoStateDir)?;
    match read(dir) {
        Ok(Some(l)) if !l.zones.iter().any(|z| zones.contains(z)) => Err(NoLive::OtherZone {
            dir: dir.to_path_buf(),
            zones: l.zones,
        }),
        Ok(Some(l)) if l.reverse.is_some() => Ok(l),
        Ok(_) => Err(NoLive::Empty(dir.to_path_buf())),
        Err(e) => Err(NoLive::Unreadable(e)),
    }
}

/// The zones the live generation serves that a route carrying `routed` does not: each is answered
/// by the daemon but its names leave this host for the upstream ("served, not routed").
pub fn unrouted(live: &Live, routed: &[String]) -> Vec<String> {
    live.zones
        .iter()
        .filter(|z| !routed.contains(z))
        .cloned()
        .collect()
}

/// The reverse zone a route carries, compared with the live generation's: Ok(()) when they agree,
/// else why not (for `route status`'s drift item).
pub fn compare(routed: Option<&str>, live: Option<&str>, zone: &str) -> Result<(), String> {
    match (routed, live) {
        (a, b) if a == b => Ok(()),
        (None, Some(l)) => Err(format!(
            "the route carries only {zone}, but the live generation's addresses are in {l}: reverse lookups of them leave this host"
        )),
        (Some(r), None) => Err(format!(
            "the route carries {r}, but the live generation has no addresses (no reverse zone)"
        )),
        (Some(r), Some(l)) => Err(format!(
            "the route carries {r}, but the live generation's addresses moved to {l}"
        )),
        (None, None) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_state_dir_or_no_generation_reads_as_none_and_bad_files_are_skipped() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(read(&d.path().join("missing")), Ok(None));
        assert_eq!(read(d.path()), Ok(None));
        let gens = d.path().join(GENERATIONS);
        std::fs::create_dir(&gens).unwrap();
        // Named like a generation, but not one: skipped, never an error.
        std::fs::write(gens.join("gen-0000000002-0123456789abcdef.json"), "{}").unwrap();
        std::fs::write(gens.join(".tmp-1"), "x").unwrap();
        assert_eq!(read(d.path()), Ok(None));
        assert_eq!(
            for_zones(Some(d.path()), &["pigsty.test".into()]),
            Err(NoLive::Empty(d.path().to_path_buf()))
        );
        assert_eq!(
            for_zones(None, &["pigsty.test".into()]),
            Err(NoLive::NoStateDir)
        );
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&gens, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = read(d.path()).unwrap_err();
        assert!(e.contains("writable by others"), "{e}");
    }

    #[test]
    fn the_routed_reverse_zone_is_compared_with_the_live_one() {
        let z = "pigsty.test";
        assert_eq!(compare(None, None, z), Ok(()));
        assert_eq!(
            compare(
                Some("10.10.10.in-addr.arpa"),
                Some("10.10.10.in-addr.arpa"),
                z
            ),
            Ok(())
        );
        for (routed, live) in [
            (None, Some("10.10.10.in-addr.arpa")),
            (Some("10.10.10.in-addr.arpa"), None),
            (Some("10.10.10.in-addr.arpa"), Some("12.10.10.in-addr.arpa")),
        ] {
            let e = compare(routed, live, z).unwrap_err();
            for part in routed.into_iter().chain(live) {
                assert!(e.contains(part), "{e}");
            }
        }
    }
}
