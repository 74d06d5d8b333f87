//! Private PostgreSQL clusters for the client's tests: `initdb` in a temporary directory, TLS
//! with certificates made here by `openssl`, a pg_hba.conf with one role per login method, and
//! a server on 127.0.0.1 on a free port.
//!
//! The postmaster runs under a `sh` watchdog reading a pipe only this process writes: when the
//! pipe closes (the server is dropped, or the test process exits or is killed, which is what
//! happens to the [`shared`] server held in a static), the watchdog asks for a fast shutdown,
//! waits for it and removes the directory. `postgres` refuses to run as root, so as root the
//! tools run as the `postgres` system user and the directory is handed to it.

use std::fs;
use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, TcpListener};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use postgresql::client::{Client, ConnectConfig, SslMode};

/// The superuser `initdb` creates, and its password.
pub const SUPERUSER: &str = "postgres";
pub const SUPERUSER_PASSWORD: &str = "superuser-secret-4471";

/// pg_hba.conf: the first matching line decides. Roles named here exist in every cluster (see
/// [`PgServer::create_fixture_roles`]); every other role logs in with SCRAM, with or without TLS.
const PG_HBA: &str = "\
local all all scram-sha-256
hostnossl all tls_only 127.0.0.1/32 reject
host all md5_user 127.0.0.1/32 md5
host all cleartext_user 127.0.0.1/32 password
host all gss_user 127.0.0.1/32 gss
host all all 127.0.0.1/32 scram-sha-256
";

/// Fixed roles and their passwords.
pub const MD5_USER: (&str, &str) = ("md5_user", "md5-secret-9913");
pub const CLEARTEXT_USER: (&str, &str) = ("cleartext_user", "cleartext-secret-2207");
pub const TLS_ONLY_USER: (&str, &str) = ("tls_only", "tls-only-secret-5580");
pub const GSS_USER: &str = "gss_user";

/// Which certificate the server presents.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ServerCert {
    /// Signed by the test CA ([`PgServer::ca_pem`]), valid for `localhost` only.
    SignedByCa,
    /// Self-signed with `CA:TRUE` (PostgreSQL's documented quick setup); the client trusts it
    /// by having it as its root ([`PgServer::server_cert_pem`]).
    SelfSigned,
}

pub struct PgServer {
    dir: PathBuf,
    port: u16,
    /// The watchdog's standard input; closing it stops the server.
    control: Option<ChildStdin>,
    watchdog: Child,
}

/// One server for the whole test binary (tests create their own roles in it).
pub fn shared() -> &'static PgServer {
    static SHARED: OnceLock<PgServer> = OnceLock::new();
    SHARED.get_or_init(|| PgServer::start(ServerCert::SignedByCa))
}

impl PgServer {
    pub fn start(cert: ServerCert) -> PgServer {
        let owner = server_user();
        let dir = private_dir(owner);
        let data = dir.join("data");
        let pwfile = dir.join("pw");
        fs::write(&pwfile, SUPERUSER_PASSWORD).unwrap();
        hand_over(&pwfile, owner);
        run(as_owner(Command::new(tool("initdb")), owner, &dir)
            .arg("-D")
            .arg(&data)
            .args(["-U", SUPERUSER, "--pwfile"])
            .arg(&pwfile)
            .args(["--auth=scram-sha-256", "--encoding=UTF8", "--locale=C"])
            .args(["--no-sync", "--no-instructions"]));
        make_certificates(&dir, &data, cert);
        for file in ["server.crt", "server.key"] {
            hand_over(&data.join(file), owner);
        }
        fs::write(data.join("pg_hba.conf"), PG_HBA).unwrap();
        hand_over(&data.join("pg_hba.conf"), owner);

        let port = free_port();
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(WATCHDOG)
            .arg("pg-watchdog")
            .arg(tool("postgres"))
            .arg(&data)
            .arg(&dir)
            .args(["-c", &format!("port={port}")])
            .args(["-c", "listen_addresses=127.0.0.1"])
            .arg("-c")
            .arg(format!("unix_socket_directories={}", dir.display()))
            .args(["-c", "ssl=on", "-c", "max_connections=50"])
            .args(["-c", "shared_buffers=16MB", "-c", "logging_collector=off"]);
        let mut watchdog = as_owner(command, owner, &dir)
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot start the PostgreSQL watchdog");
        let control = watchdog.stdin.take();
        // The watchdog prints the postmaster's pid once it started it.
        let mut line = String::new();
        let _ = BufReader::new(watchdog.stdout.take().unwrap()).read_line(&mut line);
        let server = PgServer {
            dir,
            port,
            control,
            watchdog,
        };
        server.wait_ready(&line);
        server.create_fixture_roles();
        server
    }

