//! Another resolver that claims the route's zone or its reverse zone (a VPN's link or split DNS, another
//! `/etc/resolver` file, another scope of systemd-resolved), and the one advice for it: the zone is
//! never shared. `lifecycle` finds resolved's claims, `dnsinfo` macOS's; `install` refuses on them and
//! `status` names them, both through [`advice`].

use serde::Serialize;

/// Another resolver that claims one of the route's zones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Claim {
    /// The claim as shown: `link vpn0 claims ~corp.pigsty.test (a subdomain of pigsty.test)`,
    /// `/etc/resolver/corp: configd reads it as a resolver for pigsty.test (…)`.
    pub what: String,
    /// A temporary file an interrupted write of pigsty-dns left in `/etc/resolver`.
    pub stale_ours: bool,
    /// When a scope of systemd-resolved holds it: which, and the domain it lists.
    #[serde(skip)]
    pub scope: Option<Scope>,
}

/// One routing domain another resolved scope holds that takes names of ours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// `link vpn0`, `the global settings`, `delegate corp`.
    pub owner: String,
    /// The link's name, when a link claims it.
    pub link: Option<String>,
    /// As listed (`~corp.pigsty.test`).
    pub domain: String,
    /// Which of our zones it takes names of.
    pub zone: String,
    pub subdomain: bool,
}

impl Claim {
    /// A resolved scope's claim, shown as `link vpn0 claims ~corp.pigsty.test (a subdomain of …)`.
    pub fn of_scope(s: Scope) -> Claim {
        let what = format!(
            "{} claims {} ({})",
            s.owner,
            s.domain,
            if s.subdomain {
                format!("a subdomain of {}", s.zone)
            } else {
                format!("the zone {}", s.zone)
            }
        );
        Claim {
            what,
            stale_ours: false,
            scope: Some(s),
        }
    }

    /// Another resolver macOS reads (a file of `/etc/resolver`, a block of `scutil --dns`).
    pub fn resolver(what: String, stale_ours: bool) -> Claim {
        Claim {
            what,
            stale_ours,
            scope: None,
        }
    }
}

/// Where the claims are seen: they refuse an install, or `route status` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    Install,
    Status,
}

/// The `next:` for `claims` (not empty) on the route's `zone`: uninstall's cleanup for a stale file of
/// ours; for resolved scopes, what to drop where; for macOS's resolvers, what to remove.
pub fn advice(claims: &[Claim], zone: &str, seen: Seen) -> String {
    if claims.iter().any(|c| c.stale_ours) {
        return "sudo pigsty-dns route uninstall --yes removes pigsty-dns's stale temporary file; then install again".to_string();
    }
    let scopes: Vec<&Scope> = claims.iter().filter_map(|c| c.scope.as_ref()).collect();
    match (scopes.is_empty(), seen) {
        (false, Seen::Status) => format!(
            "drop {} from {} (a VPN: its split-DNS settings; by hand: resolvectl domain LINK without it), then pigsty-dns route install again: the zone is never shared",
            scopes
                .iter()
                .map(|s| s.domain.as_str())
                .collect::<Vec<_>>()
                .join(" "),
            dedup(scopes.iter().map(|s| s.owner.as_str())).join(", ")
        ),
        (false, Seen::Install) => format!(
            "take the zone off the other scope ({}): a VPN: its split-DNS settings; by hand: resolvectl domain LINK without it; then install again: the zone is never shared",
            claims
                .iter()
                .map(|c| c.what.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        ),
        (true, Seen::Status) => format!(
            "remove the other resolver (a stale /etc/resolver file: delete it; a VPN's split DNS: disconnect it or drop {zone} from its DNS settings)"
        ),
        (true, Seen::Install) => format!(
            "remove it (an /etc/resolver file you no longer need: delete it; a VPN's split DNS: disconnect it or drop {zone} from its DNS settings), then install again: the zone is never shared"
        ),
    }
}

/// Each owner once, in the order first seen.
fn dedup<'a>(all: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut seen: Vec<&str> = Vec::new();
    for x in all {
        if !seen.contains(&x) {
            seen.push(x);
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(owner: &str, domain: &str) -> Claim {
        Claim::of_scope(Scope {
            owner: owner.into(),
            link: None,
            domain: domain.into(),
            zone: "pigsty.test".into(),
            subdomain: domain != "~pigsty.test",
        })
    }

    /// The four advices, and a stale file of ours first whatever else claims the zone.
    #[test]
    fn one_advice_per_situation() {
        let two = [
            scope("link vpn0", "~pigsty.test"),
            scope("link vpn0", "~a.pigsty.test"),
        ];
        assert_eq!(
            advice(&two, "pigsty.test", Seen::Status),
            "drop ~pigsty.test ~a.pigsty.test from link vpn0 (a VPN: its split-DNS settings; by hand: resolvectl domain LINK without it), then pigsty-dns route install again: the zone is never shared"
        );
        assert_eq!(
            advice(&two, "pigsty.test", Seen::Install),
            "take the zone off the other scope (link vpn0 claims ~pigsty.test (the zone pigsty.test); link vpn0 claims ~a.pigsty.test (a subdomain of pigsty.test)): a VPN: its split-DNS settings; by hand: resolvectl domain LINK without it; then install again: the zone is never shared"
        );
        let file = [Claim::resolver("/etc/resolver/corp: …".into(), false)];
        assert!(
            advice(&file, "pigsty.test", Seen::Status).starts_with("remove the other resolver (")
        );
        assert!(advice(&file, "pigsty.test", Seen::Install).starts_with("remove it ("));
        let stale = [
            file[0].clone(),
            Claim::resolver("/etc/resolver/.x: …".into(), true),
        ];
        for seen in [Seen::Status, Seen::Install] {
            assert!(
                advice(&stale, "pigsty.test", seen)
                    .starts_with("sudo pigsty-dns route uninstall --yes")
            );
        }
    }
}
