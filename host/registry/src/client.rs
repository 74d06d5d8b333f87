//! A client of the OCI distribution API that trusts nothing it is sent: manifests are capped and
//! checked for the Wasm layout, every blob's size and digest are checked as it streams in,
//! redirects are bounded and never downgrade to plain HTTP, and every operation has a deadline.
//! Authentication follows the registry's challenge (HTTP Basic, or a bearer token from the realm
//! it names) with the credentials of [`crate::credentials`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, LOCATION, WWW_AUTHENTICATE};
use reqwest::{Method, StatusCode, Url};

use crate::credentials::{Credential, Credentials};
use crate::digest::{Digest, Hasher};
use crate::error::RegistryError;
use crate::layout::{self, Artifact, MAX_MANIFEST_BYTES, Manifest};
use crate::reference::{Reference, Target, host_of};

/// How long one registry operation (a pull, a push, a listing) may take, unless
/// `CAIRN_REGISTRY_TIMEOUT` (seconds) says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// Redirects followed per request.
pub const MAX_REDIRECTS: usize = 5;
/// Pages of a tag listing read at most.
const MAX_TAG_PAGES: usize = 100;
/// The most bytes of a token response read.
const MAX_TOKEN_BYTES: u64 = 1024 * 1024;

/// How a [`Client`] talks to registries.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Speak plain HTTP to every registry, not only loopback ones.
    pub plain_http: bool,
    /// The deadline of one operation.
    pub timeout: Duration,
    pub credentials: Credentials,
}

impl Default for ClientOptions {
    fn default() -> ClientOptions {
        ClientOptions {
            plain_http: false,
            timeout: timeout_from_env(),
            credentials: Credentials::default(),
        }
    }
}

/// `CAIRN_REGISTRY_TIMEOUT` in seconds, else [`DEFAULT_TIMEOUT`].
pub fn timeout_from_env() -> Duration {
    std::env::var("CAIRN_REGISTRY_TIMEOUT")
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs_f64)
}

/// A component fetched from a registry and verified against its manifest.
#[derive(Debug, Clone)]
pub struct Pulled {
    /// The reference pinned to the manifest's digest.
    pub reference: Reference,
    pub manifest: Manifest,
    pub manifest_digest: Digest,
    /// The component, byte for byte the layer.
    pub component: Vec<u8>,
    /// Its SHA-256: the layer's digest.
    pub digest: Digest,
    /// The file name the layer is titled with, if any.
    pub title: Option<String>,
}

/// A registry client. Cheap to clone; clones share tokens.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    options: ClientOptions,
    /// Authorization that worked, per registry and scope.
    auth: Arc<Mutex<HashMap<(String, String), Auth>>>,
}

#[derive(Clone)]
enum Auth {
    Basic(Credential),
    Bearer(String),
}

