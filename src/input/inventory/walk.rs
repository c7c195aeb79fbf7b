//! The group walk: every host under `all` with the variable layers above it (Barn's `collectHosts`),
//! and Barn's `lookup` over those layers.

use std::collections::{BTreeSet, HashMap};
use std::net::Ipv4Addr;

use super::{HOST_DEPTH, InputError, parse_ipv4};
use crate::input::yaml::{self, Yaml};
use crate::output::text::{quote, segment};

/// One layer of variables: a group's `vars` at its depth, or a host's own vars.
#[derive(Debug, Clone)]
pub(super) struct Layer<'a> {
    pub(super) depth: usize,
    pub(super) origin: String,
    pub(super) vars: &'a Yaml,
}

#[derive(Debug)]
pub(super) struct Found<'a> {
    pub(super) address: Ipv4Addr,
    pub(super) origin: String,
    pub(super) layers: Vec<Layer<'a>>,
    /// The names of the groups the host is in, its groups' ancestors included (as Ansible's
    /// `groups[...]` counts them); `all` is not listed.
    pub(super) groups: BTreeSet<String>,
}

#[derive(Default)]
pub(super) struct Walk<'a> {
    pub(super) hosts: Vec<Found<'a>>,
    by_address: HashMap<Ipv4Addr, usize>,
    /// The group names from `all` down to the group being walked.
    path: Vec<String>,
    /// The first group name met at a second place, with both paths: Ansible makes the two one group.
    pub(super) repeated: Option<(String, String, String)>,
    /// Each group name met, with the path of its first place.
    places: HashMap<String, String>,
}

