//! The generation a transfer reads: the stored file of the live view's serial, read through the store's
//! one verified path ([`StateDir::generation`]: every check serving applies, the file held to its name)
//! and checked to hold the same records (its record digest is the view's), so a transfer sends exactly
//! what queries see at that serial. The last one read is kept, so concurrent and repeated transfers of
//! one serial share it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::store::StateDir;
use crate::zone::generation::Generation;

#[derive(Debug)]
pub struct Source {
    state_dir: PathBuf,
    /// The last generation read; replaced when the live serial moves on.
    cache: Mutex<Option<Arc<Generation>>>,
}

impl Source {
    pub fn new(state_dir: &Path) -> Source {
        Source {
            state_dir: state_dir.to_path_buf(),
            cache: Mutex::new(None),
        }
    }

    /// The generation of `serial` with `digest`, read from the state dir (blocking: call it off the
    /// async threads). The cache is only used when both match.
    pub fn live(&self, serial: u32, digest: Option<&str>) -> Result<Arc<Generation>, String> {
        let digest = digest.ok_or("no generation is served yet (serial 0)")?;
        // Held while reading, so concurrent transfers of a new serial read the file once.
        let mut cache = self
            .cache
            .lock()
            .map_err(|_| "the generation cache is poisoned".to_string())?;
        if let Some(g) = cache
            .as_ref()
            .filter(|g| g.serial == serial && g.record_digest == digest)
        {
            return Ok(g.clone());
        }
        let g = Arc::new(self.read(serial)?);
        if g.record_digest != digest {
            return Err(format!(
                "generation {serial} in the state dir does not hold the records being served"
            ));
        }
        *cache = Some(g.clone());
        Ok(g)
    }

    /// Any stored generation by serial (for IXFR's history), not cached: through the store's one
    /// verified path, so a file whose content is not the serial its name says is never sent.
    pub fn read(&self, serial: u32) -> Result<Generation, String> {
        StateDir::open(&self.state_dir, false)
            .map_err(|e| e.to_string())?
            .generation(serial)
    }
}
