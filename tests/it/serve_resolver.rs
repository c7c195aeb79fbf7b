//! A real stub resolver (hickory-resolver, cache off, only this server, UDP then TCP) sees the zone.

use std::net::{IpAddr, Ipv4Addr};

use crate::util::*;
use hickory_resolver::Resolver;
use hickory_resolver::config::{
    ConnectionConfig, NameServerConfig, ProtocolConfig, ResolverConfig, ResolverOpts,
};
use hickory_resolver::net::runtime::TokioRuntimeProvider;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hickory_resolver_resolves_and_sees_negative_answers() {
    let srv = start(test_config());
    for protocol in [ProtocolConfig::Udp, ProtocolConfig::Tcp] {
        let mut conn = ConnectionConfig::new(protocol.clone());
        conn.port = srv.addr.port();
        let mut ns = NameServerConfig::udp_and_tcp(IpAddr::V4(Ipv4Addr::LOCALHOST));
        ns.connections = vec![conn];
        let mut opts = ResolverOpts::default();
        opts.cache_size = 0;
        opts.attempts = 1;
        opts.timeout = WAIT;
        let resolver = Resolver::builder_with_config(
            ResolverConfig::from_name_servers(vec![ns]),
            TokioRuntimeProvider::default(),
        )
        .with_options(opts)
        .build()
        .unwrap();

        let ips: Vec<Ipv4Addr> = resolver
            .ipv4_lookup("Meta.Pigsty.Test.")
            .await
            .unwrap()
            .answers()
            .iter()
            .filter_map(|r| match &r.data {
                hickory_resolver::proto::rr::RData::A(a) => Some(a.0),
                _ => None,
            })
            .collect();
        assert_eq!(ips, vec![Ipv4Addr::new(10, 10, 10, 10)], "{protocol:?}");

        let e = resolver.ipv4_lookup("nope.pigsty.test.").await.unwrap_err();
        assert!(e.is_nx_domain(), "{protocol:?}: {e}");
        let e = resolver.ipv6_lookup("meta.pigsty.test.").await.unwrap_err();
        assert!(
            e.is_no_records_found() && !e.is_nx_domain(),
            "{protocol:?}: NODATA, not NXDOMAIN: {e}"
        );
    }
    srv.stop().await;
}