impl Client {
    pub fn new(options: ClientOptions) -> Result<Client, RegistryError> {
        let plain_http = options.plain_http;
        let policy = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= MAX_REDIRECTS {
                attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
            } else if attempt.url().scheme() == "http"
                && !plain_http
                && !is_loopback(attempt.url().host_str().unwrap_or_default())
            {
                let to = attempt.url().to_string();
                attempt.error(format!("redirected to plain http ({to})"))
            } else if !matches!(attempt.url().scheme(), "http" | "https") {
                let to = attempt.url().to_string();
                attempt.error(format!("redirected to {to}"))
            } else {
                attempt.follow()
            }
        });
        let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| RegistryError::Http {
            url: String::new(),
            message: format!("TLS: {e}"),
        })?
        .with_root_certificates(rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        })
        .with_no_client_auth();
        let http = reqwest::Client::builder()
            .redirect(policy)
            .use_preconfigured_tls(tls)
            .connect_timeout(Duration::from_secs(15).min(options.timeout))
            .user_agent(concat!("cairn/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| RegistryError::Http {
                url: String::new(),
                message: chain(&e),
            })?;
        Ok(Client {
            http,
            options,
            auth: Arc::default(),
        })
    }

    /// `http://` for loopback registries (and every one with `plain_http`), else `https://`.
    fn base(&self, registry: &str) -> String {
        let scheme = if self.options.plain_http || is_loopback(host_of(registry)) {
            "http"
        } else {
            "https"
        };
        format!("{scheme}://{registry}")
    }

    /// Runs `operation` under the client's deadline.
    async fn deadline<T>(
        &self,
        what: &str,
        operation: impl Future<Output = Result<T, RegistryError>>,
    ) -> Result<T, RegistryError> {
        tokio::time::timeout(self.options.timeout, operation)
            .await
            .unwrap_or_else(|_| {
                Err(RegistryError::Timeout {
                    url: what.to_owned(),
                    seconds: self.options.timeout.as_secs().max(1),
                })
            })
    }

    /// Fetches the component `reference` names (a tag or a digest), checking the manifest's
    /// layout and the component's size and digest.
    pub async fn pull(&self, reference: &Reference) -> Result<Pulled, RegistryError> {
        self.deadline(&reference.to_string(), self.pull_inner(reference))
            .await
    }

    async fn pull_inner(&self, reference: &Reference) -> Result<Pulled, RegistryError> {
        let (bytes, manifest_digest) = self.manifest(reference).await?;
        let manifest = layout::check(&bytes).map_err(|why| RegistryError::Layout {
            reference: reference.to_string(),
            why,
        })?;
        let layer = &manifest.layers[0];
        let component = self
            .blob(reference, &layer.digest, layer.size, "component")
            .await?;
        Ok(Pulled {
            reference: reference.with_target(Target::Digest(manifest_digest)),
            digest: layer.digest,
            title: layer.annotations.get(layout::TITLE_ANNOTATION).cloned(),
            manifest_digest,
            component,
            manifest: manifest.clone(),
        })
    }

    /// The manifest `reference` names, capped at [`MAX_MANIFEST_BYTES`], and its digest
    /// (checked against the reference's digest, or the registry's `Docker-Content-Digest`).
    async fn manifest(&self, reference: &Reference) -> Result<(Vec<u8>, Digest), RegistryError> {
        let target = reference
            .target_segment()
            .unwrap_or_else(|| "latest".to_owned());
        let url = format!(
            "{}/v2/{}/manifests/{target}",
            self.base(&reference.registry),
            reference.repository
        );
        let accept = [
            layout::MANIFEST_MEDIA_TYPE,
            layout::INDEX_MEDIA_TYPE,
            layout::DOCKER_MANIFEST_MEDIA_TYPE,
        ]
        .join(", ");
        let response = self
            .send(reference, "pull", Method::GET, &url, |r| {
                r.header(ACCEPT, accept.as_str())
            })
            .await?;
        if response.status() == StatusCode::NOT_FOUND {
            return Err(RegistryError::NotFound {
                reference: reference.to_string(),
            });
        }
        let response = expect(response, &url, &[StatusCode::OK]).await?;
        let claimed = response
            .headers()
            .get("docker-content-digest")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let bytes = read_capped(response, &url, "manifest", MAX_MANIFEST_BYTES).await?;
        let digest = Digest::of(&bytes);
        let expected = match &reference.target {
            Some(Target::Digest(d)) => Some(d.to_string()),
            _ => claimed,
        };
        if let Some(expected) = expected
            && expected != digest.to_string()
        {
            return Err(RegistryError::DigestMismatch {
                url,
                what: "manifest".into(),
                expected,
                actual: digest.to_string(),
            });
        }
        Ok((bytes, digest))
    }

    /// Fetches blob `digest` of `reference`'s repository: exactly `size` bytes hashing to it.
    async fn blob(
        &self,
        reference: &Reference,
        digest: &Digest,
        size: u64,
        what: &str,
    ) -> Result<Vec<u8>, RegistryError> {
        let url = format!(
            "{}/v2/{}/blobs/{digest}",
            self.base(&reference.registry),
            reference.repository
        );
        let response = self
            .send(reference, "pull", Method::GET, &url, |r| r)
            .await?;
        let response = expect(response, &url, &[StatusCode::OK]).await?;
        let bytes = read_verified(response, &url, what, size, digest).await?;
        Ok(bytes)
    }

    /// Pushes `component` as `artifact` to `reference` (which must name a tag): the blobs the
    /// registry lacks, then the manifest. Returns the manifest's digest.
    pub async fn push(
        &self,
        reference: &Reference,
        artifact: &Artifact,
        component: &[u8],
    ) -> Result<Digest, RegistryError> {
        self.deadline(
            &reference.to_string(),
            self.push_inner(reference, artifact, component),
        )
        .await
    }

    async fn push_inner(
        &self,
        reference: &Reference,
        artifact: &Artifact,
        component: &[u8],
    ) -> Result<Digest, RegistryError> {
        let base = self.base(&reference.registry);
        for blob in [
            Bytes::copy_from_slice(&artifact.config),
            Bytes::copy_from_slice(component),
        ] {
            let digest = Digest::of(&blob);
            let url = format!("{base}/v2/{}/blobs/{digest}", reference.repository);
            let head = self
                .send(reference, "pull,push", Method::HEAD, &url, |r| r)
                .await?;
            if head.status() == StatusCode::OK {
                continue;
            }
            let start = format!("{base}/v2/{}/blobs/uploads/", reference.repository);
            let response = self
                .send(reference, "pull,push", Method::POST, &start, |r| {
                    r.header(reqwest::header::CONTENT_LENGTH, "0")
                })
                .await?;
            let response = expect(response, &start, &[StatusCode::ACCEPTED]).await?;
            let mut upload = location(&response, &start)?;
            upload
                .query_pairs_mut()
                .append_pair("digest", &digest.to_string());
            let upload = upload.to_string();
            let response = self
                .send(reference, "pull,push", Method::PUT, &upload, |r| {
                    r.header(CONTENT_TYPE, "application/octet-stream")
                        .body(blob.clone())
                })
                .await?;
            expect(response, &upload, &[StatusCode::CREATED]).await?;
        }
        let tag = reference
            .target_segment()
            .unwrap_or_else(|| "latest".to_owned());
        let url = format!("{base}/v2/{}/manifests/{tag}", reference.repository);
        let manifest = Bytes::copy_from_slice(&artifact.manifest);
        let response = self
            .send(reference, "pull,push", Method::PUT, &url, |r| {
                r.header(CONTENT_TYPE, layout::MANIFEST_MEDIA_TYPE)
                    .body(manifest.clone())
            })
            .await?;
        let response = expect(response, &url, &[StatusCode::CREATED, StatusCode::OK]).await?;
        if let Some(claimed) = response
            .headers()
            .get("docker-content-digest")
            .and_then(|v| v.to_str().ok())
            && claimed != artifact.manifest_digest.to_string()
        {
            return Err(RegistryError::DigestMismatch {
                url,
                what: "stored manifest".into(),
                expected: artifact.manifest_digest.to_string(),
                actual: claimed.to_owned(),
            });
        }
        Ok(artifact.manifest_digest)
    }

    /// Every tag of `reference`'s repository (following the registry's pagination).
    pub async fn tags(&self, reference: &Reference) -> Result<Vec<String>, RegistryError> {
        self.deadline(&reference.to_string(), self.tags_inner(reference))
            .await
    }

    async fn tags_inner(&self, reference: &Reference) -> Result<Vec<String>, RegistryError> {
        #[derive(serde::Deserialize)]
        struct Page {
            #[serde(default)]
            tags: Option<Vec<String>>,
        }
        let base = self.base(&reference.registry);
        let mut url = format!("{base}/v2/{}/tags/list", reference.repository);
        let mut tags = Vec::new();
        for _ in 0..MAX_TAG_PAGES {
            let response = self
                .send(reference, "pull", Method::GET, &url, |r| r)
                .await?;
            if response.status() == StatusCode::NOT_FOUND {
                return Err(RegistryError::NotFound {
                    reference: reference.to_string(),
                });
            }
            let response = expect(response, &url, &[StatusCode::OK]).await?;
            let next = next_page(response.headers(), &url);
            let bytes = read_capped(response, &url, "tag list", MAX_MANIFEST_BYTES).await?;
            let page: Page = serde_json::from_slice(&bytes).map_err(|e| RegistryError::Http {
                url: url.clone(),
                message: format!("the tag list is not valid JSON: {e}"),
            })?;
            tags.extend(page.tags.unwrap_or_default());
            match next {
                Some(next) => url = next,
                None => return Ok(tags),
            }
        }
        Err(RegistryError::Http {
            url,
            message: format!("the tag list has more than {MAX_TAG_PAGES} pages"),
        })
    }

    /// Downloads `url` (https, or http to a loopback address) and checks it hashes to
    /// `expected`.
    pub async fn download(&self, url: &str, expected: &Digest) -> Result<Vec<u8>, RegistryError> {
        let bytes = self.fetch_url(url).await?;
        let actual = Digest::of(&bytes);
        if actual != *expected {
            return Err(RegistryError::DigestMismatch {
                url: url.to_owned(),
                what: "download".into(),
                expected: expected.to_string(),
                actual: actual.to_string(),
            });
        }
        Ok(bytes)
    }

    /// Downloads `url` (https, or http to a loopback address), at most
    /// [`layout::MAX_COMPONENT_BYTES`]; the caller checks what it is.
    pub async fn fetch_url(&self, url: &str) -> Result<Vec<u8>, RegistryError> {
        let parsed = Url::parse(url).map_err(|e| RegistryError::Http {
            url: url.to_owned(),
            message: format!("not a URL: {e}"),
        })?;
        match parsed.scheme() {
            "https" => {}
            "http" if is_loopback(parsed.host_str().unwrap_or_default()) => {}
            "http" => {
                return Err(RegistryError::PlainHttp {
                    url: url.to_owned(),
                });
            }
            other => {
                return Err(RegistryError::Http {
                    url: url.to_owned(),
                    message: format!("{other}: is not a download scheme (https://)"),
                });
            }
        }
        self.deadline(url, async {
            let response = self
                .http
                .get(parsed.clone())
                .send()
                .await
                .map_err(|e| http_error(url, &e))?;
            let response = expect(response, url, &[StatusCode::OK]).await?;
            read_capped(response, url, "component", layout::MAX_COMPONENT_BYTES).await
        })
        .await
    }

    /// Sends a request built by `build`, answering an authentication challenge once.
    async fn send(
        &self,
        reference: &Reference,
        actions: &str,
        method: Method,
        url: &str,
        build: impl Fn(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, RegistryError> {
        let key = (
            reference.registry.clone(),
            format!("repository:{}:{actions}", reference.repository),
        );
        let request = |auth: Option<&Auth>| {
            let mut r = build(self.http.request(method.clone(), url));
            match auth {
                Some(Auth::Basic(c)) => r = r.basic_auth(&c.username, Some(&c.password)),
                Some(Auth::Bearer(t)) => r = r.bearer_auth(t),
                None => {}
            }
            r
        };
        let known = lock(&self.auth).get(&key).cloned();
        let response = request(known.as_ref())
            .send()
            .await
            .map_err(|e| http_error(url, &e))?;
        if response.status() != StatusCode::UNAUTHORIZED {
            return Ok(response);
        }
        let challenge = response
            .headers()
            .get(WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let credential = self.options.credentials.for_registry(&reference.registry);
        let unauthorized = |detail: String| RegistryError::Unauthorized {
            url: url.to_owned(),
            registry: reference.registry.clone(),
            status: 401,
            detail,
        };
        let auth = match parse_challenge(&challenge) {
            Some(Challenge::Basic) => match credential {
                Some(c) => Auth::Basic(c),
                None => return Err(unauthorized(" and no credentials are known for it".into())),
            },
            Some(Challenge::Bearer {
                realm,
                service,
                scope,
            }) => {
                let scope = scope.unwrap_or_else(|| key.1.clone());
                Auth::Bearer(
                    self.token(&realm, service.as_deref(), &scope, credential.as_ref())
                        .await?,
                )
            }
            None => {
                return Err(unauthorized(format!(
                    ": unsupported challenge {challenge:?}"
                )));
            }
        };
        let response = request(Some(&auth))
            .send()
            .await
            .map_err(|e| http_error(url, &e))?;
        if response.status() == StatusCode::UNAUTHORIZED
            || response.status() == StatusCode::FORBIDDEN
        {
            return Err(RegistryError::Unauthorized {
                url: url.to_owned(),
                registry: reference.registry.clone(),
                status: response.status().as_u16(),
                detail: if self
                    .options
                    .credentials
                    .for_registry(&reference.registry)
                    .is_some()
                {
                    " with the credentials given".into()
                } else {
                    String::new()
                },
            });
        }
        lock(&self.auth).insert(key, auth);
        Ok(response)
    }

    /// A bearer token from `realm` for `scope`.
    async fn token(
        &self,
        realm: &str,
        service: Option<&str>,
        scope: &str,
        credential: Option<&Credential>,
    ) -> Result<String, RegistryError> {
        let mut url = Url::parse(realm).map_err(|e| RegistryError::Http {
            url: realm.to_owned(),
            message: format!("the token realm is not a URL: {e}"),
        })?;
        if url.scheme() != "https"
            && !(url.scheme() == "http"
                && (self.options.plain_http || is_loopback(url.host_str().unwrap_or_default())))
        {
            return Err(RegistryError::PlainHttp {
                url: realm.to_owned(),
            });
        }
        {
            let mut query = url.query_pairs_mut();
            if let Some(service) = service {
                query.append_pair("service", service);
            }
            query.append_pair("scope", scope);
        }
        let mut request = self.http.get(url.clone());
        if let Some(c) = credential {
            request = request.basic_auth(&c.username, Some(&c.password));
        }
        let shown = url.as_str().to_owned();
        let response = request.send().await.map_err(|e| http_error(&shown, &e))?;
        let response = expect(response, &shown, &[StatusCode::OK]).await?;
        let bytes = read_capped(response, &shown, "token", MAX_TOKEN_BYTES).await?;
        #[derive(serde::Deserialize)]
        struct Token {
            token: Option<String>,
            access_token: Option<String>,
        }
        let token: Token = serde_json::from_slice(&bytes).map_err(|e| RegistryError::Http {
            url: shown.clone(),
            message: format!("the token response is not valid JSON: {e}"),
        })?;
        token
            .token
            .or(token.access_token)
            .filter(|t| !t.is_empty())
            .ok_or(RegistryError::Http {
                url: shown,
                message: "the token response has no token".into(),
            })
    }
}

enum Challenge {
    Basic,
    Bearer {
        realm: String,
        service: Option<String>,
        scope: Option<String>,
    },
}

/// `Basic realm=…` or `Bearer realm="…",service="…",scope="…"`.
fn parse_challenge(header: &str) -> Option<Challenge> {
    let (scheme, params) = header.trim().split_once(' ').unwrap_or((header.trim(), ""));
    if scheme.eq_ignore_ascii_case("basic") {
        return Some(Challenge::Basic);
    }
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let mut fields: HashMap<String, String> = HashMap::new();
    let mut rest = params;
    while let Some((name, after)) = rest.split_once('=') {
        let name = name
            .trim()
            .trim_start_matches(',')
            .trim()
            .to_ascii_lowercase();
        let after = after.trim_start();
        let (value, tail) = if let Some(quoted) = after.strip_prefix('"') {
            let end = quoted.find('"')?;
            (&quoted[..end], &quoted[end + 1..])
        } else {
            let end = after.find(',').unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        fields.insert(name, value.to_owned());
        rest = tail;
    }
    Some(Challenge::Bearer {
        realm: fields.remove("realm")?,
        service: fields.remove("service"),
        scope: fields.remove("scope"),
    })
}

/// `localhost`, 127.0.0.0/8 and ::1: where Cairn (as Docker) speaks plain HTTP to registries.
pub fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The `Location` of `response`, resolved against `url`.
fn location(response: &reqwest::Response, url: &str) -> Result<Url, RegistryError> {
    let bad = |message: String| RegistryError::Http {
        url: url.to_owned(),
        message,
    };
    let location = response
        .headers()
        .get(LOCATION)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| bad("the upload has no Location".into()))?;
    Url::parse(url)
        .and_then(|base| base.join(location))
        .map_err(|e| {
            bad(format!(
                "the upload's Location {location:?} is not a URL: {e}"
            ))
        })
}

/// The `Link: <…>; rel="next"` of a listing, resolved against `url`.
fn next_page(headers: &HeaderMap, url: &str) -> Option<String> {
    let link = headers.get("link")?.to_str().ok()?;
    let (target, params) = link.split_once(';')?;
    if !params.contains("rel=\"next\"") && !params.contains("rel=next") {
        return None;
    }
    let target = target.trim().strip_prefix('<')?.strip_suffix('>')?;
    let next = Url::parse(url).ok()?.join(target).ok()?;
    // Only the same registry: a listing cannot send the client elsewhere.
    (next.origin() == Url::parse(url).ok()?.origin()).then(|| next.to_string())
}

/// `response` if its status is one of `ok`, else an error with what the registry said.
async fn expect(
    response: reqwest::Response,
    url: &str,
    ok: &[StatusCode],
) -> Result<reqwest::Response, RegistryError> {
    if ok.contains(&response.status()) {
        return Ok(response);
    }
    let status = response.status().as_u16();
    // The registry's error body, cut short and stripped of control characters.
    let body = read_capped(response, url, "error", 4096)
        .await
        .unwrap_or_default();
    let text: String = String::from_utf8_lossy(&body)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(300)
        .collect();
    let text = text.trim();
    Err(RegistryError::Status {
        url: url.to_owned(),
        status,
        detail: if text.is_empty() {
            String::new()
        } else {
            format!(": {text}")
        },
    })
}

/// The body of `response`, refusing more than `limit` bytes as they arrive.
async fn read_capped(
    mut response: reqwest::Response,
    url: &str,
    what: &str,
    limit: u64,
) -> Result<Vec<u8>, RegistryError> {
    let too_large = || RegistryError::TooLarge {
        url: url.to_owned(),
        what: what.to_owned(),
        limit,
    };
    if response.content_length().is_some_and(|len| len > limit) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| http_error(url, &e))? {
        if body.len() as u64 + chunk.len() as u64 > limit {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The body of `response`: exactly `size` bytes whose digest is `digest`, hashed as they arrive.
async fn read_verified(
    mut response: reqwest::Response,
    url: &str,
    what: &str,
    size: u64,
    digest: &Digest,
) -> Result<Vec<u8>, RegistryError> {
    if let Some(len) = response.content_length()
        && len != size
    {
        return Err(RegistryError::SizeMismatch {
            url: url.to_owned(),
            what: what.to_owned(),
            expected: size,
            actual: len,
        });
    }
    let mut body = Vec::with_capacity(usize::try_from(size.min(64 << 20)).unwrap_or(0));
    let mut hasher = Hasher::default();
    while let Some(chunk) = response.chunk().await.map_err(|e| http_error(url, &e))? {
        if body.len() as u64 + chunk.len() as u64 > size {
            return Err(RegistryError::TooLarge {
                url: url.to_owned(),
                what: what.to_owned(),
                limit: size,
            });
        }
        hasher.update(&chunk);
        body.extend_from_slice(&chunk);
    }
    if body.len() as u64 != size {
        return Err(RegistryError::SizeMismatch {
            url: url.to_owned(),
            what: what.to_owned(),
            expected: size,
            actual: body.len() as u64,
        });
    }
    let actual = hasher.finish();
    if actual != *digest {
        return Err(RegistryError::DigestMismatch {
            url: url.to_owned(),
            what: what.to_owned(),
            expected: digest.to_string(),
            actual: actual.to_string(),
        });
    }
    Ok(body)
}

fn http_error(url: &str, error: &reqwest::Error) -> RegistryError {
    RegistryError::Http {
        url: url.to_owned(),
        message: chain(error),
    }
}

/// An error and its causes, `: `-separated (reqwest's own message omits the cause).
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_parse() {
        let Some(Challenge::Bearer {
            realm,
            service,
            scope,
        }) = parse_challenge(
            r#"Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull""#,
        )
        else {
            panic!("not bearer")
        };
        assert_eq!(realm, "https://auth.example/token");
        assert_eq!(service.as_deref(), Some("registry.example"));
        assert_eq!(scope.as_deref(), Some("repository:a/b:pull"));
        assert!(matches!(
            parse_challenge("Basic realm=\"r\""),
            Some(Challenge::Basic)
        ));
        assert!(parse_challenge("Negotiate").is_none());
        assert!(parse_challenge("Bearer service=\"x\"").is_none());
    }

    #[test]
    fn loopback_is_recognised() {
        for host in [
            "127.0.0.1",
            "127.9.9.9",
            "::1",
            "[::1]",
            "localhost",
            "LOCALHOST",
        ] {
            assert!(is_loopback(host), "{host}");
        }
        for host in [
            "10.0.0.1",
            "example.com",
            "::ffff:127.0.0.1",
            "localhost.example",
        ] {
            assert!(!is_loopback(host), "{host}");
        }
    }
}
