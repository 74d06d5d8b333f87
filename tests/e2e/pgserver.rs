//! Private PostgreSQL servers for end-to-end tests: each [`PgServer`] is a fresh cluster in a
//! temporary directory, listening on its own port on 127.0.0.1 with password (SCRAM) logins,
//! that never outlives the test process.
//!
//! # Lifetime
//!
//! The postmaster runs under a small `sh` watchdog whose standard input is a pipe only this
//! process writes to. Writing `fast` and closing it (what [`PgServer::stop`] and `Drop` do) makes
//! the watchdog request a fast shutdown and wait for it. If the pipe closes without that word —
//! the test process exited without dropping the server (the [`shared`] one is a static and is
//! never dropped) or was killed, even with SIGKILL — the watchdog requests an immediate shutdown,
//! waits for the postmaster, and removes the server's temporary directory (only that directory).
//! The watchdog runs in its own process group, so a terminal's Ctrl-C reaches only the tests.
//!
//! # Running as root
//!
//! `postgres` refuses to run as root. When the tests run as root, `initdb`, the watchdog and the
//! server run as the `postgres` system user (Debian's `postgresql` package creates it), and the
//! temporary directory is handed to that user.
//!
//! # Finding PostgreSQL
//!
//! The highest-versioned `/usr/lib/postgresql/<version>/bin` holding `postgres` (Debian's
//! layout), else the directory on `PATH` holding `pg_ctl`. `tests/run.sh` installs Debian's
//! package when neither exists.

// Not every test binary that includes this module uses all of it.
#![allow(dead_code)]

use std::collections::HashSet;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// The superuser `initdb` creates in every cluster.
pub const SUPERUSER: &str = "postgres";
/// The superuser's password.
pub const SUPERUSER_PASSWORD: &str = "cairn-test-superuser";

/// How long a server may take to accept connections, or to shut down. Generous: CI machines are
/// slow and busy; polling ends as soon as the server is ready.
const DEADLINE: Duration = Duration::from_secs(60);
/// How often readiness and shutdown are polled.
const POLL: Duration = Duration::from_millis(10);
/// How many times [`PgServer::start`] tries fresh ports when another process took the one it
/// picked before the server bound it.
const PORT_ATTEMPTS: usize = 5;

/// Server settings for tests: room for parallel tests' connections, little memory, and the
/// durability of a real deployment (`fsync` stays on).
const SETTINGS: &[(&str, &str)] = &[
    ("listen_addresses", "127.0.0.1"),
    ("max_connections", "200"),
    ("shared_buffers", "16MB"),
    ("fsync", "on"),
    ("logging_collector", "off"),
    ("log_line_prefix", "%m [%p] "),
];

/// The watchdog, run as `sh -c WATCHDOG watchdog POSTGRES DATA LOG DIR SETTING...`.
///
/// It starts the postmaster, prints its pid, and blocks reading standard input. A line `fast`
/// asks for a fast shutdown (SIGINT); end of input without it, for an immediate one (SIGQUIT),
/// after which DIR is removed. The signal is only sent while `postmaster.pid` still names the
/// postmaster, so a reused pid is never signalled.
const WATCHDOG: &str = r#"
postgres=$1 data=$2 log=$3 dir=$4
shift 4
exec 2>>"$log"
"$postgres" -D "$data" "$@" </dev/null >>"$log" 2>&1 &
pid=$!
echo "$pid"
exec >/dev/null
how=gone
read -r how || how=gone
first=
[ -f "$data/postmaster.pid" ] && read -r first 2>/dev/null <"$data/postmaster.pid"
if [ "$first" = "$pid" ]; then
    if [ "$how" = fast ]; then kill -INT "$pid"; else kill -QUIT "$pid"; fi
fi
wait "$pid"
if [ "$how" != fast ]; then rm -rf -- "$dir"; fi
"#;

/// A private PostgreSQL server. Dropping it shuts the server down (fast) and removes its files.
pub struct PgServer {
    /// Holds `data/` (the cluster), `server.log`, and the unix socket.
    dir: TempDir,
    bin: PathBuf,
    port: u16,
    owner: Option<SystemUser>,
    /// Settings beyond [`SETTINGS`] (TLS).
    extra_settings: Vec<String>,
    running: Mutex<Option<Running>>,
}

