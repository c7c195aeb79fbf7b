//! What the fuzz targets share: the zones they answer from (built from the committed samples exactly as
//! `load` builds a generation), and a counting allocator for the memory bounds.

pub mod peak;
pub mod zones;
