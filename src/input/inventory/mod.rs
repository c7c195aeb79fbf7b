//! The Barn/Pigsty inventory shapes and Barn's derivation of node names, aliases, `vm_skip` and
//! `vm_hosts`. Only the keys Barn reads are looked at; every other Pigsty variable is opaque, except
//! in a Pigsty config, whose literal host-access view (`inventory/pigsty/`) reads the variables of
//! Pigsty's DNS rules. The group walk and its variable lookup are in `inventory/walk.rs`, `vm_hosts`
//! in `inventory/vm_hosts.rs`, the record categories in `inventory/category.rs`.

use std::borrow::Cow;
use std::net::Ipv4Addr;

pub use crate::input::problems::InputError;
use crate::input::problems::Problems;
use crate::input::yaml::{self, Yaml};

mod category;
pub mod pigsty;
mod vm_hosts;
mod walk;
pub use category::{Category, Reading, View};
use vm_hosts::parse_vm_hosts;
use walk::{Found, Walk, lookup};

/// Barn's limit on the inventory file.
pub const MAX_INPUT_BYTES: usize = 4 * 1024 * 1024;
/// Depth of a host's own vars: deeper than any group.
const HOST_DEPTH: usize = 1 << 20;

/// A name as given in the input, with the inventory path it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub name: String,
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    pub address: Ipv4Addr,
    /// Path of the host's first appearance, e.g. `all.children.pg-meta.hosts[10.10.10.10]`.
    pub origin: String,
    pub skip: bool,
    /// `None` only for a skipped host, whose name is never derived.
    pub node_name: Option<Named>,
    pub aliases: Vec<Named>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VmHost {
    pub address: Ipv4Addr,
    pub source: String,
    pub names: Vec<Named>,
}

/// A name the host-access view derives from a Pigsty config, with its category-tagged source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Derived {
    pub name: String,
    pub address: Ipv4Addr,
    /// `<category>: <inventory path or role default> (<what>)`.
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inventory {
    /// In order of first appearance.
    pub hosts: Vec<Host>,
    pub vm_hosts: Vec<VmHost>,
    /// The host-access view's names beyond the identities and `vm_hosts` (empty for a projection).
    pub derived: Vec<Derived>,
    pub view: View,
    /// What the reader should know about the view (never an error).
    pub notes: Vec<String>,
}

/// Parses the text of a `host-names.yml` (or a whole Pigsty inventory), choosing the view by what
/// the file holds ([`Reading::Auto`]).
pub fn parse(text: &str) -> Result<Inventory, InputError> {
    parse_as(text, &Reading::Auto)
}

/// [`parse`] with the view chosen by the caller; the first problem of the file, if it has any.
pub fn parse_as(text: &str, reading: &Reading) -> Result<Inventory, InputError> {
    let mut problems = Problems::default();
    match parse_into(text, reading, &mut problems) {
        Some(inv) if problems.is_empty() => Ok(inv),
        _ => Err(problems.first().unwrap_or_else(|| {
            InputError::new("", "could not be read", "run check on it for the reason")
        })),
    }
}

/// [`parse_as`] that adds every problem of the file to `problems`. `None` when the read stopped
/// (`problems` says why); else the inventory, whose rules found `problems` (if any) without leaving
/// anything in it that the record rules would refuse because of them: a host that could not be read
/// stops the read (the address rules count every host), a derived name that clashes is left out.
pub fn parse_into(text: &str, reading: &Reading, problems: &mut Problems) -> Option<Inventory> {
    let doc = problems.take(document(text))?;
    let walk = problems.take(walked(&doc))?;
    let mut hosts = Vec::with_capacity(walk.hosts.len());
    // Every host is read, so each bad one is listed.
    for h in &walk.hosts {
        if let Some(host) = problems.take(resolve_host(h)) {
            hosts.push(host);
        }
    }
    if hosts.len() < walk.hosts.len() {
        return None;
    }
    let pigsty = match reading {
        Reading::IdentityOnly => false,
        Reading::Auto | Reading::Entry(_) => pigsty::is_pigsty_config(&walk.hosts),
    };
    let (view, derived, notes) = if pigsty {
        problems.take(pigsty::groups_once(&walk))?;
        let skipped: Vec<bool> = hosts.iter().map(|h| h.skip).collect();
        let v = pigsty::derive(&walk.hosts, &skipped, reading.entry(), problems)?;
        for h in &mut hosts {
            tag_identity(h);
        }
        (View::HostAccess, v.derived, v.notes)
    } else {
        (View::Projection, Vec::new(), Vec::new())
    };
    drop(walk);
    // The vm_hosts list is taken out of the tree: its (up to 100,000) names move, not copy.
    let mut doc = doc;
    let vm_hosts = ["all", "vars", "vm_hosts"]
        .iter()
        .try_fold(&mut doc, |y, key| get_mut(y, key))
        .map_or(Yaml::Null, |v| std::mem::replace(v, Yaml::Null));
    let mut vm_hosts = match vm_hosts {
        Yaml::Null => Vec::new(),
        v => problems.take(parse_vm_hosts(v, "all.vars.vm_hosts"))?,
    };
    if view == View::HostAccess {
        for n in vm_hosts.iter_mut().flat_map(|v| v.names.iter_mut()) {
            n.source = Category::Explicit.tag(&n.source);
        }
    }
    Some(Inventory {
        hosts,
        vm_hosts,
        derived,
        view,
        notes,
    })
}