/// A running postmaster and the watchdog guarding it.
struct Running {
    watchdog: Child,
    /// The watchdog's standard input; closing it stops the server.
    control: ChildStdin,
    postmaster: u32,
}

/// A database with its own login role (the role owns the database), made by
/// [`PgServer::fresh_database`].
#[derive(Clone, Debug)]
pub struct PgDatabase {
    pub name: String,
    pub user: String,
    pub password: String,
    /// `postgres://user:password@127.0.0.1:port/name`.
    pub url: String,
}

/// The server user when running as root.
#[derive(Clone, Copy, Debug)]
struct SystemUser {
    uid: u32,
    gid: u32,
}

/// One server for the whole test binary, started on first use. Tests share it by each creating
/// their own database ([`PgServer::fresh_database`]), so they can run in parallel; a test that
/// stops the server starts its own with [`PgServer::start`].
pub fn shared() -> &'static PgServer {
    static SHARED: OnceLock<PgServer> = OnceLock::new();
    SHARED.get_or_init(PgServer::start)
}

impl PgServer {
    /// Creates a cluster in a new temporary directory and starts a server for it on a free
    /// port, returning once it accepts connections. Panics, with the server log, if it cannot.
    pub fn start() -> PgServer {
        PgServer::start_with(false)
    }

    /// A server that accepts TCP connections only over TLS (`hostssl` alone in pg_hba.conf),
    /// with a self-signed certificate for `127.0.0.1` and `localhost`: [`PgServer::tls_cert`].
    pub fn start_tls() -> PgServer {
        PgServer::start_with(true)
    }

    /// The TLS server's certificate (its own CA), PEM.
    pub fn tls_cert(&self) -> PathBuf {
        self.dir.path().join("ca.crt")
    }

    fn start_with(tls: bool) -> PgServer {
        let bin = bin_dir();
        let owner = server_user();
        let dir = temp_dir(owner);
        init_cluster(&bin, dir.path(), owner);
        let extra_settings = if tls {
            enable_tls(dir.path(), owner)
        } else {
            Vec::new()
        };
        let mut server = PgServer {
            dir,
            bin,
            port: free_port(),
            owner,
            extra_settings,
            running: Mutex::new(None),
        };
        let mut last = String::new();
        for _ in 0..PORT_ATTEMPTS {
            match server.launch() {
                Ok(()) => return server,
                // Another process bound the port first; the cluster is fine, try another port.
                Err(failure) if failure.port_taken => {
                    last = failure.message;
                    server.port = free_port();
                }
                Err(failure) => panic!("{}", failure.message),
            }
        }
        panic!("PostgreSQL could not bind a port in {PORT_ATTEMPTS} attempts; the last: {last}");
    }

    /// The TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The cluster's data directory.
    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The postmaster's pid, while the server runs.
    pub fn postmaster_pid(&self) -> Option<u32> {
        lock(&self.running).as_ref().map(|r| r.postmaster)
    }

    /// `postgres://user:password@127.0.0.1:port/database`, with user and password
    /// percent-encoded.
    pub fn url(&self, user: &str, password: &str, database: &str) -> String {
        format!(
            "postgres://{}:{}@127.0.0.1:{}/{}",
            percent_encode(user),
            percent_encode(password),
            self.port,
            percent_encode(database)
        )
    }

    /// The superuser's URL for `database`.
    pub fn superuser_url(&self, database: &str) -> String {
        self.url(SUPERUSER, SUPERUSER_PASSWORD, database)
    }

    /// Everything the server has logged so far (across restarts), for diagnostics.
    pub fn log(&self) -> String {
        String::from_utf8_lossy(&fs::read(self.log_path()).unwrap_or_default()).into_owned()
    }

    /// Runs `sql` as the superuser in `database` and returns psql's unaligned, tuples-only
    /// output. Panics, with psql's error, if it fails.
    pub fn sql(&self, database: &str, sql: &str) -> String {
        self.psql(&self.superuser_url(database), sql)
            .unwrap_or_else(|e| panic!("SQL as superuser in {database:?} failed: {e}\nSQL: {sql}"))
    }

