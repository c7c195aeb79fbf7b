//! The merged value of every variable the view reads, host by host, as JSON: what the Ansible
//! differential (tests/it/pigsty_ansible.rs) compares with `ansible-inventory --list`.

use std::net::Ipv4Addr;

use super::VIEW_KEYS;
use crate::input::inventory::walk::lookup;
use crate::input::inventory::{InputError, document, walked};
use crate::input::yaml::Yaml;

/// One host's groups (ancestors included, `all` not) and the merged value of each [`VIEW_KEYS`]
/// variable that some layer sets.
#[derive(Debug)]
pub struct MergedHost {
    pub address: Ipv4Addr,
    pub groups: Vec<String>,
    pub vars: serde_json::Map<String, serde_json::Value>,
}

/// Every host's merged variables, or the error that makes the view refuse the file (a conflict at
/// one depth, a template).
pub fn merged_vars(text: &str) -> Result<Vec<MergedHost>, InputError> {
    let doc = document(text)?;
    let walk = walked(&doc)?;
    super::groups_once(&walk)?;
    let mut out = Vec::with_capacity(walk.hosts.len());
    for h in &walk.hosts {
        let mut vars = serde_json::Map::new();
        for key in VIEW_KEYS {
            if let Some((v, origin)) = lookup(h, key)? {
                if let Some((text, why)) = super::literal::ambiguous(v) {
                    return Err(super::literal::refuse(&origin, key, &text, why));
                }
                vars.insert((*key).to_string(), json(v));
            }
        }
        let groups = h.groups.iter().cloned().collect();
        out.push(MergedHost {
            address: h.address,
            groups,
            vars,
        });
    }
    Ok(out)
}

fn json(v: &Yaml) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Yaml::Null => Value::Null,
        Yaml::Bool(b, _) => Value::Bool(*b),
        Yaml::Int(i, _) => {
            i64::try_from(*i).map_or_else(|_| Value::String(i.to_string()), Value::from)
        }
        Yaml::Float(f, _) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        Yaml::Str(s) => Value::String(s.clone()),
        Yaml::Seq(items) => Value::Array(items.iter().map(json).collect()),
        Yaml::Map(entries) => Value::Object(
            entries
                .iter()
                .map(|(k, v)| {
                    let key = match k {
                        Yaml::Str(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (key, json(v))
                })
                .collect(),
        ),
    }
}