impl<'a> Walk<'a> {
    pub(super) fn group(
        &mut self,
        group: &'a Yaml,
        path: &str,
        depth: usize,
        inherited: &[Layer<'a>],
    ) -> Result<(), InputError> {
        if depth > yaml::MAX_DEPTH {
            return Err(InputError::new(
                path,
                format!("nests groups deeper than {} levels", yaml::MAX_DEPTH),
                "flatten the children groups",
            ));
        }
        match group {
            Yaml::Null => return Ok(()),
            Yaml::Map(_) => {}
            other => {
                return Err(InputError::new(
                    path,
                    format!(
                        "is {}; a group is a mapping of hosts, vars and children",
                        other.kind()
                    ),
                    "make it a mapping",
                ));
            }
        }
        let mut layers = inherited.to_vec();
        if let Some(layer) = group_vars(group, path, depth)? {
            layers.push(layer);
        }
        if let Some(hosts) = group.get("hosts") {
            self.hosts(hosts, &format!("{path}.hosts"), &layers)?;
        }
        if let Some(children) = group.get("children") {
            self.children(children, &format!("{path}.children"), depth, &layers)?;
        }
        Ok(())
    }

    /// What Ansible refuses of a child: `all` under a group, a group under itself, and a group under
    /// its own descendant ("recursive dependency loop"); read as written, the walk would take the
    /// first two as nothing and the loop as one more level.
    fn refuse_a_loop(&self, label: &str, place: &str) -> Result<(), InputError> {
        if label == "all" {
            return Err(InputError::new(
                place,
                "puts the group all under another group; Ansible refuses the file",
                "remove it: every host is in all already (set its vars under all.vars)",
            ));
        }
        let Some(i) = self.path.iter().position(|g| g == label) else {
            return Ok(());
        };
        if i + 1 == self.path.len() {
            return Err(InputError::new(
                place,
                format!(
                    "makes the group {} a child of itself; Ansible refuses it (can't add group to itself)",
                    quote(label)
                ),
                "remove the child, or give it a name of its own",
            ));
        }
        let mut lp: Vec<String> = self.path[i..].iter().map(|g| quote(g)).collect();
        lp.push(quote(label));
        Err(InputError::new(
            place,
            format!(
                "makes a loop of groups ({}); Ansible refuses it (recursive dependency loop)",
                crate::output::text::bound(lp.join(" → "))
            ),
            "remove the child that names its own ancestor, or rename it",
        ))
    }

    /// A group's `hosts:` mapping, each host with the layers above it.
    fn hosts(
        &mut self,
        hosts: &'a Yaml,
        hpath: &str,
        layers: &[Layer<'a>],
    ) -> Result<(), InputError> {
        match hosts {
            Yaml::Null => {}
            Yaml::Map(hs) => {
                for (key, vars) in hs {
                    self.host(key, vars, hpath, layers)?;
                }
            }
            other => {
                return Err(InputError::new(
                    hpath,
                    format!(
                        "is {}; hosts is a mapping keyed by IPv4 address",
                        other.kind()
                    ),
                    "write hosts as 10.10.10.10: {nodename: meta}",
                ));
            }
        }
        Ok(())
    }

    /// A group's `children:` mapping, each child a group one level deeper.
    fn children(
        &mut self,
        children: &'a Yaml,
        cpath: &str,
        depth: usize,
        layers: &[Layer<'a>],
    ) -> Result<(), InputError> {
        match children {
            Yaml::Null => {}
            Yaml::Map(cs) => {
                for (name, child) in cs {
                    let label = match name {
                        Yaml::Str(s) => s.clone(),
                        other => other.to_string(),
                    };
                    let place = format!("{cpath}.{}", segment(&label));
                    self.refuse_a_loop(&label, &place)?;
                    match self.places.get(&label) {
                        Some(first) if self.repeated.is_none() => {
                            self.repeated = Some((label.clone(), first.clone(), place.clone()));
                        }
                        Some(_) => {}
                        None => {
                            self.places.insert(label.clone(), place.clone());
                        }
                    }
                    self.path.push(label.clone());
                    let walked = self.group(child, &place, depth + 1, layers);
                    self.path.pop();
                    walked?;
                }
            }
            other => {
                return Err(InputError::new(
                    cpath,
                    format!("is {}; children is a mapping of groups", other.kind()),
                    "make it a mapping of group names",
                ));
            }
        }
        Ok(())
    }

    fn host(
        &mut self,
        key: &'a Yaml,
        vars: &'a Yaml,
        hpath: &str,
        layers: &[Layer<'a>],
    ) -> Result<(), InputError> {
        let key_text = match key {
            Yaml::Str(s) => s.clone(),
            other => other.to_string(),
        };
        let path = format!("{hpath}[{}]", segment(&key_text));
        let Yaml::Str(raw) = key else {
            return Err(InputError::new(
                &path,
                // Yaml's Display quotes and cuts a string, and shows anything else as written.
                format!("host key {key} must be an IPv4 address"),
                "key each host by its address, e.g. 10.10.10.10:",
            ));
        };
        let address = parse_ipv4(raw).map_err(|why| {
            InputError::new(
                hpath,
                format!("host key {} {why}", quote(raw)),
                "key each host by its canonical IPv4 address, e.g. 10.10.10.10:",
            )
        })?;
        let own = match vars {
            Yaml::Null => None,
            Yaml::Map(_) => {
                if vars.get("vm_hosts").is_some() {
                    return Err(InputError::new(
                        format!("{path}.vm_hosts"),
                        "is set on a host; vm_hosts is read only from all.vars",
                        "move the vm_hosts list to all.vars",
                    ));
                }
                Some(Layer {
                    depth: HOST_DEPTH,
                    origin: path.clone(),
                    vars,
                })
            }
            other => {
                return Err(InputError::new(
                    &path,
                    format!("is {}; host vars are a mapping", other.kind()),
                    "write the host as 10.10.10.10: {nodename: meta}",
                ));
            }
        };
        let index = match self.by_address.get(&address) {
            Some(&i) => i,
            None => {
                self.hosts.push(Found {
                    address,
                    origin: path.clone(),
                    layers: Vec::new(),
                    groups: BTreeSet::new(),
                });
                self.by_address.insert(address, self.hosts.len() - 1);
                self.hosts.len() - 1
            }
        };
        let found = &mut self.hosts[index];
        for g in &self.path {
            if !found.groups.contains(g) {
                found.groups.insert(g.clone());
            }
        }
        for layer in layers.iter().chain(own.iter()) {
            if !found.layers.iter().any(|l| l.origin == layer.origin) {
                found.layers.push(layer.clone());
            }
        }
        Ok(())
    }
}

/// A group's `vars:` as a layer at its depth (none when absent or null); `vm_hosts` is read only from
/// `all.vars`.
fn group_vars<'a>(
    group: &'a Yaml,
    path: &str,
    depth: usize,
) -> Result<Option<Layer<'a>>, InputError> {
    let Some(vars) = group.get("vars") else {
        return Ok(None);
    };
    let vpath = format!("{path}.vars");
    match vars {
        Yaml::Null => Ok(None),
        Yaml::Map(_) => {
            if depth > 0 && vars.get("vm_hosts").is_some() {
                return Err(InputError::new(
                    format!("{vpath}.vm_hosts"),
                    "is set in a group; vm_hosts is read only from all.vars",
                    "move the vm_hosts list to all.vars",
                ));
            }
            Ok(Some(Layer {
                depth,
                origin: vpath,
                vars,
            }))
        }
        other => Err(InputError::new(
            vpath,
            format!("is {}; vars is a mapping", other.kind()),
            "make it a mapping of variables",
        )),
    }
}

/// Barn's `lookup`: the deepest layer that sets the key wins; two different values at that depth are an
/// error; a value with `{{` is refused (Barn reads literal values only).
pub(super) fn lookup<'a>(
    host: &Found<'a>,
    key: &str,
) -> Result<Option<(&'a Yaml, String)>, InputError> {
    let set: Vec<(usize, &'a Yaml, String)> = host
        .layers
        .iter()
        .filter_map(|l| {
            l.vars
                .get(key)
                .map(|v| (l.depth, v, format!("{}.{key}", l.origin)))
        })
        .collect();
    // Only the deepest layers count: a disagreement above them is overridden, not an error.
    let Some(deepest) = set.iter().map(|(d, _, _)| *d).max() else {
        return Ok(None);
    };
    let mut at_depth = set.into_iter().filter(|(d, _, _)| *d == deepest);
    let Some((_, value, origin)) = at_depth.next() else {
        return Ok(None);
    };
    if let Some((_, other, other_origin)) = at_depth.find(|(_, v, _)| *v != value) {
        return Err(InputError::new(
            &host.origin,
            format!(
                "host {} inherits conflicting values for {key} from {origin} ({value}) and {other_origin} ({other})",
                host.address
            ),
            format!("set {key} at host level for {}", host.address),
        ));
    }
    if let Some(t) = value.find_template() {
        return Err(InputError::new(
            &origin,
            format!(
                "{} is a template; pigsty-dns reads literal values only",
                quote(t)
            ),
            "give the rendered value (Barn's host-names.yml has no templates)",
        ));
    }
    Ok(Some((value, origin)))
}