    /// Runs `sql` with psql against `url` (unaligned, tuples only, stopping at the first
    /// error): psql's standard output, or its standard error when it fails.
    pub fn psql(&self, url: &str, sql: &str) -> Result<String, String> {
        let mut command = Command::new(self.tool("psql"));
        clear_pg_env(&mut command);
        let output = command
            .env("PGCONNECT_TIMEOUT", "10")
            .args(["--no-psqlrc", "--no-align", "--tuples-only", "--quiet"])
            .args([
                "--set",
                "ON_ERROR_STOP=1",
                "--dbname",
                url,
                "--command",
                sql,
            ])
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run psql: {e}"));
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).into_owned())
        } else {
            Err(format!(
                "psql {}: {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ))
        }
    }

    /// Creates a login role.
    pub fn create_role(&self, name: &str, password: &str) {
        self.sql(
            "postgres",
            &format!(
                "CREATE ROLE {} LOGIN PASSWORD {}",
                quote_ident(name),
                quote_literal(password)
            ),
        );
    }

    /// Creates a database owned by `owner` (a role name; [`SUPERUSER`] for the superuser).
    pub fn create_database(&self, name: &str, owner: &str) {
        self.sql(
            "postgres",
            &format!(
                "CREATE DATABASE {} OWNER {}",
                quote_ident(name),
                quote_ident(owner)
            ),
        );
    }

    /// Creates a database with a unique name and a login role of the same name that owns it.
    pub fn fresh_database(&self) -> PgDatabase {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!("cairn_test_{}", NEXT.fetch_add(1, Ordering::Relaxed));
        let password = format!("{name}-password");
        self.create_role(&name, &password);
        self.create_database(&name, &name);
        PgDatabase {
            url: self.url(&name, &password, &name),
            user: name.clone(),
            name,
            password,
        }
    }

    /// Shuts the server down (fast: sessions are ended, a checkpoint is written) and returns once
    /// the postmaster has exited and connections are refused. Does nothing if it is stopped.
    pub fn stop(&self) {
        let Some(running) = lock(&self.running).take() else {
            return;
        };
        if let Err(message) = running.shut_down() {
            panic!("{message}; server log:\n{}", self.log());
        }
        let deadline = Instant::now() + DEADLINE;
        while self.accepts_tcp() {
            if Instant::now() > deadline {
                panic!(
                    "port {} still accepts connections after the server stopped",
                    self.port
                );
            }
            std::thread::sleep(POLL);
        }
    }

    /// Starts the stopped server again: same cluster, same port. Panics if it is running, or,
    /// with the server log, if it does not come up (for instance because another process took
    /// the port meanwhile).
    pub fn start_again(&self) {
        assert!(
            lock(&self.running).is_none(),
            "start_again: the server is running"
        );
        if let Err(failure) = self.launch() {
            panic!("{}", failure.message);
        }
    }

    /// Starts the postmaster under a watchdog and waits until it accepts connections.
    fn launch(&self) -> Result<(), Failure> {
        let log_start = fs::metadata(self.log_path()).map_or(0, |m| m.len() as usize);
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(WATCHDOG)
            .arg("cairn-postgres-watchdog")
            .arg(self.tool("postgres"))
            .arg(self.data_dir())
            .arg(self.log_path())
            .arg(self.dir.path())
            .arg("-c")
            .arg(format!("port={}", self.port))
            .arg("-c")
            .arg(format!(
                "unix_socket_directories={}",
                self.dir.path().display()
            ));
        for (name, value) in SETTINGS {
            command.arg("-c").arg(format!("{name}={value}"));
        }
        for setting in &self.extra_settings {
            command.arg("-c").arg(setting);
        }
        as_server_user(&mut command, self.owner, self.dir.path());
        let mut watchdog = command
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| Failure {
                port_taken: false,
                message: format!("cannot start the PostgreSQL watchdog: {e}"),
            })?;
        let control = watchdog.stdin.take().expect("stdin is piped");
        let stdout = watchdog.stdout.take().expect("stdout is piped");
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let Ok(postmaster) = line.trim().parse::<u32>() else {
            let _ = watchdog.kill();
            let _ = watchdog.wait();
            return Err(Failure {
                port_taken: false,
                message: format!(
                    "the PostgreSQL watchdog printed no pid ({line:?}); server log:\n{}",
                    self.log()
                ),
            });
        };
        let running = Running {
            watchdog,
            control,
            postmaster,
        };
        match self.wait_ready(postmaster) {
            Ok(()) => {
                *lock(&self.running) = Some(running);
                Ok(())
            }
            Err(reason) => {
                let _ = running.shut_down();
                let log = self.log();
                let new_log = log.get(log_start..).unwrap_or(&log);
                Err(Failure {
                    port_taken: new_log.contains("Address already in use"),
                    message: format!(
                        "PostgreSQL on port {} in {} {reason}; server log:\n{log}",
                        self.port,
                        self.dir.path().display()
                    ),
                })
            }
        }
    }

    /// Polls until `postmaster.pid` says the postmaster accepts connections.
    fn wait_ready(&self, postmaster: u32) -> Result<(), String> {
        let pid_file = self.data_dir().join("postmaster.pid");
        let deadline = Instant::now() + DEADLINE;
        loop {
            // Line 1 is the pid, line 8 the status ("ready" once connections are accepted).
            if let Ok(text) = fs::read_to_string(&pid_file) {
                let lines: Vec<&str> = text.lines().collect();
                if lines.first().map(|l| l.trim()) == Some(&postmaster.to_string())
                    && lines.get(7).map(|l| l.trim()) == Some("ready")
                    && self.accepts_tcp()
                {
                    return Ok(());
                }
            }
            if !process_alive(postmaster) {
                return Err("exited while starting".to_owned());
            }
            if Instant::now() > deadline {
                return Err(format!("was not ready within {DEADLINE:?}"));
            }
            std::thread::sleep(POLL);
        }
    }

    fn accepts_tcp(&self) -> bool {
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
        TcpStream::connect_timeout(&address, Duration::from_secs(1)).is_ok()
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("server.log")
    }

    fn tool(&self, name: &str) -> PathBuf {
        tool(&self.bin, name)
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let running = match self.running.get_mut() {
            Ok(running) => running.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        if let Some(running) = running
            && let Err(message) = running.shut_down()
            && !std::thread::panicking()
        {
            panic!("{message}");
        }
    }
}

