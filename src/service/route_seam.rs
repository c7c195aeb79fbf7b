//! The seam to the route installer: `service uninstall` only needs to know whether a route is
//! installed (and to which server), remove it, and check it is gone. The real seam calls the route in
//! this process (`route::presence_here`, `route::uninstall_here`); tests use a fake.

use std::fmt;

use crate::route::installed::Presence;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteState {
    /// Installed: what it is (e.g. `adapter dns-delegate`) and the server it routes to (from its
    /// journal; `None` when the status does not say).
    Installed {
        what: String,
        server: Option<String>,
    },
    NotInstalled,
    /// The route command answered something we cannot read; nothing is assumed.
    Unknown(String),
}

impl fmt::Display for RouteState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RouteState::Installed { what, .. } => f.write_str(what),
            RouteState::NotInstalled => f.write_str("not installed"),
            RouteState::Unknown(why) => write!(f, "unknown: {why}"),
        }
    }
}

impl From<Presence> for RouteState {
    fn from(p: Presence) -> RouteState {
        match p {
            Presence {
                installed: false, ..
            } => RouteState::NotInstalled,
            Presence {
                adapter, server, ..
            } => RouteState::Installed {
                what: adapter.map_or_else(|| "installed".into(), |a| format!("adapter {a}")),
                server,
            },
        }
    }
}

pub trait RouteSeam {
    fn status(&mut self) -> RouteState;
    /// Err: what the route's uninstall printed and why it failed.
    fn uninstall(&mut self) -> Result<(), String>;
}

/// The route of this host, called in this process.
pub struct HostRoute;

impl RouteSeam for HostRoute {
    fn status(&mut self) -> RouteState {
        crate::route::presence_here().into()
    }

    fn uninstall(&mut self) -> Result<(), String> {
        crate::route::uninstall_here()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::adapter::AdapterName;

    #[test]
    fn a_presence_is_the_state_the_service_reads() {
        let p = |installed, adapter, server: Option<&str>| Presence {
            installed,
            adapter,
            server: server.map(String::from),
        };
        assert_eq!(
            RouteState::from(p(
                true,
                Some(AdapterName::ResolvedLink),
                Some("127.0.0.1:5399")
            )),
            RouteState::Installed {
                what: "adapter resolved-link".into(),
                server: Some("127.0.0.1:5399".into())
            }
        );
        // Files with the marker and no journal, or an unreadable journal: installed, nothing known.
        assert_eq!(
            RouteState::from(p(true, None, None)),
            RouteState::Installed {
                what: "installed".into(),
                server: None
            }
        );
        assert_eq!(
            RouteState::from(p(false, None, None)),
            RouteState::NotInstalled
        );
    }
}
