//! The zones the packet and framing targets answer from: the two committed samples, sealed the way
//! `load` seals them, and the empty zone a server serves before its first generation.

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::sync::LazyLock;

use pigsty_dns::defaults;
use pigsty_dns::dns::name::Zone;
use pigsty_dns::input::inventory;
use pigsty_dns::input::records::RecordSet;
use pigsty_dns::zone::generation::{Generation, Input};
use pigsty_dns::zone::view::ZoneView;

pub const META_YML: &str = include_str!("../../../zones/pigsty.test.yml");
pub const HA_YML: &str = include_str!("../../../zones/ha.yml");

/// A view and, independently of it, every name that exists in it: served names with their address,
/// and the apex and empty non-terminals with `None`; and the reverse zone's names (its apex with `None`,
/// each address with its PTR target), read from the generation's PTR list.
pub struct Served {
    pub view: ZoneView,
    pub names: HashMap<String, Option<Ipv4Addr>>,
    pub zone: String,
    pub reverse_zone: Option<String>,
    pub ptr: HashMap<String, Option<String>>,
}

pub fn zone() -> Zone {
    Zone::parse(defaults::ZONES[0]).expect("the default zone parses")
}

/// Seals an inventory text as `load` would (serial 1).
pub fn seal(text: &str) -> Generation {
    let inv = inventory::parse(text).expect("the sample is a valid inventory");
    let set = RecordSet::build(&inv, &zone()).expect("the sample builds");
    Generation::seal(
        &set,
        defaults::TTL,
        defaults::NEGATIVE_TTL,
        1,
        "2026-01-01T00:00:00Z".into(),
        Input {
            path: "/fuzz/host-names.yml".into(),
            sha256: "0".repeat(64),
        },
    )
}

fn served(g: Option<&Generation>) -> Served {
    let zone = zone();
    let view = match g {
        Some(g) => ZoneView::from_generation(g).expect("the sample's view builds"),
        None => ZoneView::empty(zone.clone()).expect("the empty view builds"),
    };
    let apex = zone.as_str().to_string();
    let mut names = HashMap::new();
    names.insert(apex.clone(), None);
    for r in g.map(|g| g.records.as_slice()).unwrap_or_default() {
        names.insert(r.name.clone(), Some(r.address));
        let mut rest = r.name.as_str();
        while let Some((_, parent)) = rest.split_once('.') {
            if parent.len() < apex.len() {
                break;
            }
            names.entry(parent.to_string()).or_insert(None);
            rest = parent;
        }
    }
    let ptr_list = g.map(|g| g.ptr.as_slice()).unwrap_or_default();
    let reverse_zone = ptr_list.first().map(|p| {
        let [a, b, c, _] = p.address.octets();
        format!("{c}.{b}.{a}.in-addr.arpa")
    });
    let mut ptr = HashMap::new();
    if let Some(z) = &reverse_zone {
        ptr.insert(z.clone(), None);
        for p in ptr_list {
            ptr.insert(
                format!("{}.{z}", p.address.octets()[3]),
                Some(p.name.clone()),
            );
        }
    }
    Served {
        view,
        names,
        zone: apex,
        reverse_zone,
        ptr,
    }
}

pub static META: LazyLock<Served> = LazyLock::new(|| served(Some(&seal(META_YML))));
pub static HA: LazyLock<Served> = LazyLock::new(|| served(Some(&seal(HA_YML))));
pub static EMPTY: LazyLock<Served> = LazyLock::new(|| served(None));
