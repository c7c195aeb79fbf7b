//! Test-only stand-in for `pigsty-dns serve` until that command lands: the same arguments
//! (`serve --listen ADDR --records FILE --state-dir DIR`), the library's real server, and a
//! `<state-dir>/status.json` with `counters.refused` rewritten every 200 ms. Stops on SIGTERM/SIGINT
//! or after PIGSTY_DNS_LAB_LIFETIME seconds (default 300), whichever comes first.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use pigsty_dns::generation::{Generation, ZoneView};
use pigsty_dns::server::{self, Counters, ServerConfig};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) != Some("serve") {
        return Err(
            "usage: route_lab_server serve --listen ADDR --records FILE --state-dir DIR".into(),
        );
    }
    let listen: SocketAddr = arg(&args, "--listen")
        .ok_or("--listen")?
        .parse()
        .map_err(|e| format!("{e}"))?;
    let records = PathBuf::from(arg(&args, "--records").ok_or("--records")?);
    let state = PathBuf::from(arg(&args, "--state-dir").ok_or("--state-dir")?);
    let zone = pigsty_dns::commands::parse_zone("pigsty.test").map_err(|e| e.message)?;
    let (set, input) = pigsty_dns::commands::validate(&records, &zone).map_err(|e| e.message)?;
    let g = Generation::seal(&set, 30, 5, 1, "2026-01-01T00:00:00Z".into(), input);
    let view = ZoneView::from_generation(&g)?;
    let cfg = ServerConfig {
        listen: vec![listen],
        ..ServerConfig::default()
    };
    let bound = server::bind(&cfg).map_err(|e| format!("{e:?}"))?;
    std::fs::create_dir_all(&state).map_err(|e| e.to_string())?;
    let counters = Arc::new(Counters::new());
    let c2 = counters.clone();
    let status = state.join("status.json");
    tokio::spawn(async move {
        loop {
            let s = c2.snapshot();
            let text = format!(
                "{{\"format\":1,\"counters\":{{\"refused\":{}}}}}\n",
                s.refused
            );
            let tmp = status.with_extension("tmp");
            if std::fs::write(&tmp, text).is_ok() {
                let _ = std::fs::rename(&tmp, &status);
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    let lifetime: u64 = std::env::var("PIGSTY_DNS_LAB_LIFETIME")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let shutdown = async move {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending::<()>().await } } => {}
            _ = tokio::time::sleep(Duration::from_secs(lifetime)) => {}
        }
    };
    eprintln!("route_lab_server: serving {} on {listen}", zone);
    bound
        .serve(Arc::new(ArcSwap::from_pointee(view)), counters, shutdown)
        .await
        .map_err(|e| e.to_string())
}
