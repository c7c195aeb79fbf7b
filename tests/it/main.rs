//! Every integration test, in one binary: the real `pigsty-dns` binary on real files, real sockets and
//! real DNS clients. Tests that need root or Debian's packages run only with `PIGSTY_DNS_E2E=1` (see
//! [`util::e2e`]); then a missing prerequisite is a failure, never a skip. The route and service labs,
//! which boot whole systems, are the other binary (`tests/labs`).

mod util;

mod check_args_bytes;
mod check_forged_lines;
mod check_line_length;
mod check_pigsty;
mod check_pigsty_stock;
mod check_rules;
mod debian_scripts;
mod default_port;
mod differential;
mod import_circles;
mod line_gate;
mod packaging;
mod pigsty_ansible;
mod rfc_probes;
mod root_touch;
mod route_adapters;
mod route_golden;
mod route_inert;
mod route_lifecycle;
mod route_macos;
mod serve_cli;
mod serve_dig;
mod serve_flood;
mod serve_resolver;
mod serve_rules;
mod serve_tcp_clients;
mod serve_tcp_evict;
mod serve_udp_burst;
mod serve_zones;
mod service_lifecycle;
mod service_units;
mod status_golden;
mod status_hostile;
mod store;
mod store_forged;
mod transfer;
mod transfer_clients;
mod transfer_forged;
mod transfer_forged_secondaries;
mod transfer_readers;
mod transfer_tsig;
mod transfer_zones;