/// The file as one YAML document whose root is a mapping, within Barn's size limit.
fn document(text: &str) -> Result<Yaml, InputError> {
    if text.len() > MAX_INPUT_BYTES {
        return Err(InputError::new(
            "",
            format!(
                "is {} bytes; an inventory has at most {MAX_INPUT_BYTES} bytes (4 MiB)",
                text.len()
            ),
            "split the records or remove what pigsty-dns does not read",
        ));
    }
    let doc = yaml::parse(text).map_err(|e| {
        if e.contains(yaml::LIMIT) {
            // Valid YAML, only larger than the reader takes (100,000 hosts with a variable each).
            return InputError::new(
                "",
                format!("is past a limit of the YAML reader: {e}"),
                "split the hosts into files of fewer values, or list names under vm_hosts (one \
                 value per name); the limit is fixed",
            );
        }
        InputError::new(
            "",
            format!("is not valid YAML: {e}"),
            "fix the YAML at that line and run check again",
        )
    })?;
    match &doc {
        Yaml::Null => {
            return Err(InputError::new(
                "",
                "is empty",
                "give a Barn host-names.yml with an all: group",
            ));
        }
        Yaml::Map(_) => {}
        other => {
            return Err(InputError::new(
                "",
                format!(
                    "has {} at the top; an inventory is a mapping with an all: key",
                    other.kind()
                ),
                "start the file with all:",
            ));
        }
    };
    Ok(doc)
}

/// Every host under `all` with its variable layers (at least one host).
fn walked(doc: &Yaml) -> Result<Walk<'_>, InputError> {
    let all = doc.get("all").ok_or_else(|| {
        InputError::new(
            "",
            "has no all: key at the top",
            "put the hosts under all: (all.hosts or all.children)",
        )
    })?;
    let mut walk = Walk::default();
    walk.group(all, "all", 0, &[])?;
    if walk.hosts.is_empty() {
        return Err(InputError::new(
            "all",
            "lists no hosts",
            "add the VMs under all.hosts or all.children.<group>.hosts",
        ));
    }
    Ok(walk)
}

/// In the host-access view every source names its category; a projection's stay as they were, so
/// its generations (and their digests) do not change.
fn tag_identity(h: &mut Host) {
    for n in h.node_name.iter_mut().chain(h.aliases.iter_mut()) {
        n.source = Category::VmIdentity.tag(&n.source);
    }
}

/// [`Yaml::get`] for a value to take out.
fn get_mut<'y>(y: &'y mut Yaml, key: &str) -> Option<&'y mut Yaml> {
    match y {
        Yaml::Map(entries) => entries
            .iter_mut()
            .find(|(k, _)| matches!(k, Yaml::Str(s) if s == key))
            .map(|(_, v)| v),
        _ => None,
    }
}

fn resolve_host(h: &Found<'_>) -> Result<Host, InputError> {
    let skip = match lookup(h, "vm_skip")? {
        None | Some((Yaml::Null, _)) => false,
        Some((Yaml::Bool(b, _), _)) => *b,
        Some((other, origin)) => {
            return Err(InputError::new(
                origin,
                format!("is {other}; vm_skip is true or false"),
                "write vm_skip: true or remove it",
            ));
        }
    };
    if skip {
        return Ok(Host {
            address: h.address,
            origin: h.origin.clone(),
            skip,
            node_name: None,
            aliases: Vec::new(),
        });
    }
    let node_name = node_name(h)?;
    let aliases = match lookup(h, "vm_alias")? {
        None | Some((Yaml::Null, _)) => Vec::new(),
        Some((v, origin)) => string_list(v, &origin, "vm_alias")?,
    };
    Ok(Host {
        address: h.address,
        origin: h.origin.clone(),
        skip,
        node_name: Some(node_name),
        aliases,
    })
}

