//! What a user gives: reading the file (`read`: bounded, regular files only), the strict streaming YAML
//! reader (`yaml`), the inventory rules, Barn's and the Pigsty host-access view (`inventory`), and the
//! record rules: addresses, conflicts, limits and diffs (`records`).

pub mod inventory;
mod read;
pub mod records;
pub mod yaml;

pub(crate) use read::{ViewInfo, read_as};
