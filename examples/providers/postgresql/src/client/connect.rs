//! Opening a session: TCP, `sslmode`'s TLS negotiation (with libpq's fallbacks), the startup
//! message and the password exchange (SCRAM-SHA-256, md5, cleartext over TLS only).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Instant;

use fallible_iterator::FallibleIterator;
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, SCRAM_SHA_256, ScramSha256};
use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;

use super::tls::{self, Verification};
use super::wire::{Socket, Transport, Wire, remaining};
use super::{ConnectConfig, ErrorKind, PgError, SslMode, notice_text, server_error};

/// What a successful login leaves behind.
pub(super) struct Session {
    pub(super) wire: Wire,
    pub(super) parameters: BTreeMap<String, String>,
    pub(super) backend_key: Option<(i32, i32)>,
    pub(super) notices: Vec<String>,
}

/// Whether (and how firmly) one connection attempt asks for TLS.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Encryption {
    Plain,
    /// `prefer`: TLS if the server agrees, else plain on the same connection.
    IfOffered,
    /// `require` and stronger, and `allow`'s second attempt.
    Required,
}

/// Why one attempt failed, as far as the `sslmode` fallbacks care.
enum AttemptError {
    /// The TLS handshake failed (`prefer` then retries without TLS, as libpq does).
    Tls(PgError),
    /// The server rejected the startup with an ErrorResponse (`allow` then retries with TLS).
    Rejected(PgError),
    Other(PgError),
}

impl AttemptError {
    fn into_error(self) -> PgError {
        match self {
            AttemptError::Tls(e) | AttemptError::Rejected(e) | AttemptError::Other(e) => e,
        }
    }
}

impl From<PgError> for AttemptError {
    fn from(error: PgError) -> AttemptError {
        AttemptError::Other(error)
    }
}

/// Connects and logs in as `config` says. `connect_timeout` (zero: none, as in libpq) bounds
/// the whole of it, fallback attempts included, except host name resolution, which std cannot
/// bound (in the guest the host's call deadline does).
pub(super) fn connect(config: &ConnectConfig) -> Result<Session, PgError> {
    let deadline =
        (!config.connect_timeout.is_zero()).then(|| Instant::now() + config.connect_timeout);
    let verification = Verification::for_mode(config.sslmode, config.sslrootcert.as_deref())?;
    let attempt = |encryption| attempt(config, deadline, encryption, &verification);
    let result = match config.sslmode {
        SslMode::Disable => attempt(Encryption::Plain),
        // libpq: plain first; if the server rejects that login (say pg_hba.conf has only
        // `hostssl` lines), once more over TLS.
        SslMode::Allow => match attempt(Encryption::Plain) {
            Err(AttemptError::Rejected(plain)) if retry_with_tls(&plain) => {
                attempt(Encryption::Required).map_err(|over_tls| {
                    let over_tls = over_tls.into_error();
                    AttemptError::Other(PgError {
                        message: format!(
                            "{} (without TLS); over TLS (sslmode=allow): {}",
                            plain.message, over_tls.message
                        ),
                        ..over_tls
                    })
                })
            }
            other => other,
        },
        // libpq: TLS if offered; if the handshake fails, once more without TLS.
        SslMode::Prefer => match attempt(Encryption::IfOffered) {
            Err(AttemptError::Tls(_)) => attempt(Encryption::Plain),
            other => other,
        },
        SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => attempt(Encryption::Required),
    };
    result.map_err(AttemptError::into_error)
}

/// Whether `allow`'s plain login failed in a way TLS may fix: an authorization error (class
/// 28, as pg_hba.conf's "no entry ... no encryption"), but not a wrong password (TLS would not
/// change it, and a second failed login only adds noise to the server's log). Other errors
/// (no such database) would only be hidden behind the retry's.
fn retry_with_tls(error: &PgError) -> bool {
    error
        .code
        .as_deref()
        .is_some_and(|code| code.starts_with("28") && code != "28P01")
}

