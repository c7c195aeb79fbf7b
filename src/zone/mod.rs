//! A zone's data: the sealed, digested generation as it is stored (`generation`), and the read-only views
//! the daemon answers from (`view`, the forward zone with its index and encoded apex; `reverse`, the
//! reverse zone of the same generation; `view_error`, why either refuses a generation).

pub mod generation;
pub(crate) mod reverse;
pub mod view;
pub(crate) mod view_error;
