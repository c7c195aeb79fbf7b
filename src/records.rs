//! `RecordSet`: the names to serve, built from a parsed inventory under the address and conflict rules.

use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use crate::name::Zone;

/// One served name. `sources` says where each mention of it came from (input paths), sorted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    pub name: String,
    pub address: Ipv4Addr,
    pub sources: Vec<String>,
}

/// A valid input name that is not served, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotServed {
    pub name: String,
    pub address: Ipv4Addr,
    pub reason: String,
    pub sources: Vec<String>,
}

/// A host that `vm_skip: true` takes out of the managed set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkippedHost {
    pub address: Ipv4Addr,
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordSet {
    pub zone: Zone,
    pub records: Vec<Record>,
    pub not_served: Vec<NotServed>,
    pub skipped_hosts: Vec<SkippedHost>,
}
