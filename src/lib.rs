//! pigsty-dns: an authoritative DNS server for one private zone on loopback, and the tools around it.

pub mod generation;
pub mod name;
pub mod records;