/// One connection: TCP, maybe TLS, then the login.
fn attempt(
    config: &ConnectConfig,
    deadline: Option<Instant>,
    encryption: Encryption,
    verification: &Verification,
) -> Result<Session, AttemptError> {
    let peer = format!("{}:{}", config.host, config.port);
    let tcp = open_tcp(&config.host, config.port, &peer, deadline)?;
    let transport = match encryption {
        Encryption::Plain => Transport::Plain(Socket::new(tcp)),
        Encryption::IfOffered | Encryption::Required => {
            match negotiate_tls(tcp, &peer, deadline)? {
                Negotiated::Accepted(tcp) => {
                    let stream = tls::handshake(tcp, &config.host, verification, deadline)
                        .map_err(|e| match e.kind {
                            ErrorKind::Tls => AttemptError::Tls(e),
                            _ => AttemptError::Other(e),
                        })?;
                    Transport::Tls(Box::new(stream))
                }
                Negotiated::Refused(tcp) if encryption == Encryption::IfOffered => {
                    Transport::Plain(Socket::new(tcp))
                }
                // A server from before SSLRequest existed closes the connection after its
                // ErrorResponse; `prefer` starts over without TLS.
                Negotiated::NotUnderstood if encryption == Encryption::IfOffered => {
                    Transport::Plain(Socket::new(open_tcp(
                        &config.host,
                        config.port,
                        &peer,
                        deadline,
                    )?))
                }
                Negotiated::Refused(_) | Negotiated::NotUnderstood => {
                    return Err(AttemptError::Other(tls::tls_error(format!(
                        "the server at {peer} does not support SSL, and sslmode={} requires it",
                        tls::mode_name(config.sslmode)
                    ))));
                }
            }
        }
    };
    let mut wire = Wire::new(transport, peer);
    wire.set_deadline(deadline)?;
    let session = login(wire, config)?;
    Ok(session)
}

/// Resolves `host` and connects to the first address that answers.
fn open_tcp(
    host: &str,
    port: u16,
    peer: &str,
    deadline: Option<Instant>,
) -> Result<TcpStream, PgError> {
    let connect_error = |message: String| PgError {
        kind: ErrorKind::Connect,
        code: None,
        message,
    };
    let addresses: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| connect_error(format!("resolving {host}: {e}")))?
        .collect();
    if addresses.is_empty() {
        return Err(connect_error(format!("resolving {host}: no addresses")));
    }
    let mut failures = Vec::new();
    for address in &addresses {
        let result = match deadline {
            None => TcpStream::connect(address),
            Some(deadline) => match remaining(deadline) {
                Some(left) => TcpStream::connect_timeout(address, left),
                None => return Err(connect_error(format!("timed out connecting to {peer}"))),
            },
        };
        // On wasm32-wasip2, std's connect_timeout can return a socket whose connect failed
        // (measured with wasmtime 48: refused connects come back Ok, and SO_ERROR then holds
        // "Connection refused"); natively SO_ERROR is clear after a successful connect.
        let result = result.and_then(|tcp| match tcp.take_error() {
            Ok(Some(error)) => Err(error),
            _ => Ok(tcp),
        });
        match result {
            Ok(tcp) => {
                // Login and queries are request/response exchanges of small messages.
                let _ = tcp.set_nodelay(true);
                return Ok(tcp);
            }
            Err(e) => failures.push(if addresses.len() == 1 {
                e.to_string()
            } else {
                format!("{address}: {e}")
            }),
        }
    }
    Err(connect_error(format!(
        "connecting to {peer}: {}",
        failures.join("; ")
    )))
}

enum Negotiated {
    /// 'S': start the TLS handshake.
    Accepted(TcpStream),
    /// 'N': the server has no TLS; the connection stays usable in the clear.
    Refused(TcpStream),
    /// 'E': a very old server that does not know SSLRequest (the connection is closed).
    NotUnderstood,
}