impl Running {
    /// Asks the watchdog for a fast shutdown and waits for it (and so the postmaster) to exit.
    fn shut_down(self) -> Result<(), String> {
        let Running {
            mut watchdog,
            mut control,
            postmaster,
        } = self;
        // The watchdog may be gone already if the postmaster failed to start.
        let _ = control.write_all(b"fast\n");
        drop(control);
        let deadline = Instant::now() + DEADLINE;
        loop {
            match watchdog.try_wait() {
                Ok(Some(_)) => return Ok(()),
                Ok(None) if Instant::now() > deadline => {
                    let _ = Command::new("kill")
                        .args(["-QUIT", &postmaster.to_string()])
                        .status();
                    let _ = watchdog.wait();
                    return Err(format!(
                        "PostgreSQL (pid {postmaster}) did not shut down within {DEADLINE:?}"
                    ));
                }
                Ok(None) => std::thread::sleep(POLL),
                Err(e) => return Err(format!("cannot wait for the PostgreSQL watchdog: {e}")),
            }
        }
    }
}

/// Why a server did not start.
struct Failure {
    /// Another process bound the port first.
    port_taken: bool,
    /// What happened, with the server log.
    message: String,
}

/// Runs `initdb` for `dir/data`: SCRAM authentication everywhere, the [`SUPERUSER`] with its
/// password, UTF-8 and the C locale whatever the environment says.
fn init_cluster(bin: &Path, dir: &Path, owner: Option<SystemUser>) {
    let pwfile = dir.join("superuser-password");
    fs::write(&pwfile, SUPERUSER_PASSWORD)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", pwfile.display()));
    hand_over(&pwfile, owner);
    let mut command = Command::new(tool(bin, "initdb"));
    command
        .arg("--pgdata")
        .arg(dir.join("data"))
        .arg(format!("--username={SUPERUSER}"))
        .arg("--pwfile")
        .arg(&pwfile)
        .args(["--auth=scram-sha-256", "--encoding=UTF8", "--locale=C"])
        // Skips only initdb's final flush of the new files; the server runs with fsync on.
        .args(["--no-sync", "--no-instructions"]);
    as_server_user(&mut command, owner, dir);
    let output = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run initdb: {e}"));
    let _ = fs::remove_file(&pwfile);
    assert!(
        output.status.success(),
        "initdb failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Makes `command` run as the server user (when running as root), in `dir`, without the
/// caller's `PG*` environment.
fn as_server_user(command: &mut Command, owner: Option<SystemUser>, dir: &Path) {
    clear_pg_env(command);
    command.current_dir(dir).env("LC_ALL", "C");
    if let Some(user) = owner {
        // std drops supplementary groups when a root process changes uid.
        command.uid(user.uid).gid(user.gid);
    }
}

/// Removes `PG*` variables (PGHOST, PGDATA, PGPASSWORD, …) that would redirect the tools.
fn clear_pg_env(command: &mut Command) {
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("PG") {
            command.env_remove(name);
        }
    }
}

/// A new temporary directory the server user owns, under a parent it can reach.
fn temp_dir(owner: Option<SystemUser>) -> TempDir {
    let mut base = std::env::temp_dir();
    if let Some(user) = owner
        && !reachable_by(&base, user)
    {
        base = PathBuf::from("/tmp");
        assert!(
            reachable_by(&base, user),
            "neither $TMPDIR nor /tmp is reachable by the postgres user (uid {})",
            user.uid
        );
    }
    let dir = tempfile::Builder::new()
        .prefix("cairn-pg-")
        .tempdir_in(&base)
        .unwrap_or_else(|e| panic!("cannot create a temporary directory in {base:?}: {e}"));
    hand_over(dir.path(), owner);
    dir
}

/// Gives `path` to the server user (when running as root), readable only by it.
/// Makes a CA and a server certificate it signs for 127.0.0.1 and localhost (with `openssl`),
/// gives the server its key, allows TCP logins only over TLS, and returns the settings that
/// turn TLS on.
fn enable_tls(dir: &Path, owner: Option<SystemUser>) -> Vec<String> {
    let data = dir.join("data");
    let (ca_key, ca) = (dir.join("ca.key"), dir.join("ca.crt"));
    let (cert, key) = (data.join("server.crt"), data.join("server.key"));
    let (csr, ext) = (dir.join("server.csr"), dir.join("server.ext"));
    fs::write(
        &ext,
        "basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n",
    )
    .unwrap();
    let openssl = |args: &[&dyn AsRef<std::ffi::OsStr>]| {
        let out = Command::new("openssl")
            .args(args.iter().map(|a| a.as_ref()))
            .output()
            .unwrap_or_else(|e| panic!("cannot run openssl: {e}"));
        assert!(
            out.status.success(),
            "openssl failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    openssl(&[
        &"req",
        &"-x509",
        &"-newkey",
        &"rsa:2048",
        &"-nodes",
        &"-days",
        &"30",
        &"-subj",
        &"/CN=cairn-test-ca",
        &"-keyout",
        &ca_key,
        &"-out",
        &ca,
    ]);
    openssl(&[
        &"req",
        &"-newkey",
        &"rsa:2048",
        &"-nodes",
        &"-subj",
        &"/CN=localhost",
        &"-keyout",
        &key,
        &"-out",
        &csr,
    ]);
    openssl(&[
        &"x509",
        &"-req",
        &"-in",
        &csr,
        &"-CA",
        &ca,
        &"-CAkey",
        &ca_key,
        &"-CAcreateserial",
        &"-days",
        &"30",
        &"-extfile",
        &ext,
        &"-out",
        &cert,
    ]);
    fs::set_permissions(&ca, fs::Permissions::from_mode(0o644)).unwrap();
    hand_over(&cert, owner);
    hand_over(&key, owner);
    let hba = data.join("pg_hba.conf");
    fs::write(
        &hba,
        "local all all scram-sha-256\nhostssl all all 127.0.0.1/32 scram-sha-256\n",
    )
    .unwrap();
    hand_over(&hba, owner);
    vec![
        "ssl=on".to_owned(),
        "ssl_cert_file=server.crt".to_owned(),
        "ssl_key_file=server.key".to_owned(),
    ]
}

fn hand_over(path: &Path, owner: Option<SystemUser>) {
    if let Some(user) = owner {
        std::os::unix::fs::chown(path, Some(user.uid), Some(user.gid))
            .unwrap_or_else(|e| panic!("cannot chown {}: {e}", path.display()));
    }
    let mode = if path.is_dir() { 0o700 } else { 0o600 };
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .unwrap_or_else(|e| panic!("cannot chmod {}: {e}", path.display()));
}

/// Whether `user` may traverse `dir` and every directory above it.
fn reachable_by(dir: &Path, user: SystemUser) -> bool {
    dir.ancestors().all(|d| {
        fs::metadata(d).is_ok_and(|m| {
            let mode = m.mode();
            if m.uid() == user.uid {
                mode & 0o100 != 0
            } else if m.gid() == user.gid {
                mode & 0o010 != 0
            } else {
                mode & 0o001 != 0
            }
        })
    })
}

/// The `postgres` system user when this process runs as root, which PostgreSQL refuses.
fn server_user() -> Option<SystemUser> {
    if effective_uid() != 0 {
        return None;
    }
    let passwd = fs::read_to_string("/etc/passwd").unwrap_or_default();
    let user = passwd.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        match fields.as_slice() {
            ["postgres", _, uid, gid, ..] => Some(SystemUser {
                uid: uid.parse().ok()?,
                gid: gid.parse().ok()?,
            }),
            _ => None,
        }
    });
    Some(user.expect(
        "the tests run as root, which PostgreSQL refuses, and there is no `postgres` user in \
         /etc/passwd to run it as; install Debian's `postgresql` package (tests/run.sh does)",
    ))
}

