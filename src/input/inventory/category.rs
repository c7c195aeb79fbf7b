//! The categories of the host-access view's records, how a source carries its category, and which
//! view a file was read as.

/// Where a name of the host-access view comes from (the design's export section).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Category {
    VmIdentity,
    ServiceAccess,
    InfraDns,
    GuestHosts,
    PortalAccess,
    Explicit,
}

const ALL: [Category; 6] = [
    Category::VmIdentity,
    Category::ServiceAccess,
    Category::InfraDns,
    Category::GuestHosts,
    Category::PortalAccess,
    Category::Explicit,
];

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Category::VmIdentity => "vm-identity",
            Category::ServiceAccess => "service-access",
            Category::InfraDns => "infra-dns",
            Category::GuestHosts => "guest-hosts",
            Category::PortalAccess => "portal-access",
            Category::Explicit => "explicit",
        }
    }

    /// The source as the generation keeps it: `<category>: <source>`. The category travels inside
    /// the source string, so every place that keeps sources (history, export, the diff of a load)
    /// keeps it without a change of the generation's format.
    pub fn tag(self, source: &str) -> String {
        format!("{}: {source}", self.as_str())
    }

    /// The category a tagged source names (a host-access view's); `None` for a projection's source.
    pub fn tagged(source: &str) -> Option<Category> {
        let (head, _) = source.split_once(": ")?;
        ALL.iter().find(|c| c.as_str() == head).copied()
    }

    /// The category a host-access view's record names: the first, in this order, of its tagged
    /// sources'; `None` for a projection's record, whose sources carry none.
    pub fn tagged_of<S: AsRef<str>>(sources: &[S]) -> Option<Category> {
        sources
            .iter()
            .filter_map(|s| Category::tagged(s.as_ref()))
            .min()
    }

    /// The category a source names; an untagged source (a projection's) is a `vm_hosts` name or an
    /// identity by its path.
    pub fn of_source(source: &str) -> Category {
        if let Some(c) = Category::tagged(source) {
            return c;
        }
        if source.starts_with("all.vars.vm_hosts") {
            Category::Explicit
        } else {
            Category::VmIdentity
        }
    }

    /// A record's category: the first, in this order, of its sources'.
    pub fn of_sources<S: AsRef<str>>(sources: &[S]) -> Category {
        sources
            .iter()
            .map(|s| Category::of_source(s.as_ref()))
            .min()
            .unwrap_or(Category::VmIdentity)
    }
}

/// How a file is read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Reading {
    /// A Pigsty config gets the literal host-access view, a projection the identities and `vm_hosts`.
    #[default]
    Auto,
    /// Only the identities and `vm_hosts`, whatever the file holds (`--identity-only`).
    IdentityOnly,
    /// As `Auto`, with this infra node as the entry whose DNS and portal the host uses (`--entry
    /// NODE`), when the infra nodes would publish differently: its address, or its name as the view
    /// derives it (`nodename`, else `<pg_cluster>-<pg_seq>`, else `node-<octet>`).
    Entry(String),
}

impl Reading {
    /// The infra entry the user picked (a name or an address, as given), if any.
    pub fn entry(&self) -> Option<&str> {
        match self {
            Reading::Entry(e) => Some(e),
            _ => None,
        }
    }
}

/// The view a file was read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// Identities and `vm_hosts` only: a projection, or `--identity-only`.
    Projection,
    /// The literal host-access view of a Pigsty config.
    HostAccess,
}

impl View {
    pub fn as_str(self) -> &'static str {
        match self {
            View::Projection => "identity (projection)",
            View::HostAccess => "literal host-access",
        }
    }
}
