//! `service-access`: PG instances and clusters (roles/pgsql/tasks/dns.yml, roles/pg_id), node VIPs
//! (roles/node_monitor, with roles/node_id's `node_cluster`) and MinIO members
//! (roles/minio/tasks/config.yml).

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use super::{Out, address_of, bool_var, string_var, var};
use crate::input::inventory::walk::Found;
use crate::input::inventory::{Category, InputError, bare_address};
use crate::input::yaml::Yaml;
use crate::output::text::quote;

const SERVICE: Category = Category::ServiceAccess;

/// One PG instance: its host, cluster, sequence and role, with where each came from.
struct Instance<'h, 'a> {
    host: &'h Found<'a>,
    cluster: String,
    seq: i128,
    seq_origin: String,
    /// Where `pg_role: primary` is written, when it is.
    primary: Option<String>,
}

/// `pg_seq` as pg_id asserts it: an integer.
fn pg_seq(h: &Found<'_>) -> Result<Option<(i128, String)>, InputError> {
    let v = var(h, "pg_seq")?;
    match v.value {
        None | Some(Yaml::Null) => Ok(None),
        Some(Yaml::Int(i, _)) if *i >= 0 => Ok(Some((*i, v.origin))),
        Some(other) => Err(InputError::new(
            v.origin,
            format!("is {other}; pg_seq is an unquoted integer"),
            "write pg_seq as a whole number, e.g. pg_seq: 1",
        )),
    }
}

fn instances<'h, 'a>(hosts: &'h [Found<'a>]) -> Result<Vec<Instance<'h, 'a>>, InputError> {
    let mut out = Vec::new();
    for h in hosts {
        let Some((cluster, c_origin)) = string_var(h, "pg_cluster", None)? else {
            continue;
        };
        if cluster.is_empty() {
            continue;
        }
        let Some((seq, seq_origin)) = pg_seq(h)? else {
            return Err(InputError::new(
                c_origin,
                format!(
                    "host {} is in PG cluster {} but has no pg_seq; Pigsty's pg_id requires one",
                    h.address,
                    quote(&cluster)
                ),
                "give the instance pg_seq: N",
            ));
        };
        let primary = match string_var(h, "pg_role", None)? {
            Some((r, origin)) if r == "primary" => Some(origin),
            _ => None,
        };
        out.push(Instance {
            host: h,
            cluster,
            seq,
            seq_origin,
            primary,
        });
    }
    Ok(out)
}

/// What one instance says about its cluster's record; every instance of a cluster must say the same
/// (each one writes the cluster's file, so a difference would depend on the order of the writes).
#[derive(PartialEq)]
struct ClusterDns {
    suffix: String,
    target: String,
    vip: Option<String>,
}

fn cluster_dns(h: &Found<'_>) -> Result<(ClusterDns, [String; 3]), InputError> {
    let (suffix, s_origin) = string_var(h, "pg_dns_suffix", Some(""))?.unwrap_or_default();
    let (target, t_origin) = string_var(h, "pg_dns_target", Some("auto"))?.unwrap_or_default();
    let (vip_enabled, _) = bool_var(h, "pg_vip_enabled", false)?;
    let (vip, v_origin) = if vip_enabled {
        let (a, o) = string_var(h, "pg_vip_address", Some("127.0.0.1/24"))?.unwrap_or_default();
        (Some(a), o)
    } else {
        (None, String::new())
    };
    Ok((
        ClusterDns {
            suffix,
            target,
            vip,
        },
        [s_origin, t_origin, v_origin],
    ))
}

