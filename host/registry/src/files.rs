//! Files this crate writes (credentials, the lock, registry lists): whole or not at all.

use std::path::Path;

/// Writes `bytes` to `path` through a temporary file in the same directory (fsynced, then
/// renamed), readable by its owner only when `private`.
pub fn write_atomically(path: &Path, bytes: &[u8], private: bool) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("file"),
        std::process::id()
    ));
    let write = || -> std::io::Result<()> {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        if private {
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        }
        #[cfg(not(unix))]
        let _ = private;
        let mut out = options.open(&tmp)?;
        std::io::Write::write_all(&mut out, bytes)?;
        out.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}
