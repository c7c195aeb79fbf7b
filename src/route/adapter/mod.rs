//! The adapters: one file per way of routing the zone from an operating system's resolver to the
//! daemon. Each renders its files and steps from `Params`, and says which resolver family answers for
//! it (`FAMILY`); it knows nothing of plans, journals or verification. This module dispatches to them.

pub mod delegate;
pub mod global;
pub mod link;
pub mod macos;
pub mod nm;
mod types;

pub use types::{AdapterName, Family, LinkKind, Params, Render, ResolvedScope, Step, Variant};

/// What `adapter` writes and runs for `p`.
pub fn render(adapter: AdapterName, p: &Params) -> Render {
    match adapter {
        AdapterName::MacosResolver => macos::render(p),
        AdapterName::ResolvedDelegate => delegate::render(p),
        AdapterName::ResolvedLink => link::render(p),
        AdapterName::NmDnsmasq => nm::render(p),
        AdapterName::ResolvedGlobal => global::render(p),
    }
}

/// The resolver family that answers for `adapter`'s route.
pub fn family(adapter: AdapterName) -> Family {
    match adapter {
        AdapterName::MacosResolver => macos::FAMILY,
        AdapterName::ResolvedDelegate => delegate::FAMILY,
        AdapterName::ResolvedLink => link::FAMILY,
        AdapterName::NmDnsmasq => nm::FAMILY,
        AdapterName::ResolvedGlobal => global::FAMILY,
    }
}

/// The fixed places an adapter may have written for `zones`, and the directories whose entries may be
/// an adapter's too (resolved-link names its files after the link; macOS a file per zone): where
/// uninstall looks for files with the ownership marker when the journal is gone.
pub fn places(zones: &[&str]) -> (Vec<String>, [&'static str; 2]) {
    let mut v: Vec<String> = vec![
        delegate::PATH.into(),
        nm::PATH.into(),
        global::PATH.into(),
        link::UNIT_PATH.into(),
        link::NM_CONF_PATH.into(),
    ];
    v.extend(zones.iter().map(|z| macos::path_for(z)));
    (v, [link::NETWORK_DIR, macos::DIR])
}

#[cfg(test)]
mod tests {
    use super::{AdapterName, LinkKind, Variant};

    #[test]
    fn names_are_the_words_serde_writes() {
        for a in AdapterName::ALL {
            assert_eq!(AdapterName::parse(a.as_str()), Some(a));
            assert_eq!(
                serde_json::to_value(a).unwrap(),
                serde_json::json!(a.as_str())
            );
        }
        assert_eq!(AdapterName::parse("dns-delegate"), None);
        for v in [Variant::Networkd, Variant::Runtime] {
            assert_eq!(
                serde_json::to_value(v).unwrap(),
                serde_json::json!(v.as_str())
            );
        }
        for k in [LinkKind::Dummy, LinkKind::Ifb] {
            assert_eq!(
                serde_json::to_value(k).unwrap(),
                serde_json::json!(k.as_str())
            );
        }
    }
}