    /// The PEM of the CA that signed the server's certificate ([`ServerCert::SignedByCa`]).
    pub fn ca_pem(&self) -> String {
        fs::read_to_string(self.dir.join("ca.crt")).unwrap()
    }

    /// The PEM of a CA that signed nothing the server has.
    pub fn other_ca_pem(&self) -> String {
        fs::read_to_string(self.dir.join("other-ca.crt")).unwrap()
    }

    /// The server's own certificate.
    pub fn server_cert_pem(&self) -> String {
        fs::read_to_string(self.dir.join("server.crt.pem")).unwrap()
    }

    /// A configuration for `user` on 127.0.0.1 with sslmode `disable`.
    pub fn config(&self, user: &str, password: &str) -> ConnectConfig {
        ConnectConfig {
            host: "127.0.0.1".to_owned(),
            port: self.port,
            user: user.to_owned(),
            password: Some(password.to_owned()),
            database: "postgres".to_owned(),
            sslmode: SslMode::Disable,
            sslrootcert: None,
            connect_timeout: Duration::from_secs(20),
            application_name: "cairn-postgresql-client-tests".to_owned(),
        }
    }

    /// A superuser session.
    pub fn superuser(&self) -> Client {
        Client::connect(&self.config(SUPERUSER, SUPERUSER_PASSWORD))
            .unwrap_or_else(|e| panic!("superuser login failed: {e}"))
    }

    /// A new SCRAM login role with a unique name, and its password.
    pub fn fresh_role(&self) -> (String, String) {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!("role_{}", NEXT.fetch_add(1, Ordering::Relaxed));
        let password = format!("{name}-secret-6620");
        self.superuser()
            .execute(&format!("CREATE ROLE {name} LOGIN PASSWORD '{password}'"))
            .unwrap();
        (name, password)
    }

    fn create_fixture_roles(&self) {
        let (md5, md5_password) = MD5_USER;
        let (cleartext, cleartext_password) = CLEARTEXT_USER;
        let (tls_only, tls_only_password) = TLS_ONLY_USER;
        self.superuser()
            .execute(&format!(
                "SET password_encryption = 'md5';
                 CREATE ROLE {md5} LOGIN PASSWORD '{md5_password}';
                 RESET password_encryption;
                 CREATE ROLE {cleartext} LOGIN PASSWORD '{cleartext_password}';
                 CREATE ROLE {tls_only} LOGIN PASSWORD '{tls_only_password}';
                 CREATE ROLE {GSS_USER} LOGIN;"
            ))
            .unwrap_or_else(|e| panic!("cannot create the fixture roles: {e}"));
    }

