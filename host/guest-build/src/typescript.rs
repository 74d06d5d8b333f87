//! Builds typescript guest sources into components (being written).

use std::path::{Path, PathBuf};

use crate::{BuildError, Builder, Result, World};

pub fn build(_builder: &Builder, dir: &Path, world: World) -> Result<PathBuf> {
    Err(BuildError::Toolchain(format!(
        "building a typescript {} ({}) is not supported yet",
        world.noun(),
        dir.display()
    )))
}
