//! The commands that run and stop — `check`, `load`, `history`, `rollback`, `export`, `status` — one
//! file each, every one returning a [`Report`](crate::output::Report) that `main` renders as text or JSON.
//! (`serve` is the daemon; `route` and `service` are the installers.)

pub mod check;
pub mod export;
pub mod history;
pub mod load;
pub mod report;
pub mod rollback;
pub mod status;

pub use export::{ExportFormat, ZoneOf};
pub use load::LoadOptions;
