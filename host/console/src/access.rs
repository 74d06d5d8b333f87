//! Who may talk to the console: the access token, the `Host` and `Origin` checks, read-only
//! methods, and the security headers every response carries.
//!
//! The console listens on 127.0.0.1 only, but a port on loopback is reachable from every web
//! page the user's browser opens. So every request must present the random token `cairn console`
//! printed (in the URL once, then as a `SameSite=Strict` cookie), must name this server in `Host`
//! (a DNS-rebinding page names its own domain), and must not come from another origin.

use std::fmt;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The cookie that carries the token after the first visit.
pub const COOKIE: &str = "cairn-console";

/// The Content-Security-Policy of every response: scripts, styles and connections from this
/// server only, no inline script or style, no frames, no forms, no plug-ins.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

/// The secret a request must present, and the addresses this server answers to.
#[derive(Clone)]
pub struct Access {
    token: String,
    /// `127.0.0.1:PORT` and `localhost:PORT`: the only `Host` values accepted.
    hosts: [String; 2],
    /// `http://127.0.0.1:PORT` and `http://localhost:PORT`: the only `Origin` values accepted.
    origins: [String; 2],
}

impl fmt::Debug for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Access")
            .field("token", &"[redacted]")
            .field("hosts", &self.hosts)
            .finish()
    }
}

impl Access {
    /// Access for a server on `127.0.0.1:port` with the given token.
    pub fn new(token: String, port: u16) -> Access {
        Access {
            token,
            hosts: [format!("127.0.0.1:{port}"), format!("localhost:{port}")],
            origins: [
                format!("http://127.0.0.1:{port}"),
                format!("http://localhost:{port}"),
            ],
        }
    }

    /// A fresh random token: 32 bytes from the operating system, as hex.
    pub fn random_token() -> Result<String, getrandom::Error> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes)?;
        Ok(hex::encode(bytes))
    }

    /// The URL to open: the token rides in the query once and is swapped for a cookie.
    pub fn url(&self) -> String {
        format!("http://{}/?token={}", self.hosts[0], self.token)
    }

    fn token_matches(&self, presented: &str) -> bool {
        constant_time_eq(self.token.as_bytes(), presented.as_bytes())
    }

    /// Why a request is refused, if it is.
    fn refusal(
        &self,
        method: &Method,
        headers: &HeaderMap,
        query: Option<&str>,
    ) -> Option<Refusal> {
        if method != Method::GET && method != Method::HEAD {
            return Some(Refusal::Method);
        }
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
        if !host.is_some_and(|host| self.hosts.iter().any(|ours| ours == host)) {
            return Some(Refusal::Host);
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let ours = origin
                .to_str()
                .is_ok_and(|o| self.origins.iter().any(|ours| ours == o));
            if !ours {
                return Some(Refusal::Origin);
            }
        }
        // Browsers say where a request comes from; a page elsewhere never gets an answer.
        if headers
            .get("sec-fetch-site")
            .is_some_and(|site| site.as_bytes() == b"cross-site" || site.as_bytes() == b"same-site")
        {
            return Some(Refusal::Origin);
        }
        let presented = cookie_token(headers)
            .or_else(|| bearer_token(headers))
            .or_else(|| query.and_then(query_token));
        match presented {
            Some(token) if self.token_matches(token) => None,
            _ => Some(Refusal::Token),
        }
    }
}

/// Why a request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    Method,
    Host,
    Origin,
    Token,
}

impl Refusal {
    fn response(self) -> Response {
        let (status, text) = match self {
            Refusal::Method => (
                StatusCode::METHOD_NOT_ALLOWED,
                "the console is read-only: only GET and HEAD are answered",
            ),
            Refusal::Host => (
                StatusCode::FORBIDDEN,
                "refused: the Host header does not name this console (127.0.0.1 or localhost with its port)",
            ),
            Refusal::Origin => (
                StatusCode::FORBIDDEN,
                "refused: the request comes from another site",
            ),
            Refusal::Token => (
                StatusCode::UNAUTHORIZED,
                "missing or wrong access token: open the URL `cairn console` printed",
            ),
        };
        let mut response = (status, text).into_response();
        if self == Refusal::Method {
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        }
        response
    }
}

/// The middleware: refuses what [`Access`] refuses, swaps a token in the URL for a cookie (so
/// it leaves the address bar and the history), and adds the security headers to every answer.
pub async fn guard(State(access): State<Access>, request: Request, next: Next) -> Response {
    let query = request.uri().query().map(str::to_owned);
    let mut response = match access.refusal(request.method(), request.headers(), query.as_deref()) {
        Some(refusal) => refusal.response(),
        None if query.as_deref().and_then(query_token).is_some() => {
            // First visit: set the cookie and load the same page without the token.
            let location =
                without_token(request.uri().path(), query.as_deref().unwrap_or_default());
            let cookie = format!(
                "{COOKIE}={}; Path=/; HttpOnly; SameSite=Strict",
                access.token
            );
            let mut response = Response::new(Body::empty());
            *response.status_mut() = StatusCode::SEE_OTHER;
            let headers = response.headers_mut();
            if let Ok(location) = HeaderValue::from_str(&location) {
                headers.insert(header::LOCATION, location);
            }
            if let Ok(cookie) = HeaderValue::from_str(&cookie) {
                headers.insert(header::SET_COOKIE, cookie);
            }
            response
        }
        None => next.run(request).await,
    };
    secure_headers(response.headers_mut());
    response
}