/// `nodename`, else `<pg_cluster>-<pg_seq>`, else `node-<last octet>` (Barn's nodeName; also the name
/// `--entry` takes for an infra node).
fn node_name(h: &Found<'_>) -> Result<Named, InputError> {
    match lookup(h, "nodename")? {
        Some((Yaml::Str(s), origin)) if !s.is_empty() => {
            return Ok(Named {
                name: s.clone(),
                source: origin,
            });
        }
        None | Some((Yaml::Null, _)) | Some((Yaml::Str(_), _)) => {}
        Some((other, origin)) => {
            return Err(InputError::new(
                origin,
                format!("is {other}; nodename is a string"),
                "quote the node name, e.g. nodename: \"meta\"",
            ));
        }
    }
    let cluster = lookup(h, "pg_cluster")?;
    let seq = lookup(h, "pg_seq")?;
    if let (Some((c, c_origin)), Some((s, s_origin))) = (&cluster, &seq) {
        let cluster = match c {
            Yaml::Str(c) => c,
            Yaml::Null => "",
            other => {
                return Err(InputError::new(
                    c_origin,
                    format!("is {other}; pg_cluster is a string"),
                    "set nodename explicitly to name this VM",
                ));
            }
        };
        if !cluster.is_empty() {
            let seq = match s {
                Yaml::Int(i, _) if (0..=i128::from(i32::MAX)).contains(i) => *i,
                // Shown as written (`1e0`, `1.0`), and said to be a number, not an integer.
                Yaml::Float(..) => {
                    return Err(InputError::new(
                        s_origin,
                        format!(
                            "is the number {s}, not an integer; pg_seq is an unquoted integer \
                             from 0 to 2147483647"
                        ),
                        "write pg_seq as a whole number, e.g. pg_seq: 1 (or set nodename)",
                    ));
                }
                other => {
                    return Err(InputError::new(
                        s_origin,
                        format!("is {other}; pg_seq is an unquoted integer from 0 to 2147483647"),
                        "set nodename explicitly to name this VM",
                    ));
                }
            };
            return Ok(Named {
                name: format!("{cluster}-{seq}"),
                source: format!("{c_origin}+{s_origin}"),
            });
        }
    }
    Ok(Named {
        name: format!("node-{}", h.address.octets()[3]),
        source: format!("{} (node-<last octet>)", h.origin),
    })
}

fn string_list(v: &Yaml, origin: &str, what: &str) -> Result<Vec<Named>, InputError> {
    let Yaml::Seq(items) = v else {
        return Err(InputError::new(
            origin,
            format!("is {}; {what} is a list of names", v.kind()),
            format!("write {what}: [name1, name2]"),
        ));
    };
    names(items.iter().map(Cow::Borrowed), origin)
}

/// The names of a list at `origin`, each with its source `origin[i]`; an owned item's string moves.
fn names<'y>(
    items: impl ExactSizeIterator<Item = Cow<'y, Yaml>>,
    origin: &str,
) -> Result<Vec<Named>, InputError> {
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.enumerate() {
        let name = match item {
            Cow::Owned(Yaml::Str(s)) => s,
            Cow::Borrowed(Yaml::Str(s)) => s.clone(),
            other => {
                return Err(InputError::new(
                    indexed(origin, i),
                    format!("is {other}; a name is a string"),
                    "quote the name",
                ));
            }
        };
        out.push(Named {
            name,
            source: indexed(origin, i),
        });
    }
    Ok(out)
}

/// `origin[i]`, in one allocation (`format!` cost more than the rest of a name's source).
fn indexed(origin: &str, i: usize) -> String {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = i;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let digits = std::str::from_utf8(&digits[at..]).unwrap_or_default();
    let mut s = String::with_capacity(origin.len() + digits.len() + 2);
    s.push_str(origin);
    s.push('[');
    s.push_str(digits);
    s.push(']');
    s
}

/// Whether [`Yaml::find_template`] finds anything, without its substring search per string (a third
/// of reading 100,000 names); only a template found that way is looked up again.
fn has_template(v: &Yaml) -> bool {
    match v {
        Yaml::Str(s) => s.as_bytes().windows(2).any(|w| w == b"{{"),
        Yaml::Seq(items) => items.iter().any(has_template),
        Yaml::Map(entries) => entries
            .iter()
            .any(|(k, v)| has_template(k) || has_template(v)),
        _ => false,
    }
}