    /// Polls until the superuser can log in.
    fn wait_ready(&self, pid_line: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut config = self.config(SUPERUSER, SUPERUSER_PASSWORD);
        config.connect_timeout = Duration::from_secs(2);
        loop {
            match Client::connect(&config) {
                Ok(_) => return,
                Err(e) if Instant::now() > deadline => panic!(
                    "PostgreSQL (watchdog said {pid_line:?}) did not accept logins: {e}\nlog:\n{}",
                    fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
                ),
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        // End of input: the watchdog stops the server and removes the directory.
        drop(self.control.take());
        let _ = self.watchdog.wait();
    }
}

/// `sh -c WATCHDOG pg-watchdog POSTGRES DATA DIR ARGS...`: starts the postmaster, prints its
/// pid, and when its standard input ends, stops it (fast shutdown) and removes DIR.
const WATCHDOG: &str = r#"
postgres=$1 data=$2 dir=$3
shift 3
"$postgres" -D "$data" "$@" </dev/null >>"$dir/server.log" 2>&1 &
pid=$!
echo "$pid"
exec >/dev/null
while read -r _; do :; done
kill -INT "$pid" 2>/dev/null
wait "$pid"
rm -rf -- "$dir"
"#;

/// Writes the CA, a second CA, and the server's certificate and key (in `data`) with openssl.
fn make_certificates(dir: &Path, data: &Path, cert: ServerCert) {
    let openssl = |args: &[&str]| {
        run(Command::new("openssl").current_dir(dir).args(args));
    };
    let key = data.join("server.key");
    let crt = data.join("server.crt");
    let (key, crt) = (key.to_str().unwrap(), crt.to_str().unwrap());
    for ca in ["ca", "other-ca"] {
        openssl(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            &format!("/CN=cairn test {ca}"),
            "-keyout",
            &format!("{ca}.key"),
            "-out",
            &format!("{ca}.crt"),
        ]);
    }
    match cert {
        ServerCert::SignedByCa => {
            fs::write(
                dir.join("server.ext"),
                "basicConstraints=CA:FALSE\nsubjectAltName=DNS:localhost\n",
            )
            .unwrap();
            openssl(&[
                "req",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-subj",
                "/CN=localhost",
                "-keyout",
                key,
                "-out",
                "server.csr",
            ]);
            openssl(&[
                "x509",
                "-req",
                "-in",
                "server.csr",
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                "server.ext",
                "-out",
                crt,
            ]);
        }
        ServerCert::SelfSigned => {
            // `req -x509` marks the certificate CA:TRUE, as in PostgreSQL's documentation.
            openssl(&[
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-subj",
                "/CN=localhost",
                "-addext",
                "subjectAltName=DNS:localhost",
                "-keyout",
                key,
                "-out",
                crt,
            ]);
        }
    }
    fs::copy(crt, dir.join("server.crt.pem")).unwrap();
}

/// The `postgres` system user (uid, gid) when running as root, which PostgreSQL refuses.
fn server_user() -> Option<(u32, u32)> {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    let euid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        .and_then(|uid| uid.parse::<u32>().ok());
    if euid != Some(0) {
        return None;
    }
    let passwd = fs::read_to_string("/etc/passwd").unwrap_or_default();
    let user = passwd.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        match fields.as_slice() {
            ["postgres", _, uid, gid, ..] => Some((uid.parse().ok()?, gid.parse().ok()?)),
            _ => None,
        }
    });
    Some(user.expect("running as root, which PostgreSQL refuses, and no `postgres` user exists"))
}

/// A new directory under /tmp (reachable by the server user) that the server user owns.
fn private_dir(owner: Option<(u32, u32)>) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = PathBuf::from("/tmp").join(format!(
        "cairn-pgclient-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir(&dir).unwrap();
    hand_over(&dir, owner);
    dir
}

fn hand_over(path: &Path, owner: Option<(u32, u32)>) {
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
    }
    let mode = if path.is_dir() { 0o700 } else { 0o600 };
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// `command` as the server user (when root), in `dir`, without `PG*` variables.
fn as_owner(mut command: Command, owner: Option<(u32, u32)>, dir: &Path) -> Command {
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("PG") {
            command.env_remove(name);
        }
    }
    command.current_dir(dir).env("LC_ALL", "C");
    if let Some((uid, gid)) = owner {
        command.uid(uid).gid(gid);
    }
    command
}

fn run(command: &mut Command) {
    let output = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Debian's `/usr/lib/postgresql/<version>/bin` (the highest version), else `PATH`.
fn tool(name: &str) -> PathBuf {
    let newest = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version: u32 = entry.file_name().to_str()?.parse().ok()?;
            let path = entry.path().join("bin").join(name);
            path.is_file().then_some((version, path))
        })
        .max();
    newest.map_or_else(|| PathBuf::from(name), |(_, path)| path)
}

/// A port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .expect("cannot bind a port on 127.0.0.1")
        .port()
}
