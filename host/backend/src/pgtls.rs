//! TLS for the PostgreSQL backend, with libpq's `sslmode` meanings (rustls, no OpenSSL):
//! * `disable` — never;
//! * `allow`, `prefer` (the default) — if the server offers it, without checking its
//!   certificate (as libpq does);
//! * `require` — always, without checking the certificate, unless `sslrootcert` names a CA file:
//!   then as `verify-ca` (as libpq does);
//! * `verify-ca` — always, the certificate signed by `sslrootcert`'s CAs (else the public web
//!   roots);
//! * `verify-full` — as `verify-ca`, and the certificate names the host connected to.
//!
//! Signatures of the handshake are always verified: "without checking the certificate" means
//! without checking who issued it, not accepting a forged handshake.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::{BackendError, Result};
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    /// Parses a `sslmode` value (`allow` is `prefer`: Cairn never needs to try plain text
    /// first).
    pub fn parse(value: &str) -> Result<SslMode> {
        Ok(match value {
            "disable" => SslMode::Disable,
            "allow" | "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => {
                return Err(BackendError::Config(format!(
                    "sslmode {other:?} is not an SSL mode (disable, allow, prefer, require, verify-ca, verify-full)"
                )));
            }
        })
    }

    /// The driver's mode: whether TLS is tried, and whether it is required.
    pub fn driver(self) -> postgres::config::SslMode {
        match self {
            SslMode::Disable => postgres::config::SslMode::Disable,
            SslMode::Prefer => postgres::config::SslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => {
                postgres::config::SslMode::Require
            }
        }
    }
}

/// How a connection's TLS is set up.
#[derive(Debug, Clone)]
pub struct TlsSettings {
    pub mode: SslMode,
    /// `sslrootcert` / `PGSSLROOTCERT`: a PEM file of the CAs to trust.
    pub root_cert: Option<PathBuf>,
}

impl TlsSettings {
    /// The rustls client configuration for these settings (`None`: no TLS).
    pub fn client_config(&self) -> Result<Option<ClientConfig>> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| tls_error("setting up TLS", e))?;
        let checks = match (self.mode, &self.root_cert) {
            (SslMode::Disable, _) => return Ok(None),
            (SslMode::Prefer, _) | (SslMode::Require, None) => None,
            (SslMode::Require | SslMode::VerifyCa, _) => Some(false),
            (SslMode::VerifyFull, _) => Some(true),
        };
        let Some(check_name) = checks else {
            let verifier = Arc::new(AnyIssuer { provider });
            return Ok(Some(
                builder
                    .dangerous()
                    .with_custom_certificate_verifier(verifier)
                    .with_no_client_auth(),
            ));
        };
        let roots = Arc::new(self.roots()?);
        let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider)
            .build()
            .map_err(|e| tls_error("setting up certificate verification", e))?;
        let verifier: Arc<dyn ServerCertVerifier> = if check_name {
            webpki
        } else {
            Arc::new(AnyName { inner: webpki })
        };
        Ok(Some(
            builder
                .dangerous()
                .with_custom_certificate_verifier(verifier)
                .with_no_client_auth(),
        ))
    }

    fn roots(&self) -> Result<RootCertStore> {
        let mut roots = RootCertStore::empty();
        match &self.root_cert {
            Some(path) => {
                for cert in read_pem(path)? {
                    roots.add(cert).map_err(|e| {
                        tls_error(
                            format!(
                                "sslrootcert {}: a certificate is not usable",
                                path.display()
                            ),
                            e,
                        )
                    })?;
                }
            }
            None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        }
        Ok(roots)
    }
}

fn read_pem(path: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| tls_error(format!("reading sslrootcert {}", path.display()), e))?;
    if certs.is_empty() {
        return Err(BackendError::Config(format!(
            "sslrootcert {} holds no PEM certificate",
            path.display()
        )));
    }
    Ok(certs)
}

/// A failed TLS setup step, with its cause.
fn tls_error(
    what: impl Into<String>,
    source: impl std::error::Error + Send + Sync + 'static,
) -> BackendError {
    BackendError::Tls {
        what: what.into(),
        source: Box::new(source),
    }
}

/// `prefer` / `require`: any issuer, any name — but the handshake's signatures are checked.
#[derive(Debug)]
struct AnyIssuer {
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for AnyIssuer {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// `verify-ca`: the chain must lead to a trusted CA; the name is not checked.
#[derive(Debug)]
struct AnyName {
    inner: Arc<WebPkiServerVerifier>,
}

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.inner.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_as_libpq_names_them() {
        for (text, mode) in [
            ("disable", SslMode::Disable),
            ("allow", SslMode::Prefer),
            ("prefer", SslMode::Prefer),
            ("require", SslMode::Require),
            ("verify-ca", SslMode::VerifyCa),
            ("verify-full", SslMode::VerifyFull),
        ] {
            assert_eq!(SslMode::parse(text).unwrap(), mode, "{text}");
        }
        assert!(SslMode::parse("on").is_err());
    }

    #[test]
    fn a_root_file_without_certificates_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("root.crt");
        std::fs::write(&file, "not a certificate\n").unwrap();
        let settings = TlsSettings {
            mode: SslMode::VerifyFull,
            root_cert: Some(file),
        };
        let err = settings.client_config().unwrap_err().to_string();
        assert!(err.contains("holds no PEM certificate"), "{err}");
        let none = TlsSettings {
            mode: SslMode::Disable,
            root_cert: None,
        };
        assert!(none.client_config().unwrap().is_none());
    }
}
