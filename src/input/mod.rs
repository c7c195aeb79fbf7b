//! What a user gives: reading the file (`read`: bounded, regular files only), the strict streaming YAML
//! reader (`yaml`), the inventory rules, Barn's and the Pigsty host-access view (`inventory`), the
//! record rules: addresses, conflicts, limits and diffs (`records`), and the list of a file's
//! problems they fill, so all are reported at once (`problems`).

pub mod inventory;
pub mod problems;
mod read;
pub mod records;
pub mod yaml;

pub(crate) use read::{ViewInfo, read_as};
