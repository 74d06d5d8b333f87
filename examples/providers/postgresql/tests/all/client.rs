//! The protocol client against real servers: results, errors and the session after them, each
//! login method, every sslmode against certificates made for the test, timeouts, and hostile
//! peers (a fake listener stands in only where a real server cannot misbehave on demand).

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener};
use std::time::{Duration, Instant};

use postgresql::client::{
    Client, ConnectConfig, ErrorKind, PgError, SslMode, quote_ident, quote_literal,
};

use crate::pgserver::{
    CLEARTEXT_USER, GSS_USER, MD5_USER, PgServer, SUPERUSER, SUPERUSER_PASSWORD, ServerCert,
    TLS_ONLY_USER, free_port, shared,
};

fn connect(config: &ConnectConfig) -> Client {
    Client::connect(config).unwrap_or_else(|e| panic!("login failed: {e} ({:?})", e.kind))
}

fn connect_err(config: &ConnectConfig) -> PgError {
    match Client::connect(config) {
        Ok(client) => panic!("login succeeded unexpectedly: {client:?}"),
        Err(e) => e,
    }
}

/// The single value of a one-row, one-column query.
fn scalar(client: &mut Client, sql: &str) -> Option<String> {
    let rows = client.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    assert_eq!(rows.len(), 1, "{sql}");
    rows[0].value(0).map(str::to_owned)
}

fn with_tls(
    server: &PgServer,
    user: (&str, &str),
    mode: SslMode,
    root: Option<String>,
) -> ConnectConfig {
    let mut config = server.config(user.0, user.1);
    config.sslmode = mode;
    config.sslrootcert = root;
    config
}

const SUPER: (&str, &str) = (SUPERUSER, SUPERUSER_PASSWORD);

#[test]
fn query_returns_text_rows_by_column() {
    let mut client = shared().superuser();
    let rows = client
        .query("SELECT 1 AS one, NULL::text AS nothing, 'é''s' AS text UNION ALL SELECT 2, 'x', ''")
        .unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].columns(), ["one", "nothing", "text"]);
    assert_eq!(rows[0].get("one"), Some("1"));
    assert_eq!(rows[0].get("nothing"), None);
    assert_eq!(rows[0].get("text"), Some("é's"));
    assert_eq!(rows[1].get("nothing"), Some("x"));
    assert_eq!(rows[1].get("text"), Some(""));
    assert_eq!(rows[0].get("no such column"), None);

    // Several statements: the rows of the last one with a result set, even an empty one.
    let rows = client
        .query("CREATE TEMP TABLE t (id int); INSERT INTO t VALUES (1), (2); SELECT id FROM t ORDER BY id; DELETE FROM t")
        .unwrap();
    assert_eq!(
        rows.iter().map(|r| r.get("id")).collect::<Vec<_>>(),
        [Some("1"), Some("2")]
    );
    assert!(
        client
            .query("SELECT 1; SELECT 1 WHERE false")
            .unwrap()
            .is_empty()
    );
    assert!(
        client.query("").unwrap().is_empty(),
        "an empty query is no error"
    );
    client.execute("DROP TABLE t").unwrap();
}

#[test]
fn startup_reports_version_and_parameters() {
    let mut client = shared().superuser();
    let shown: u32 = scalar(&mut client, "SHOW server_version_num")
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(client.server_version_num(), shown);
    assert!(shown >= 90600, "{shown}");
    assert_eq!(client.parameter("client_encoding"), Some("UTF8"));
    assert_eq!(
        client.parameter("application_name"),
        Some("cairn-postgresql-client-tests")
    );
    let pid: i32 = scalar(&mut client, "SELECT pg_backend_pid()")
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(client.backend_pid(), Some(pid));
    assert!(!client.is_tls());
}

