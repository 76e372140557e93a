//! Code-object readers, executables and symbols (filled in with the code-object
//! loader). For now: the registry of loaded images the loader extension asks about.

use std::sync::RwLock;

/// Loaded images: (base, size, executable handle).
static IMAGES: RwLock<Vec<(u64, u64, u64)>> = RwLock::new(Vec::new());

/// The executable whose loaded image contains `addr`.
pub fn find_image(addr: u64) -> Option<u64> {
    let images = IMAGES.read().unwrap_or_else(|e| e.into_inner());
    images
        .iter()
        .find(|(b, s, _)| addr >= *b && addr < b + s)
        .map(|(_, _, e)| *e)
}