/// PG instance names → their hosts; PG cluster names → `pg_dns_target`'s choice.
pub(super) fn pg(hosts: &[Found<'_>], out: &mut Out) -> Result<(), InputError> {
    let instances = instances(hosts)?;
    let mut clusters: BTreeMap<&str, Vec<&Instance<'_, '_>>> = BTreeMap::new();
    for i in &instances {
        let name = format!("{}-{}", i.cluster, i.seq);
        out.push(
            SERVICE,
            &name,
            i.host.address,
            format!("{} (PG instance)", i.seq_origin),
        );
        clusters.entry(&i.cluster).or_default().push(i);
    }
    for (cluster, members) in clusters {
        let (dns, origins) = cluster_dns(members[0].host)?;
        for m in &members[1..] {
            if cluster_dns(m.host)?.0 != dns {
                return Err(InputError::new(
                    &m.host.origin,
                    format!(
                        "the instances of PG cluster {} disagree on pg_dns_suffix, pg_dns_target or \
                         pg_vip_*; the cluster record would depend on which instance wrote it last",
                        quote(cluster)
                    ),
                    "set them once in the cluster's vars",
                ));
            }
        }
        cluster_record(cluster, &members, &dns, &origins, out)?;
    }
    Ok(())
}

fn cluster_record(
    cluster: &str,
    members: &[&Instance<'_, '_>],
    dns: &ClusterDns,
    [_, t_origin, v_origin]: &[String; 3],
    out: &mut Out,
) -> Result<(), InputError> {
    let name = format!("{cluster}{}", dns.suffix);
    let vip = |out: &mut Out, vip: &str| -> Result<(), InputError> {
        // The role writes the VIP without its mask.
        let bare = vip.split('/').next().unwrap_or_default();
        let a = address_of(bare, v_origin, "pg_vip_address")?;
        out.push(
            SERVICE,
            &name,
            a,
            format!("{v_origin} (PG cluster, pg_dns_target {}: VIP)", dns.target),
        );
        Ok(())
    };
    match dns.target.as_str() {
        "none" => {}
        "vip" => {
            if let Some(v) = &dns.vip {
                vip(out, v)?;
            }
        }
        "auto" if dns.vip.is_some() => vip(out, dns.vip.as_deref().unwrap_or_default())?,
        "auto" | "primary" => {
            let (a, origin) = primary(cluster, members, t_origin)?;
            out.push(
                SERVICE,
                &name,
                a,
                format!(
                    "{origin} (PG cluster, pg_dns_target {}: primary)",
                    dns.target
                ),
            );
        }
        adhoc => {
            if adhoc.contains('/') {
                return Err(InputError::new(
                    t_origin,
                    format!(
                        "pg_dns_target {} is a CIDR; Pigsty's role writes it verbatim, mask \
                         included, as the address of {}",
                        quote(adhoc),
                        quote(&name)
                    ),
                    format!(
                        "write the bare address: pg_dns_target: {}",
                        bare_address(adhoc.split('/').next().unwrap_or_default())
                    ),
                ));
            }
            let a = address_of(adhoc, t_origin, "pg_dns_target").map_err(|e| InputError {
                next: "give auto, primary, vip, none or one IPv4 address".into(),
                ..e
            })?;
            out.push(
                SERVICE,
                &name,
                a,
                format!("{t_origin} (PG cluster, ad hoc pg_dns_target)"),
            );
        }
    }
    Ok(())
}

/// `pg_primary_ip`: the one primary's address, else Pigsty's `unknown`, which this view refuses.
fn primary(
    cluster: &str,
    members: &[&Instance<'_, '_>],
    t_origin: &str,
) -> Result<(Ipv4Addr, String), InputError> {
    let primaries: Vec<(&&Instance<'_, '_>, &String)> = members
        .iter()
        .filter_map(|m| m.primary.as_ref().map(|o| (m, o)))
        .collect();
    match primaries.as_slice() {
        // The source is where pg_role is written (the group that sets it), not the host's first group.
        [(one, origin)] => Ok((one.host.address, (*origin).clone())),
        none_or_many => Err(InputError::new(
            t_origin,
            format!(
                "PG cluster {} has {} primaries (pg_role: primary); its record target would be \
                 Pigsty's \"unknown\"",
                quote(cluster),
                none_or_many.len()
            ),
            "mark exactly one instance pg_role: primary, or set pg_dns_target: none",
        )),
    }
}

/// roles/node_id's `node_cluster`: `pg_cluster` when `node_id_from_pg` and `node_cluster` is unset,
/// empty or `nodes`.
fn node_cluster(h: &Found<'_>) -> Result<String, InputError> {
    let (from_pg, _) = bool_var(h, "node_id_from_pg", true)?;
    let own = string_var(h, "node_cluster", None)?;
    let pg = string_var(h, "pg_cluster", None)?.filter(|(c, _)| !c.is_empty());
    let unset = own
        .as_ref()
        .is_none_or(|(c, _)| c.is_empty() || c == "nodes");
    Ok(match (from_pg, pg, own) {
        (true, Some((c, _)), _) if unset => c,
        (_, _, Some((c, _))) if !c.is_empty() => c,
        _ => "nodes".to_string(),
    })
}

/// Node VIPs: `<node_cluster><vip_dns_suffix>` → `vip_address` wherever `vip_enabled`.
pub(super) fn node_vips(hosts: &[Found<'_>], out: &mut Out) -> Result<(), InputError> {
    for h in hosts {
        let (enabled, _) = bool_var(h, "vip_enabled", false)?;
        if !enabled {
            continue;
        }
        let Some((raw, origin)) = string_var(h, "vip_address", None)? else {
            return Err(InputError::new(
                &h.origin,
                format!(
                    "host {} has vip_enabled: true but no vip_address",
                    h.address
                ),
                "set vip_address on its group, or vip_enabled: false",
            ));
        };
        let a = address_of(&raw, &origin, "vip_address")?;
        let (suffix, _) = string_var(h, "vip_dns_suffix", Some(""))?.unwrap_or_default();
        let name = format!("{}{suffix}", node_cluster(h)?);
        out.push(SERVICE, &name, a, format!("{origin} (node VIP)"));
    }
    Ok(())
}

/// MinIO members: `<minio_cluster>-<minio_seq>` and the expanded `minio_node` → the member.
pub(super) fn minio(hosts: &[Found<'_>], out: &mut Out) -> Result<(), InputError> {
    for h in hosts {
        let Some((cluster, c_origin)) = string_var(h, "minio_cluster", None)? else {
            continue;
        };
        let seq = var(h, "minio_seq")?;
        let seq_text = match seq.value {
            Some(Yaml::Int(i, _)) => i.to_string(),
            None | Some(Yaml::Null) => {
                return Err(InputError::new(
                    c_origin,
                    format!(
                        "host {} is in MinIO cluster {} but has no minio_seq",
                        h.address,
                        quote(&cluster)
                    ),
                    "give the member minio_seq: N",
                ));
            }
            Some(other) => {
                return Err(InputError::new(
                    seq.origin,
                    format!("is {other}; minio_seq is an unquoted integer"),
                    "write minio_seq: N",
                ));
            }
        };
        let (pattern, p_origin) = string_var(
            h,
            "minio_node",
            Some("${minio_cluster}-${minio_seq}.pigsty"),
        )?
        .unwrap_or_default();
        let node = pattern
            .replace("${minio_cluster}", &cluster)
            .replace("${minio_seq}", &seq_text);
        let source = format!("{} (MinIO member)", seq.origin);
        out.push(SERVICE, &format!("{cluster}-{seq_text}"), h.address, source);
        out.push(
            SERVICE,
            &node,
            h.address,
            format!("{p_origin} (MinIO member {cluster}-{seq_text})"),
        );
    }
    Ok(())
}