#[test]
fn server_errors_carry_sqlstate_and_leave_the_session_usable() {
    let mut client = shared().superuser();
    let error = client.query("SELECT * FROM no_such_table").unwrap_err();
    assert_eq!(error.kind, ErrorKind::Server);
    assert_eq!(error.code.as_deref(), Some("42P01"));
    assert!(error.message.contains("no_such_table"), "{error}");
    assert!(error.to_string().ends_with("(SQLSTATE 42P01)"), "{error}");
    assert_eq!(scalar(&mut client, "SELECT 1").as_deref(), Some("1"));

    // DETAIL is appended; a failing statement stops the rest of the string.
    client
        .execute("CREATE TEMP TABLE k (id int PRIMARY KEY); INSERT INTO k VALUES (1)")
        .unwrap();
    let error = client
        .execute("INSERT INTO k VALUES (1); INSERT INTO k VALUES (2)")
        .unwrap_err();
    assert_eq!(error.code.as_deref(), Some("23505"));
    assert!(
        error
            .message
            .contains("\nDETAIL: Key (id)=(1) already exists."),
        "{error}"
    );
    assert_eq!(
        scalar(&mut client, "SELECT count(*) FROM k").as_deref(),
        Some("1")
    );

    // HINT too.
    let error = client.query("SELECT lenght('x')").unwrap_err();
    assert_eq!(error.code.as_deref(), Some("42883"));
    assert!(error.message.contains("\nHINT: "), "{error}");

    // In a transaction block the server refuses statements until ROLLBACK, as always.
    let error = client.execute("BEGIN; SELECT 1/0").unwrap_err();
    assert_eq!(error.code.as_deref(), Some("22012"));
    assert_eq!(
        client.execute("SELECT 1").unwrap_err().code.as_deref(),
        Some("25P02")
    );
    client.execute("ROLLBACK").unwrap();

    // NUL cannot be sent; the session is untouched.
    let error = client.query("SELECT 'a\0b'").unwrap_err();
    assert_eq!(
        (error.kind, error.code.as_deref()),
        (ErrorKind::Server, Some("22021"))
    );
    assert_eq!(scalar(&mut client, "SELECT 2").as_deref(), Some("2"));
}

#[test]
fn notices_are_collected() {
    let mut client = shared().superuser();
    client
        .execute("DROP ROLE IF EXISTS no_such_role_for_notice")
        .unwrap();
    let notices = client.take_notices();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(notices[0].starts_with("NOTICE: "), "{notices:?}");
    assert!(
        notices[0].contains("no_such_role_for_notice"),
        "{notices:?}"
    );
    assert!(client.take_notices().is_empty());
}

#[test]
fn scram_and_md5_logins() {
    let server = shared();
    let (role, password) = server.fresh_role();
    let mut client = connect(&server.config(&role, &password));
    assert_eq!(scalar(&mut client, "SELECT current_user"), Some(role));

    let mut admin = server.superuser();
    let stored = scalar(
        &mut admin,
        &format!(
            "SELECT left(rolpassword, 3) FROM pg_authid WHERE rolname = '{}'",
            MD5_USER.0
        ),
    );
    assert_eq!(
        stored.as_deref(),
        Some("md5"),
        "the md5 user's password is stored as md5"
    );
    let mut client = connect(&server.config(MD5_USER.0, MD5_USER.1));
    assert_eq!(
        scalar(&mut client, "SELECT current_user").as_deref(),
        Some(MD5_USER.0)
    );
}

#[test]
fn wrong_password_is_an_auth_error_that_never_shows_the_password() {
    let server = shared();
    let (role, _) = server.fresh_role();
    for (user, wrong) in [
        (role.as_str(), "wrong-scram-pw-8812"),
        (MD5_USER.0, "wrong-md5-pw-3391"),
    ] {
        let config = server.config(user, wrong);
        let error = connect_err(&config);
        assert_eq!(error.kind, ErrorKind::Auth, "{error}");
        assert_eq!(error.code.as_deref(), Some("28P01"), "{error}");
        assert!(
            error.message.contains("password authentication failed"),
            "{error}"
        );
        for shown in [
            error.to_string(),
            format!("{error:?}"),
            format!("{config:?}"),
        ] {
            assert!(!shown.contains(wrong), "the password leaked: {shown}");
        }
    }

    let mut config = server.config(&role, "");
    config.password = None;
    let error = connect_err(&config);
    assert_eq!(error.kind, ErrorKind::Auth);
    assert!(error.message.contains("none is configured"), "{error}");
}

#[test]
fn cleartext_password_only_over_tls() {
    let server = shared();
    let error = connect_err(&server.config(CLEARTEXT_USER.0, CLEARTEXT_USER.1));
    assert_eq!(error.kind, ErrorKind::Auth);
    assert!(
        error
            .message
            .contains("cleartext over an unencrypted connection"),
        "{error}"
    );
    assert!(!error.message.contains(CLEARTEXT_USER.1));

    let mut client = connect(&with_tls(server, CLEARTEXT_USER, SslMode::Require, None));
    assert!(client.is_tls());
    assert_eq!(
        scalar(&mut client, "SELECT current_user").as_deref(),
        Some(CLEARTEXT_USER.0)
    );
}

#[test]
fn unsupported_methods_are_named() {
    let error = connect_err(&shared().config(GSS_USER, "unused"));
    assert_eq!(error.kind, ErrorKind::Auth);
    assert!(error.message.contains("GSSAPI"), "{error}");
}

#[test]
fn unreachable_port_is_a_connect_error_naming_the_address() {
    let port = free_port();
    let mut config = shared().config(SUPERUSER, SUPERUSER_PASSWORD);
    config.port = port;
    let error = connect_err(&config);
    assert_eq!(error.kind, ErrorKind::Connect);
    assert!(
        error
            .message
            .starts_with(&format!("connecting to 127.0.0.1:{port}: ")),
        "{error}"
    );
    assert!(error.message.contains("refused"), "{error}");
}

