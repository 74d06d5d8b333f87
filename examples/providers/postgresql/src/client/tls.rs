//! TLS for `sslmode`, inside the guest: rustls 0.23 with `rustls-rustcrypto` 0.0.2-alpha.
//!
//! Why in the guest and not wasi:tls from the host: verify-ca needs the user's `sslrootcert`,
//! and wasmtime-wasi-tls's client cannot take a custom root CA. Why RustCrypto and not `ring`:
//! ring needs clang to build for wasm32 (not installed here; CI would need it too); this builds
//! with rustc alone. Cost, measured 2026-11-28 (release, opt-level "s" + LTO, 2-core machine
//! under load): the component grows from 1,308 KB to 2,247 KB (+939 KB). Connecting, SCRAM
//! login and `SELECT 1` on 127.0.0.1 (TLS 1.3, RSA-2048 certificate), median (best): natively
//! 16 (6) ms plain, 20 (10) ms TLS; in wasmtime 48, 21 (12) ms plain, 25 (19) ms TLS.
//! The crate is an alpha wrapper over RustCrypto's primitives (unaudited as a whole); the
//! client only verifies signatures, so RSA decryption timing (RUSTSEC-2023-0071) does not
//! apply. Swapping in ring later is a one-line provider change.

use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{verify_server_cert_signed_by_trust_anchor, verify_server_name};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};

use super::wire::{Socket, remaining};
use super::{ErrorKind, PgError, SslMode};

/// How the server's certificate is checked, from `sslmode` and `sslrootcert` as libpq does it.
pub(super) enum Verification {
    /// `require` (and `allow`/`prefer`) without `sslrootcert`: encryption only.
    None,
    /// `verify-ca`, or a weaker mode given `sslrootcert` (libpq verifies whenever a root
    /// certificate is available): the chain must end at one of these certificates.
    Chain(Roots),
    /// `verify-full`: the chain, and the host name (or IP address) in the certificate.
    ChainAndHost(Roots),
}

/// The certificates of `sslrootcert`.
#[derive(Clone)]
pub(super) struct Roots {
    store: Arc<RootCertStore>,
    /// The certificates as given: a server certificate identical to one of them is trusted even
    /// when it is a CA certificate itself (PostgreSQL's documented self-signed setup copies
    /// `server.crt` to the client's `root.crt`; OpenSSL accepts that, webpki alone would not).
    certificates: Arc<[CertificateDer<'static>]>,
}

impl Verification {
    /// The verification `sslmode` asks for, or a `Tls` error when it cannot be done.
    pub(super) fn for_mode(
        mode: SslMode,
        sslrootcert: Option<&str>,
    ) -> Result<Verification, PgError> {
        if mode == SslMode::Disable {
            // No TLS, so sslrootcert is not even read (as in libpq).
            return Ok(Verification::None);
        }
        let roots = sslrootcert.map(parse_roots).transpose()?;
        Ok(match (mode, roots) {
            (SslMode::VerifyFull, Some(roots)) => Verification::ChainAndHost(roots),
            // Without sslrootcert, the public CAs (Mozilla's list, compiled in): what the
            // published provider does with the system's roots; the sandbox has no system files.
            (SslMode::VerifyFull, None) => Verification::ChainAndHost(Roots::public()),
            (SslMode::VerifyCa, None) => Verification::Chain(Roots::public()),
            (_, Some(roots)) => Verification::Chain(roots),
            (_, None) => Verification::None,
        })
    }
}

/// Runs the TLS handshake on `tcp` (after the server accepted the SSLRequest) for `host`.
pub(super) fn handshake(
    tcp: TcpStream,
    host: &str,
    verification: &Verification,
    deadline: Option<Instant>,
) -> Result<rustls::StreamOwned<rustls::ClientConnection, Socket>, PgError> {
    let provider = Arc::new(rustls_rustcrypto::provider());
    let (roots, check_host) = match verification {
        Verification::None => (None, false),
        Verification::Chain(roots) => (Some(roots.clone()), false),
        Verification::ChainAndHost(roots) => (Some(roots.clone()), true),
    };
    let server_name = match ServerName::try_from(host.to_owned()) {
        Ok(name) => name,
        Err(_) if check_host => {
            return Err(tls_error(format!(
                "sslmode=verify-full: {host:?} is neither a DNS name nor an IP address to \
                 check the certificate against"
            )));
        }
        // Without a name check the name only feeds SNI; an IP address sends none.
        Err(_) => match tcp.peer_addr() {
            Ok(address) => ServerName::IpAddress(address.ip().into()),
            Err(e) => return Err(tls_error(format!("cannot start TLS with {host}: {e}"))),
        },
    };
    let verifier = Arc::new(PgCertVerifier {
        roots,
        check_host,
        algorithms: provider.signature_verification_algorithms,
    });
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_error(format!("cannot configure TLS: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    // What libpq 17 sends; servers before 17 ignore it.
    config.alpn_protocols = vec![b"postgresql".to_vec()];
    let connection = rustls::ClientConnection::new(Arc::new(config), server_name)
        .map_err(|e| tls_error(format!("cannot start TLS with {host}: {e}")))?;
    // The handshake's last flight stays unsent until the startup message joins it.
    let mut stream = rustls::StreamOwned::new(connection, Socket::new(tcp));
    while stream.conn.is_handshaking() {
        if let Some(deadline) = deadline {
            // Each round trip gets only the time left.
            let left = remaining(deadline).unwrap_or(Duration::from_nanos(1));
            let _ = stream.sock.tcp.set_read_timeout(Some(left));
            let _ = stream.sock.tcp.set_write_timeout(Some(left));
        }
        if let Err(e) = stream.conn.complete_io(&mut stream.sock) {
            // The alert rustls wrote tells the server why (its log says "unknown ca"...).
            let _ = stream.sock.send_pending();
            return Err(handshake_error(host, e));
        }
    }
    Ok(stream)
}

/// Says what failed in terms of the user's settings: untrusted certificate, wrong name, ...
fn handshake_error(host: &str, error: std::io::Error) -> PgError {
    if matches!(
        error.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    ) {
        return PgError {
            kind: ErrorKind::Connect,
            code: None,
            message: format!("timed out in the TLS handshake with {host}"),
        };
    }
    let Some(tls) = error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    else {
        return tls_error(format!("TLS handshake with {host} failed: {error}"));
    };
    let message = match tls {
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => format!(
            "the server's certificate is not trusted: certificate signed by unknown authority \
             (no CA in sslrootcert, or without it no public CA, signed it; host {host})"
        ),
        rustls::Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => format!(
            "host name mismatch: the server's certificate is not valid for {host:?} \
             (sslmode=verify-full): {tls}"
        ),
        rustls::Error::InvalidCertificate(
            CertificateError::Expired | CertificateError::ExpiredContext { .. },
        ) => format!("the server's certificate has expired (host {host})"),
        rustls::Error::InvalidCertificate(other) => {
            format!("the server's certificate is not valid (host {host}): {other:?}")
        }
        other => format!("TLS handshake with {host} failed: {other}"),
    };
    tls_error(message)
}

impl Roots {
    /// The public certificate authorities (webpki-roots: Mozilla's list).
    fn public() -> Roots {
        Roots {
            store: Arc::new(RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            }),
            certificates: Arc::from([]),
        }
    }
}

/// Reads `sslrootcert`'s PEM text.
fn parse_roots(pem: &str) -> Result<Roots, PgError> {
    let certificates = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| tls_error(format!("sslrootcert is not valid PEM: {e}")))?;
    if certificates.is_empty() {
        return Err(tls_error(
            "sslrootcert holds no PEM certificate (-----BEGIN CERTIFICATE-----)".to_owned(),
        ));
    }
    let mut store = RootCertStore::empty();
    for (index, certificate) in certificates.iter().enumerate() {
        store.add(certificate.clone()).map_err(|e| {
            tls_error(format!(
                "sslrootcert's certificate #{} cannot be used as a root: {e}",
                index + 1
            ))
        })?;
    }
    Ok(Roots {
        store: Arc::new(store),
        certificates: certificates.into(),
    })
}

/// Checks the server's certificate as [`Verification`] says; handshake signatures are always
/// checked (they prove the server holds the certificate's key).
#[derive(Debug)]
struct PgCertVerifier {
    roots: Option<Roots>,
    check_host: bool,
    algorithms: WebPkiSupportedAlgorithms,
}

impl std::fmt::Debug for Roots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Roots({} certificates)", self.certificates.len())
    }
}

