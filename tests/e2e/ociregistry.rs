//! Private OCI registries for end-to-end tests: Debian's `docker-registry` (the CNCF
//! distribution server) on its own port of 127.0.0.1 with storage in a temporary directory,
//! stopped when dropped — and killed with the test thread that started it, if that dies first
//! (`PR_SET_PDEATHSIG`). `tests/run.sh` installs the package.
//!
//! `oras` ([`oras`]), the independent client, comes from `$CAIRN_ORAS`, `PATH` or the tools
//! directory `tests/run.sh` installs it into.

#![allow(dead_code)]

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

pub struct OciRegistry {
    child: Child,
    pub port: u16,
    _dir: TempDir,
}

/// The registry server binary, if installed.
pub fn registry_binary() -> Option<PathBuf> {
    ["/usr/bin/docker-registry", "/usr/sbin/docker-registry"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

impl OciRegistry {
    /// Starts a registry; panics (naming the package) if it is not installed.
    pub fn start() -> OciRegistry {
        let binary = registry_binary().expect(
            "docker-registry is not installed (tests/run.sh installs Debian's docker-registry)",
        );
        for _ in 0..5 {
            let dir = tempfile::tempdir().unwrap();
            let port = TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let config = dir.path().join("config.yml");
            std::fs::write(
                &config,
                format!(
                    "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n  secret: cairn-tests\n",
                    dir.path().join("data").display()
                ),
            )
            .unwrap();
            let mut command = Command::new(&binary);
            command
                .arg("serve")
                .arg(&config)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
            unsafe {
                command.pre_exec(|| {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    Ok(())
                });
            }
            let mut child = command.spawn().expect("start docker-registry");
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(30) {
                if let Ok(Some(_)) = child.try_wait() {
                    break; // the port was taken meanwhile: try another
                }
                if http_get(port, "/v2/").is_some_and(|(status, _)| status == 200) {
                    return OciRegistry {
                        child,
                        port,
                        _dir: dir,
                    };
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("docker-registry did not start");
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Where the registry stores blobs and manifests.
    pub fn data_dir(&self) -> PathBuf {
        self._dir.path().join("data")
    }

    /// `oci://127.0.0.1:PORT/path`.
    pub fn url(&self, path: &str) -> String {
        format!("oci://127.0.0.1:{}/{path}", self.port)
    }

    /// `127.0.0.1:PORT/path` (as oras names it).
    pub fn plain(&self, path: &str) -> String {
        format!("127.0.0.1:{}/{path}", self.port)
    }

    /// GET `path`; the status and body.
    pub fn get(&self, path: &str, accept: &str) -> (u16, Vec<u8>) {
        http_get_accept(self.port, path, accept).expect("registry answers")
    }
}

impl Drop for OciRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http_get(port: u16, path: &str) -> Option<(u16, Vec<u8>)> {
    http_get_accept(port, path, "*/*")
}

/// A minimal HTTP/1.0 GET (the registry closes the connection after it).
fn http_get_accept(port: u16, path: &str, accept: &str) -> Option<(u16, Vec<u8>)> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nAccept: {accept}\r\n\r\n"
    )
    .ok()?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).ok()?;
    let split = response.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&response[..split]).into_owned();
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, response[split + 4..].to_vec()))
}

/// The `oras` client, if installed.
pub fn oras() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CAIRN_ORAS") {
        return Some(PathBuf::from(path));
    }
    let tools =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/tools/bin/oras");
    if tools.is_file() {
        return Some(tools);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("oras"))
            .find(|p| p.is_file())
    })
}
