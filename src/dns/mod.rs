//! DNS itself, shared by every wing: name rules and the zone mapping (`name`), the wire numbers
//! (`wire`), the transport a client uses (`transport`) and the SOA probe the commands ask the daemon
//! with (`probe`).

pub mod name;
pub mod probe;
pub(crate) mod punycode;
pub mod transport;
pub(crate) mod wire;