fn effective_uid() -> u32 {
    // Linux: "Uid:\treal\teffective\tsaved\tfs".
    if let Ok(status) = fs::read_to_string("/proc/self/status")
        && let Some(uid) = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1))
            .and_then(|uid| uid.parse().ok())
    {
        return uid;
    }
    let output = Command::new("id")
        .arg("-u")
        .output()
        .unwrap_or_else(|e| panic!("cannot run `id -u`: {e}"));
    String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("`id -u` printed no uid"))
}

/// Whether `pid` is a live process (not gone, not a zombie).
fn process_alive(pid: u32) -> bool {
    if Path::new("/proc/self").exists() {
        // The state follows the command name in parentheses.
        return fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
            !matches!(state.and_then(|s| s.chars().next()), Some('Z' | 'X') | None)
        });
    }
    Command::new("ps")
        .args(["-o", "stat=", "-p", &pid.to_string()])
        .output()
        .is_ok_and(|o| {
            let stat = String::from_utf8_lossy(&o.stdout);
            o.status.success() && !stat.trim().is_empty() && !stat.trim().starts_with('Z')
        })
}

/// The directory holding PostgreSQL's server programs.
fn bin_dir() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let debian = fs::read_dir("/usr/lib/postgresql")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| {
                let version = version_key(&entry.file_name().to_string_lossy())?;
                let bin = entry.path().join("bin");
                bin.join("postgres").is_file().then_some((version, bin))
            })
            .max();
        if let Some((_, bin)) = debian {
            return bin;
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path)
            .find(|dir| dir.join("pg_ctl").is_file() && dir.join("postgres").is_file())
            .expect(
                "PostgreSQL is not installed: no /usr/lib/postgresql/*/bin/postgres and no \
                 pg_ctl on PATH; tests/run.sh installs Debian's `postgresql` package",
            )
    })
    .clone()
}

/// `15` → `[15]`, `9.6` → `[9, 6]`; `None` for names that are not versions.
fn version_key(name: &str) -> Option<Vec<u32>> {
    name.split('.').map(|part| part.parse().ok()).collect()
}

/// `name` from `bin`, else from `PATH` (psql may live only in /usr/bin).
fn tool(bin: &Path, name: &str) -> PathBuf {
    let path = bin.join(name);
    if path.is_file() {
        path
    } else {
        PathBuf::from(name)
    }
}

/// A port on 127.0.0.1 that was free a moment ago and that no other server of this process has.
fn free_port() -> u16 {
    static TAKEN: Mutex<Option<HashSet<u16>>> = Mutex::new(None);
    let mut taken = lock(&TAKEN);
    let taken = taken.get_or_insert_with(HashSet::new);
    loop {
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .and_then(|listener| listener.local_addr())
            .unwrap_or_else(|e| panic!("cannot bind a port on 127.0.0.1: {e}"))
            .port();
        if taken.insert(port) {
            return port;
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `"name"`, with embedded quotes doubled.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `'text'`, with embedded quotes doubled (standard_conforming_strings is on by default).
pub fn quote_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// Percent-encodes everything but RFC 3986 unreserved characters, for URL user info and paths.
fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