/// Where the first visit goes once the token is a cookie: the same path and query without the
/// token, and never another site (`//host` would be one).
fn without_token(path: &str, query: &str) -> String {
    let rest: Vec<&str> = query
        .split('&')
        .filter(|pair| !pair.is_empty() && !pair.starts_with("token="))
        .collect();
    let mut location = if path.starts_with('/') && !path.starts_with("//") && !path.contains('\\') {
        path.to_owned()
    } else {
        "/".to_owned()
    };
    if !rest.is_empty() {
        location.push('?');
        location.push_str(&rest.join("&"));
    }
    location
}

/// The headers every response carries.
fn secure_headers(headers: &mut HeaderMap) {
    let fixed = [
        (
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY),
        ),
        (
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ),
        (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
        (
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
    ];
    for (name, value) in fixed {
        headers.insert(name, value);
    }
    headers.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
}

fn cookie_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value)
}

fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
}

fn query_token(query: &str) -> Option<&str> {
    query
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))
}

/// Compares without stopping at the first difference, so timing does not reveal a prefix.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access() -> Access {
        Access::new("t0ken".into(), 4000)
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        map
    }

    #[test]
    fn each_check_refuses_what_it_guards() {
        let a = access();
        let good = [
            ("host", "127.0.0.1:4000"),
            ("cookie", "x=1; cairn-console=t0ken"),
        ];
        // Name, method, headers, query, the refusal expected.
        type Case<'a> = (
            &'a str,
            Method,
            Vec<(&'a str, &'a str)>,
            Option<&'a str>,
            Option<Refusal>,
        );
        let cases: &[Case] = &[
            ("cookie", Method::GET, good.to_vec(), None, None),
            (
                "localhost",
                Method::GET,
                vec![
                    ("host", "localhost:4000"),
                    ("cookie", "cairn-console=t0ken"),
                ],
                None,
                None,
            ),
            (
                "bearer",
                Method::GET,
                vec![
                    ("host", "127.0.0.1:4000"),
                    ("authorization", "Bearer t0ken"),
                ],
                None,
                None,
            ),
            (
                "query",
                Method::GET,
                vec![("host", "127.0.0.1:4000")],
                Some("a=1&token=t0ken"),
                None,
            ),
            (
                "same origin",
                Method::GET,
                [&good[..], &[("origin", "http://127.0.0.1:4000")]].concat(),
                None,
                None,
            ),
            (
                "no token",
                Method::GET,
                vec![("host", "127.0.0.1:4000")],
                None,
                Some(Refusal::Token),
            ),
            (
                "wrong token",
                Method::GET,
                vec![
                    ("host", "127.0.0.1:4000"),
                    ("cookie", "cairn-console=t0kem"),
                ],
                None,
                Some(Refusal::Token),
            ),
            (
                "token prefix",
                Method::GET,
                vec![("host", "127.0.0.1:4000"), ("cookie", "cairn-console=t0ke")],
                None,
                Some(Refusal::Token),
            ),
            (
                "rebinding",
                Method::GET,
                vec![
                    ("host", "evil.example:4000"),
                    ("cookie", "cairn-console=t0ken"),
                ],
                None,
                Some(Refusal::Host),
            ),
            (
                "other port",
                Method::GET,
                vec![
                    ("host", "127.0.0.1:4001"),
                    ("cookie", "cairn-console=t0ken"),
                ],
                None,
                Some(Refusal::Host),
            ),
            (
                "no host",
                Method::GET,
                vec![("cookie", "cairn-console=t0ken")],
                None,
                Some(Refusal::Host),
            ),
            (
                "cross origin",
                Method::GET,
                [&good[..], &[("origin", "http://evil.example")]].concat(),
                None,
                Some(Refusal::Origin),
            ),
            (
                "null origin",
                Method::GET,
                [&good[..], &[("origin", "null")]].concat(),
                None,
                Some(Refusal::Origin),
            ),
            (
                "cross site fetch",
                Method::GET,
                [&good[..], &[("sec-fetch-site", "cross-site")]].concat(),
                None,
                Some(Refusal::Origin),
            ),
            (
                "post",
                Method::POST,
                good.to_vec(),
                None,
                Some(Refusal::Method),
            ),
            (
                "delete",
                Method::DELETE,
                good.to_vec(),
                None,
                Some(Refusal::Method),
            ),
        ];
        for (name, method, pairs, query, expected) in cases {
            assert_eq!(
                a.refusal(method, &headers(pairs), *query),
                *expected,
                "case {name}"
            );
        }
    }

    #[test]
    fn the_first_visit_stays_on_this_site_without_the_token() {
        let cases = [
            ("/", "token=t", "/"),
            ("/", "a=1&token=t&b=2", "/?a=1&b=2"),
            ("//evil.example/x", "token=t", "/"),
            ("/\\evil.example", "token=t", "/"),
            ("/app.js", "token=t", "/app.js"),
        ];
        for (path, query, expected) in cases {
            assert_eq!(without_token(path, query), expected, "{path}?{query}");
        }
    }

    #[test]
    fn the_token_is_long_random_and_never_debug_printed() {
        let one = Access::random_token().unwrap();
        let two = Access::random_token().unwrap();
        assert_eq!(one.len(), 64);
        assert_ne!(one, two);
        let access = Access::new(one.clone(), 1);
        assert!(!format!("{access:?}").contains(&one));
        assert!(access.url().ends_with(&format!("/?token={one}")));
    }
}
