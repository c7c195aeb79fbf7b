//! `all.vars.vm_hosts`: the list of `{address, names}` entries Barn serves beside the hosts, read
//! entry by entry with each name's source (`all.vars.vm_hosts[i].names[j]`).

use std::borrow::Cow;

use super::{InputError, VmHost, get_mut, has_template, indexed, names, parse_ipv4};
use crate::input::yaml::Yaml;
use crate::output::text::quote;

/// The entries of `vm_hosts` at `path`, in input order; the names' strings move out of `v`.
pub(super) fn parse_vm_hosts(v: Yaml, path: &str) -> Result<Vec<VmHost>, InputError> {
    if has_template(&v)
        && let Some(t) = v.find_template()
    {
        return Err(InputError::new(
            path,
            format!(
                "{} is a template; pigsty-dns reads literal values only",
                quote(t)
            ),
            "give the rendered value",
        ));
    }
    let Yaml::Seq(items) = v else {
        return Err(InputError::new(
            path,
            format!(
                "is {}; vm_hosts is a list of {{address, names}} entries",
                v.kind()
            ),
            "write vm_hosts: [{address: 10.10.10.10, names: [meta]}]",
        ));
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        out.push(entry(item, &indexed(path, i))?);
    }
    Ok(out)
}

/// One entry at `at`: only the keys `address` and `names`, both present, at least one name.
fn entry(mut item: Yaml, at: &str) -> Result<VmHost, InputError> {
    let Yaml::Map(entries) = &mut item else {
        return Err(InputError::new(
            at,
            format!("is {}; an entry is {{address, names}}", item.kind()),
            "write the entry as {address: 10.10.10.10, names: [meta]}",
        ));
    };
    for (k, _) in entries.iter() {
        if !matches!(k, Yaml::Str(s) if s == "address" || s == "names") {
            return Err(InputError::new(
                at,
                format!("has the unknown key {k}; an entry has only address and names"),
                "remove that key",
            ));
        }
    }
    let address = match item.get("address") {
        Some(Yaml::Str(s)) => parse_ipv4(s).map_err(|why| {
            InputError::new(
                format!("{at}.address"),
                format!("{} {why}", quote(s)),
                "give the canonical dotted-quad IPv4 address",
            )
        })?,
        Some(other) => {
            return Err(InputError::new(
                format!("{at}.address"),
                format!("is {other}; an address is a string such as 10.10.10.10"),
                "quote the address",
            ));
        }
        None => {
            return Err(InputError::new(at, "has no address", "add address: <IPv4>"));
        }
    };
    let names = entry_names(&mut item, at)?;
    Ok(VmHost {
        address,
        source: format!("{at}.address"),
        names,
    })
}

/// The entry's `names`, moved out of it.
fn entry_names(item: &mut Yaml, at: &str) -> Result<Vec<super::Named>, InputError> {
    let names = match get_mut(item, "names") {
        Some(Yaml::Seq(items)) => names(
            std::mem::take(items).into_iter().map(Cow::Owned),
            &format!("{at}.names"),
        )?,
        Some(other) => {
            return Err(InputError::new(
                format!("{at}.names"),
                format!("is {}; names is a list", other.kind()),
                "write names: [name1, name2]",
            ));
        }
        None => {
            return Err(InputError::new(
                at,
                "has no names",
                "add names: [name1, ...]",
            ));
        }
    };
    if names.is_empty() {
        return Err(InputError::new(
            format!("{at}.names"),
            "is empty; an entry has at least one name",
            "add a name or remove the entry",
        ));
    }
    Ok(names)
}