impl ServerCertVerifier for PgCertVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(roots) = &self.roots else {
            return Ok(ServerCertVerified::assertion());
        };
        let certificate = ParsedCertificate::try_from(end_entity)?;
        if let Err(error) = verify_server_cert_signed_by_trust_anchor(
            &certificate,
            &roots.store,
            intermediates,
            now,
            self.algorithms.all,
        ) {
            // webpki checks validity dates before basic constraints, so this error means the
            // certificate is in date; being one of the given roots, it is trusted as such.
            let given_root = roots
                .certificates
                .iter()
                .any(|root| root.as_ref() == end_entity.as_ref());
            if !(given_root && is_ca_used_as_end_entity(&error)) {
                return Err(error);
            }
        }
        if self.check_host {
            verify_server_name(&certificate, server_name)?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

fn is_ca_used_as_end_entity(error: &rustls::Error) -> bool {
    match error {
        rustls::Error::InvalidCertificate(CertificateError::Other(other)) => matches!(
            other.0.downcast_ref::<webpki::Error>(),
            Some(webpki::Error::CaUsedAsEndEntity)
        ),
        _ => false,
    }
}

pub(super) fn tls_error(message: String) -> PgError {
    PgError {
        kind: ErrorKind::Tls,
        code: None,
        message,
    }
}

pub(super) fn mode_name(mode: SslMode) -> &'static str {
    match mode {
        SslMode::Disable => "disable",
        SslMode::Allow => "allow",
        SslMode::Prefer => "prefer",
        SslMode::Require => "require",
        SslMode::VerifyCa => "verify-ca",
        SslMode::VerifyFull => "verify-full",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_modes_without_a_root_certificate_trust_the_public_cas() {
        for mode in [SslMode::VerifyCa, SslMode::VerifyFull] {
            let verification = Verification::for_mode(mode, None)
                .ok()
                .expect("verification");
            let (Verification::Chain(roots) | Verification::ChainAndHost(roots)) = verification
            else {
                panic!("{mode:?} must verify");
            };
            assert!(roots.store.len() > 100, "{}", roots.store.len());
        }
        assert!(matches!(
            Verification::for_mode(SslMode::Require, None),
            Ok(Verification::None)
        ));
        assert!(matches!(
            Verification::for_mode(SslMode::Disable, Some("not pem")),
            Ok(Verification::None)
        ));
    }

    #[test]
    fn sslrootcert_must_hold_a_certificate() {
        let error = Verification::for_mode(SslMode::VerifyCa, Some("not pem"))
            .err()
            .expect("an error");
        assert_eq!(error.kind, ErrorKind::Tls);
        assert!(error.message.contains("no PEM certificate"), "{error}");
    }

    #[test]
    fn the_provider_has_tls13_suites() {
        assert!(
            rustls_rustcrypto::provider()
                .cipher_suites
                .iter()
                .any(|suite| suite.version() == &rustls::version::TLS13)
        );
    }
}