#[test]
fn connect_timeout_bounds_a_silent_server() {
    // Accepts connections and never answers.
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let _keep = std::thread::spawn(move || {
        let held: Vec<_> = listener.incoming().take(2).collect();
        std::thread::sleep(Duration::from_secs(30));
        drop(held);
    });
    for mode in [SslMode::Disable, SslMode::Require] {
        let mut config = shared().config(SUPERUSER, SUPERUSER_PASSWORD);
        config.port = port;
        config.sslmode = mode;
        config.connect_timeout = Duration::from_millis(300);
        let started = Instant::now();
        let error = connect_err(&config);
        assert_eq!(error.kind, ErrorKind::Connect, "{error}");
        assert!(error.message.contains("timed out"), "{error}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }
}

/// Runs `answer` as a fake server for one connection on a fresh port.
fn fake_server(answer: impl FnOnce(std::net::TcpStream) + Send + 'static) -> u16 {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        if let Ok((stream, _)) = listener.accept() {
            answer(stream);
        }
    });
    port
}

#[test]
fn hostile_or_tls_less_servers_give_errors_not_panics() {
    let config_for = |port, mode| {
        let mut config = shared().config(SUPERUSER, SUPERUSER_PASSWORD);
        config.port = port;
        config.sslmode = mode;
        config
    };
    // A server without TLS: require fails naming that.
    let port = fake_server(|mut stream| {
        let mut request = [0u8; 8];
        let _ = stream.read_exact(&mut request);
        let _ = stream.write_all(b"N");
        std::thread::sleep(Duration::from_millis(500));
    });
    let error = connect_err(&config_for(port, SslMode::Require));
    assert_eq!(error.kind, ErrorKind::Tls);
    assert!(error.message.contains("does not support SSL"), "{error}");

    // A message announcing 1 GiB is refused before anything is allocated.
    let port = fake_server(|mut stream| {
        let mut startup = [0u8; 256];
        let _ = stream.read(&mut startup);
        let _ = stream.write_all(&[b'R', 0x40, 0, 0, 0]);
        std::thread::sleep(Duration::from_millis(500));
    });
    let error = connect_err(&config_for(port, SslMode::Disable));
    assert_eq!(error.kind, ErrorKind::Protocol);
    assert!(error.message.contains("exceeds the limit"), "{error}");

    // Garbage, then a closed connection.
    let port = fake_server(|mut stream| {
        let mut startup = [0u8; 256];
        let _ = stream.read(&mut startup);
        let _ = stream.write_all(b"R\0\0\0\x08\0\0\0\x63");
    });
    let error = connect_err(&config_for(port, SslMode::Disable));
    assert_eq!(error.kind, ErrorKind::Protocol, "{error}");
}

#[test]
fn sslmode_require_encrypts_without_verifying() {
    let server = shared();
    let mut client = connect(&with_tls(server, SUPER, SslMode::Require, None));
    assert!(client.is_tls());
    assert_eq!(
        scalar(
            &mut client,
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()"
        )
        .as_deref(),
        Some("t")
    );
    // libpq: given a root certificate, require verifies the chain like verify-ca.
    let error = connect_err(&with_tls(
        server,
        SUPER,
        SslMode::Require,
        Some(server.other_ca_pem()),
    ));
    assert_eq!(error.kind, ErrorKind::Tls);
    assert!(error.message.contains("not trusted"), "{error}");
}

#[test]
fn sslmode_verify_ca_checks_the_chain_but_not_the_name() {
    let server = shared();
    // The certificate names only `localhost`; verify-ca does not care.
    let mut client = connect(&with_tls(
        server,
        SUPER,
        SslMode::VerifyCa,
        Some(server.ca_pem()),
    ));
    assert!(client.is_tls());
    assert_eq!(scalar(&mut client, "SELECT 1").as_deref(), Some("1"));

    let error = connect_err(&with_tls(
        server,
        SUPER,
        SslMode::VerifyCa,
        Some(server.other_ca_pem()),
    ));
    assert_eq!(error.kind, ErrorKind::Tls);
    assert!(
        error.message.contains("certificate is not trusted"),
        "{error}"
    );
    assert!(!error.message.contains(SUPERUSER_PASSWORD));
}

#[test]
fn sslmode_verify_full_checks_the_host_name() {
    let server = shared();
    let mut config = with_tls(server, SUPER, SslMode::VerifyFull, Some(server.ca_pem()));
    let error = connect_err(&config);
    assert_eq!(error.kind, ErrorKind::Tls);
    assert!(error.message.contains("host name mismatch"), "{error}");
    assert!(error.message.contains("127.0.0.1"), "{error}");

    config.host = "localhost".to_owned();
    let mut client = connect(&config);
    assert!(client.is_tls());
    assert_eq!(scalar(&mut client, "SELECT 1").as_deref(), Some("1"));
}