/// Sends SSLRequest and reads the one-byte answer.
fn negotiate_tls(
    mut tcp: TcpStream,
    peer: &str,
    deadline: Option<Instant>,
) -> Result<Negotiated, PgError> {
    // The first exchange on a new connection: failing here is failing to reach the server.
    let broken = |e: std::io::Error| PgError {
        kind: ErrorKind::Connect,
        code: None,
        message: match e.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
                format!("timed out asking {peer} for SSL")
            }
            std::io::ErrorKind::UnexpectedEof => {
                format!("asking {peer} for SSL: the server closed the connection")
            }
            _ => format!("asking {peer} for SSL: {e}"),
        },
    };
    let timeout = match deadline {
        None => None,
        Some(deadline) => Some(remaining(deadline).ok_or_else(|| PgError {
            kind: ErrorKind::Connect,
            code: None,
            message: format!("timed out asking {peer} for SSL"),
        })?),
    };
    tcp.set_read_timeout(timeout).map_err(broken)?;
    tcp.set_write_timeout(timeout).map_err(broken)?;
    let mut request = bytes::BytesMut::new();
    frontend::ssl_request(&mut request);
    tcp.write_all(&request).map_err(broken)?;
    // Exactly one byte, unbuffered: anything the server (or a man in the middle) sends after
    // 'S' must go to the TLS layer, never be read as plaintext protocol (CVE-2021-23222).
    let mut answer = [0u8; 1];
    tcp.read_exact(&mut answer).map_err(broken)?;
    match answer[0] {
        b'S' => Ok(Negotiated::Accepted(tcp)),
        b'N' => Ok(Negotiated::Refused(tcp)),
        b'E' => Ok(Negotiated::NotUnderstood),
        other => Err(tls::tls_error(format!(
            "the server at {peer} answered SSLRequest with {:?}, neither 'S' nor 'N'",
            other as char
        ))),
    }
}

/// Where a SCRAM exchange stands.
enum Scram {
    NotStarted,
    /// Client-first sent, waiting for the server-first message.
    Started(Box<ScramSha256>),
    /// Client-final sent, waiting for the server's signature.
    Proving(Box<ScramSha256>),
    /// The server proved it knows the password.
    Verified,
}

