//! Builds go guest sources into components (being written).

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::World;

pub fn build(_home: &Path, dir: &Path, world: World) -> Result<PathBuf> {
    bail!(
        "building a go {} ({}) is not supported yet",
        world.noun(),
        dir.display()
    )
}