/// The address part of a CIDR as a hint repeats it: bare when it is an address, else quoted (and cut)
/// like every value from the file, so the hint never writes the author's text raw.
pub(crate) fn bare_address(addr: &str) -> String {
    addr.parse::<Ipv4Addr>()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| crate::output::text::quote(addr))
}

/// Canonical dotted-quad IPv4 only; says exactly what is wrong otherwise (the text follows the quoted value).
pub fn parse_ipv4(raw: &str) -> Result<Ipv4Addr, String> {
    if let Some((addr, _mask)) = raw.split_once('/') {
        return Err(format!(
            "is a CIDR; give the bare address {}",
            bare_address(addr)
        ));
    }
    if raw.parse::<std::net::Ipv6Addr>().is_ok() {
        return Err("is an IPv6 address; only IPv4 addresses are served".into());
    }
    let parts: Vec<&str> = raw.split('.').collect();
    if parts.len() == 4
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_digit()))
    {
        let octets: Vec<u16> = parts.iter().filter_map(|p| p.parse().ok()).collect();
        if octets.iter().all(|o| *o <= 255) && octets.len() == 4 {
            let canonical = format!("{}.{}.{}.{}", octets[0], octets[1], octets[2], octets[3]);
            if canonical != raw {
                return Err(format!("has a leading zero; write it as {canonical}"));
            }
            if let Ok(a) = raw.parse::<Ipv4Addr>() {
                return Ok(a);
            }
        }
        return Err("is not an IPv4 address (an octet is above 255)".into());
    }
    Err("is not an IPv4 address".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_canonical_only() {
        assert_eq!(parse_ipv4("10.10.10.10"), Ok(Ipv4Addr::new(10, 10, 10, 10)));
        assert!(
            parse_ipv4("10.10.10.100/24")
                .unwrap_err()
                .contains("CIDR; give the bare address 10.10.10.100")
        );
        assert!(
            parse_ipv4("10.10.10.010")
                .unwrap_err()
                .contains("write it as 10.10.10.10")
        );
        assert!(parse_ipv4("::1").unwrap_err().contains("IPv6"));
        assert!(
            parse_ipv4("10.10.10.256")
                .unwrap_err()
                .contains("above 255")
        );
        assert!(parse_ipv4("unknown").unwrap_err().contains("not an IPv4"));
        assert!(parse_ipv4("10.10.10").unwrap_err().contains("not an IPv4"));
    }

    #[test]
    fn names_keep_their_sources_and_error_paths() {
        let names: Vec<String> = (0..12).map(|i| format!("n{i}")).collect();
        let inv = parse(&format!(
            "all:\n  hosts: {{10.10.10.10: {{vm_alias: [a, b]}}}}\n  vars:\n    vm_hosts:\n      - {{address: 10.10.10.11, names: [x]}}\n      - {{address: 10.10.10.12, names: [{}]}}\n",
            names.join(", ")
        ))
        .unwrap();
        let aliases: Vec<_> = inv.hosts[0].aliases.iter().map(|n| &n.source).collect();
        assert_eq!(
            aliases,
            [
                "all.hosts[10.10.10.10].vm_alias[0]",
                "all.hosts[10.10.10.10].vm_alias[1]"
            ]
        );
        let v = &inv.vm_hosts[1];
        assert_eq!(v.source, "all.vars.vm_hosts[1].address");
        assert_eq!(v.names.len(), 12);
        for (i, n) in v.names.iter().enumerate() {
            assert_eq!(n.name, format!("n{i}"));
            assert_eq!(n.source, format!("all.vars.vm_hosts[1].names[{i}]"));
        }
        let e = parse("all:\n  hosts: {10.10.10.10: {}}\n  vars: {vm_hosts: [{address: 10.10.10.11, names: [a, b, c, d, e, f, g, h, i, j, [k]]}]}\n").unwrap_err();
        assert_eq!(e.at, "all.vars.vm_hosts[0].names[10]");
        assert_eq!(e.message, "is [...]; a name is a string");
        assert_eq!(indexed("x", 0), "x[0]");
        assert_eq!(indexed("x", 1_234_567_890), "x[1234567890]");
        assert_eq!(indexed("x", usize::MAX), format!("x[{}]", usize::MAX));
    }

    #[test]
    fn has_template_agrees_with_find_template() {
        for text in [
            "[a, b, '{{ x }}']",
            "[a, '{x}', '{ {']",
            "{'{{k}}': 1}",
            "{k: [1, {j: 'a{{'}]}",
            "['{', '{']",
            "x{{",
            "7",
        ] {
            let y = yaml::parse(text).unwrap();
            assert_eq!(has_template(&y), y.find_template().is_some(), "{text}");
        }
    }
}