/// Sends the startup message and answers the server until it is ready for queries.
fn login(mut wire: Wire, config: &ConnectConfig) -> Result<Session, AttemptError> {
    wire.send(|buf| {
        frontend::startup_message(
            [
                ("user", config.user.as_str()),
                ("database", config.database.as_str()),
                ("application_name", config.application_name.as_str()),
                ("client_encoding", "UTF8"),
            ],
            buf,
        )
    })?;
    let mut parameters = BTreeMap::new();
    let mut backend_key = None;
    let mut notices = Vec::new();
    let mut scram = Scram::NotStarted;
    let auth_error = |message: String| {
        AttemptError::Other(PgError {
            kind: ErrorKind::Auth,
            code: None,
            message,
        })
    };
    let password = |method: &str| {
        config.password.as_deref().ok_or_else(|| {
            auth_error(format!(
                "the server asks for a password ({method}) for user {:?} and none is configured",
                config.user
            ))
        })
    };
    loop {
        match wire.read_message()? {
            Message::AuthenticationOk => match scram {
                Scram::NotStarted | Scram::Verified => {}
                // A server that skips SCRAM's last step has not proven it knows the password.
                Scram::Started(_) | Scram::Proving(_) => {
                    return Err(auth_error(format!(
                        "the server at {} accepted the login before completing SCRAM-SHA-256 \
                         (it never proved it knows the password); refusing the connection",
                        wire.peer
                    )));
                }
            },
            Message::AuthenticationCleartextPassword => {
                if !wire.is_tls() {
                    return Err(auth_error(format!(
                        "the server at {} asks for the password in cleartext over an \
                         unencrypted connection; refusing to send it (use an sslmode that \
                         encrypts, such as require, or scram-sha-256 in pg_hba.conf)",
                        wire.peer
                    )));
                }
                let password = password("cleartext")?;
                wire.send(|buf| frontend::password_message(password.as_bytes(), buf))?;
            }
            Message::AuthenticationMd5Password(body) => {
                let password = password("md5")?;
                let hashed = md5_hash(config.user.as_bytes(), password.as_bytes(), body.salt());
                wire.send(|buf| frontend::password_message(hashed.as_bytes(), buf))?;
            }
            Message::AuthenticationSasl(body) => {
                let mechanisms: Vec<String> = body
                    .mechanisms()
                    .map(|m| Ok(m.to_owned()))
                    .collect()
                    .map_err(|e| wire.protocol(format!("malformed SASL mechanism list: {e}")))?;
                // SCRAM-SHA-256-PLUS (channel binding) is not implemented; servers that offer
                // it always offer plain SCRAM-SHA-256 too, which the gs2 header "n" selects.
                if !mechanisms.iter().any(|m| m == SCRAM_SHA_256) {
                    return Err(auth_error(format!(
                        "the server at {} offers only the SASL mechanisms {mechanisms:?}; this \
                         client supports SCRAM-SHA-256",
                        wire.peer
                    )));
                }
                let exchange = ScramSha256::new(
                    password("SCRAM-SHA-256")?.as_bytes(),
                    ChannelBinding::unsupported(),
                );
                wire.send(|buf| {
                    frontend::sasl_initial_response(SCRAM_SHA_256, exchange.message(), buf)
                })?;
                scram = Scram::Started(Box::new(exchange));
            }
            Message::AuthenticationSaslContinue(body) => {
                let Scram::Started(mut exchange) = scram else {
                    return Err(AttemptError::Other(
                        wire.protocol("unexpected SASLContinue message".to_owned()),
                    ));
                };
                exchange.update(body.data()).map_err(|e| {
                    auth_error(format!("SCRAM-SHA-256 with {} failed: {e}", wire.peer))
                })?;
                wire.send(|buf| frontend::sasl_response(exchange.message(), buf))?;
                scram = Scram::Proving(exchange);
            }
            Message::AuthenticationSaslFinal(body) => {
                let Scram::Proving(mut exchange) = scram else {
                    return Err(AttemptError::Other(
                        wire.protocol("unexpected SASLFinal message".to_owned()),
                    ));
                };
                exchange.finish(body.data()).map_err(|e| {
                    auth_error(format!(
                        "the server at {} did not prove it knows the password \
                         (SCRAM-SHA-256 server signature): {e}",
                        wire.peer
                    ))
                })?;
                scram = Scram::Verified;
            }
            Message::AuthenticationKerberosV5 => return Err(unsupported("Kerberos V5", &wire)),
            Message::AuthenticationScmCredential => {
                return Err(unsupported("SCM credential", &wire));
            }
            Message::AuthenticationGss | Message::AuthenticationGssContinue(_) => {
                return Err(unsupported("GSSAPI", &wire));
            }
            Message::AuthenticationSspi => return Err(unsupported("SSPI", &wire)),
            Message::BackendKeyData(body) => {
                backend_key = Some((body.process_id(), body.secret_key()));
            }
            Message::ParameterStatus(body) => {
                let (name, value) = body
                    .name()
                    .and_then(|name| Ok((name.to_owned(), body.value()?.to_owned())))
                    .map_err(|e| wire.protocol(format!("malformed ParameterStatus: {e}")))?;
                parameters.insert(name, value);
            }
            Message::NoticeResponse(body) => {
                if let Ok(notice) = notice_text(body.fields()) {
                    notices.push(notice);
                }
            }
            Message::ErrorResponse(body) => {
                let mut error = server_error(body.fields())
                    .map_err(|e| wire.protocol(format!("malformed ErrorResponse: {e}")))?
                    .error;
                // Class 28: invalid authorization (wrong password, no pg_hba.conf entry).
                if error.code.as_deref().is_some_and(|c| c.starts_with("28")) {
                    error.kind = ErrorKind::Auth;
                }
                return Err(AttemptError::Rejected(error));
            }
            Message::ReadyForQuery(_) => {
                // Logged in: queries may take as long as they take (the host's deadline, and
                // the server's statement_timeout, bound them).
                wire.set_deadline(None)?;
                return Ok(Session {
                    wire,
                    parameters,
                    backend_key,
                    notices,
                });
            }
            _ => {
                return Err(AttemptError::Other(
                    wire.protocol("unexpected message during login".to_owned()),
                ));
            }
        }
    }
}

fn unsupported(method: &str, wire: &Wire) -> AttemptError {
    AttemptError::Other(PgError {
        kind: ErrorKind::Auth,
        code: None,
        message: format!(
            "the server at {} asks for {method} authentication, which this client does not \
             support (use scram-sha-256 or md5 in pg_hba.conf)",
            wire.peer
        ),
    })
}