#[test]
fn sslmode_prefer_and_allow() {
    let server = shared();
    assert!(connect(&with_tls(server, SUPER, SslMode::Prefer, None)).is_tls());
    // libpq: a failed handshake under prefer is retried without TLS.
    let client = connect(&with_tls(
        server,
        SUPER,
        SslMode::Prefer,
        Some(server.other_ca_pem()),
    ));
    assert!(!client.is_tls());
    // allow starts in the clear.
    assert!(!connect(&with_tls(server, SUPER, SslMode::Allow, None)).is_tls());
}

#[test]
fn hostssl_only_logins_need_tls() {
    let server = shared();
    let error = connect_err(&with_tls(server, TLS_ONLY_USER, SslMode::Disable, None));
    assert_eq!(error.kind, ErrorKind::Auth);
    assert_eq!(error.code.as_deref(), Some("28000"));
    assert!(error.message.contains("no encryption"), "{error}");
    // allow retries with TLS after the plain login is rejected; require goes straight there.
    for mode in [SslMode::Allow, SslMode::Prefer, SslMode::Require] {
        let mut client = connect(&with_tls(server, TLS_ONLY_USER, mode, None));
        assert!(client.is_tls());
        assert_eq!(
            scalar(&mut client, "SELECT current_user").as_deref(),
            Some(TLS_ONLY_USER.0)
        );
    }
}

#[test]
fn a_self_signed_ca_certificate_can_be_its_own_root() {
    let server = PgServer::start(ServerCert::SelfSigned);
    let mut config = with_tls(
        &server,
        SUPER,
        SslMode::VerifyFull,
        Some(server.server_cert_pem()),
    );
    config.host = "localhost".to_owned();
    assert!(connect(&config).is_tls());
    config.sslrootcert = Some(server.other_ca_pem());
    assert_eq!(connect_err(&config).kind, ErrorKind::Tls);
}

#[test]
fn hostile_role_names_and_passwords_round_trip() {
    let server = shared();
    let mut admin = server.superuser();
    let name = "x\"; DROP ROLE postgres; --";
    let password = "it's a \\ back'slash\\' pass";
    admin
        .execute(&format!(
            "CREATE ROLE {} LOGIN PASSWORD {}",
            quote_ident(name),
            quote_literal(password)
        ))
        .unwrap();
    let rows = admin
        .query(&format!(
            "SELECT rolname FROM pg_roles WHERE rolname = {}",
            quote_literal(name)
        ))
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].get("rolname"), Some(name));
    assert_eq!(
        scalar(
            &mut admin,
            "SELECT count(*) FROM pg_roles WHERE rolname = 'postgres'"
        )
        .as_deref(),
        Some("1")
    );
    // The password went through quote_literal intact: the role logs in with it.
    let mut client = connect(&server.config(name, password));
    assert_eq!(
        scalar(&mut client, "SELECT current_user").as_deref(),
        Some(name)
    );
    drop(client);

    for text in ["plain", "it's", "back\\slash", "\\'", "'\\", "E'x'", ""] {
        assert_eq!(
            scalar(&mut admin, &format!("SELECT {}", quote_literal(text))).as_deref(),
            Some(text),
            "{text:?}"
        );
    }
    admin
        .execute(&format!("DROP ROLE {}", quote_ident(name)))
        .unwrap();
}

#[test]
fn close_ends_the_session() {
    let server = shared();
    let client = server.superuser();
    let pid = client.backend_pid().unwrap();
    client.close();
    let mut admin = server.superuser();
    let deadline = Instant::now() + Duration::from_secs(10);
    while scalar(
        &mut admin,
        &format!("SELECT count(*) FROM pg_stat_activity WHERE pid = {pid}"),
    )
    .as_deref()
        != Some("0")
    {
        assert!(Instant::now() < deadline, "session {pid} still open");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_terminated_session_reports_why_and_stays_closed() {
    let server = shared();
    let mut victim = server.superuser();
    let pid = victim.backend_pid().unwrap();
    server
        .superuser()
        .execute(&format!("SELECT pg_terminate_backend({pid})"))
        .unwrap();
    let error = victim.query("SELECT 1").unwrap_err();
    // The FATAL message, unless the socket's reset overtook it.
    match error.kind {
        ErrorKind::Server => assert_eq!(error.code.as_deref(), Some("57P01"), "{error}"),
        kind => assert_eq!(kind, ErrorKind::Protocol, "{error}"),
    }
    let error = victim.query("SELECT 1").unwrap_err();
    assert_eq!(error.kind, ErrorKind::Protocol);
    assert!(error.message.contains("unusable"), "{error}");
}
