//! Outbound HTTP for guests (`wasi:http/outgoing-handler`): the allow-list, the address check,
//! and a send path that connects to exactly the address it checked.
//!
//! # What a request must pass
//!
//! 1. Its host matches the manifest's `capabilities.http` (providers) and the user's grant
//!    (`cairn:grants.<package>.http`, or `cairn:program.http` for a program).
//! 2. The host is resolved **once** (an IP literal is its own address). Unless the user granted
//!    that exact host, every address it resolves to must be a public internet address: not
//!    loopback, private, link-local, unique-local, site-local, shared (CGNAT), multicast,
//!    broadcast, unspecified, `0.0.0.0/8`, documentation, benchmarking or otherwise reserved —
//!    and not an IPv6 address that embeds such an IPv4 address (IPv4-mapped `::ffff:0:0/96`,
//!    IPv4-compatible `::/96`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`, Teredo `2001::/32`). See
//!    [`non_public`] for the full table.
//! 3. The connection is made to one of exactly those addresses: the HTTP client is given a
//!    socket address, never the name, so a DNS answer that changes between the check and the
//!    connection (DNS rebinding) cannot redirect it. TLS still verifies the certificate against
//!    the host name the guest asked for.
//! 4. At most [`MAX_CONNECTIONS`] requests of one provider (all its instances) or program are
//!    open at once, so a guest cannot exhaust the host's file descriptors; more fail with
//!    `connection-limit-reached`.
//!
//! A refusal in step 1 or 2 is recorded as a violation, which fails the call even if the guest
//! carries on.
//!
//! # Outbound HTTP reaches only what was granted and checked
//!
//! A guest's request goes out only if its host is requested (providers) and granted; the host is
//! resolved once, and unless the user granted that exact host every address must be public — not
//! loopback, private, link-local, unique- or site-local, CGNAT, multicast, broadcast, unspecified,
//! `0.0.0.0/8`, documentation, benchmarking or reserved, and not an IPv6 address embedding such an
//! IPv4 address (mapped, compatible, NAT64, 6to4, Teredo). The client is handed the checked socket
//! address, never the name, so DNS rebinding cannot redirect it; at most 64 requests of one
//! provider or program are open at once.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::uri::Scheme;
use http_body_util::BodyExt;
use tokio::net::TcpStream;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

use crate::grants::{HttpDecision, Sandbox};
use crate::state::{CallShared, GuestBudget};

/// HTTP requests one provider (across its instances) or program may have open at once.
pub const MAX_CONNECTIONS: usize = 64;

/// The longest host name a request may name (DNS allows 253 bytes).
const MAX_HOST_BYTES: usize = 255;

/// How long resolving, connecting and the TLS handshake may take unless the guest's request
/// options say otherwise (the call's own deadline bounds it anyway).
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(600);

/// The `wasi:http` hooks of one instance: the allow-list, the address check and the send path.
pub(crate) struct HttpGuard {
    pub sandbox: Arc<Sandbox>,
    pub shared: Arc<CallShared>,
    pub budget: Arc<GuestBudget>,
}

type IoFuture = Box<dyn Future<Output = wasmtime_wasi_http::Result<()>> + Send>;
type SendFuture = Box<
    dyn Future<Output = wasmtime_wasi_http::Result<(http::Response<WasiBody>, IoFuture)>> + Send,
>;

impl WasiHttpHooks for HttpGuard {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        _fut: IoFuture,
    ) -> SendFuture {
        let grant_key = self.sandbox.grant_key.clone();
        let Some(host) = request
            .uri()
            .host()
            .map(|h| h.trim_start_matches('[').trim_end_matches(']').to_owned())
            .filter(|h| h.len() <= MAX_HOST_BYTES)
        else {
            self.shared.violation(format!(
                "HTTP request without a host (or with one longer than {MAX_HOST_BYTES} bytes) is not granted"
            ));
            return Box::new(async { Err(Error::HttpRequestUriInvalid) });
        };
        let tls = match request.uri().scheme() {
            Some(s) if *s == Scheme::HTTP => false,
            Some(s) if *s == Scheme::HTTPS => true,
            _ => return Box::new(async { Err(Error::HttpProtocolError) }),
        };
        let port = request
            .uri()
            .port_u16()
            .unwrap_or(if tls { 443 } else { 80 });
        let explicit = match self.sandbox.http.decide(&host, port) {
            HttpDecision::Allow { explicit } => explicit,
            HttpDecision::NotRequested if self.sandbox.is_program() => {
                self.shared.violation(format!(
                    "HTTP request to {host} is not granted (grant it under {grant_key}.http)"
                ));
                return Box::new(async { Err(Error::HttpRequestDenied) });
            }
            HttpDecision::NotRequested => {
                self.shared.violation(format!(
                    "HTTP request to {host} is not granted (the provider's manifest does not request it under capabilities.http)"
                ));
                return Box::new(async { Err(Error::HttpRequestDenied) });
            }
            HttpDecision::NotGranted => {
                self.shared.violation(format!(
                    "HTTP request to {host} is not granted (grant it under {grant_key}.http)"
                ));
                return Box::new(async { Err(Error::HttpRequestDenied) });
            }
        };
        let Ok(permit) = self.budget.connections.clone().try_acquire_owned() else {
            tracing::debug!(provider = %self.shared.provider, "refused an HTTP request: {MAX_CONNECTIONS} are open");
            return Box::new(async { Err(Error::ConnectionLimitReached) });
        };
        let shared = self.shared.clone();
        let connect_timeout = options
            .and_then(|o| o.connect_timeout)
            .unwrap_or(DEFAULT_CONNECT_TIMEOUT);
        Box::new(async move {
            let addrs = tokio::time::timeout(connect_timeout, resolve(&host, port))
                .await
                .map_err(|_| Error::DnsTimeout)??;
            if !explicit {
                for addr in &addrs {
                    if let Some(why) = non_public(addr.ip()) {
                        let subject = if host.parse::<IpAddr>().is_ok() {
                            format!("{} is", addr.ip())
                        } else {
                            format!("it resolves to {},", addr.ip())
                        };
                        shared.violation(format!(
                            "HTTP request to {host} is not granted: {subject} {why} (only an exact grant of this host under {grant_key}.http allows such addresses)"
                        ));
                        return Err(Error::DestinationIpProhibited);
                    }
                }
            }
            let (response, io) = send(request, options, &host, tls, &addrs).await?;
            // The permit is held until the connection is finished with.
            let io = async move {
                let result = io.await;
                drop(permit);
                result
            };
            Ok((response, Box::new(io) as IoFuture))
        })
    }
}

/// The addresses of `host` (itself when it is an IP literal), resolved once.
async fn resolve(host: &str, port: u16) -> wasmtime_wasi_http::Result<Vec<SocketAddr>> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(|_| Error::DestinationNotFound)?
        .collect();
    if addrs.is_empty() {
        return Err(Error::DestinationNotFound);
    }
    Ok(addrs)
}

/// Sends `request` over a connection to one of `addrs` (already checked), speaking TLS for
/// `https` with `host` as the server name.
///
/// Adapted from `wasmtime_wasi_http::default_send_request` (wasmtime 48, Apache-2.0 WITH
/// LLVM-exception), whose connect step resolves the authority itself; here the connection goes
/// to exactly the addresses that were checked.
async fn send(
    mut request: http::Request<WasiBody>,
    options: Option<RequestOptions>,
    host: &str,
    tls: bool,
    addrs: &[SocketAddr],
) -> wasmtime_wasi_http::Result<(
    http::Response<WasiBody>,
    impl Future<Output = wasmtime_wasi_http::Result<()>> + Send + use<>,
)> {
    use std::pin::{Pin, pin};
    use std::task::{Context, Poll, ready};

    use tokio::io::{AsyncRead, AsyncWrite};

    trait Stream: AsyncRead + AsyncWrite + Send + Sync + Unpin + 'static {}
    impl<T: AsyncRead + AsyncWrite + Send + Sync + Unpin + 'static> Stream for T {}

    let timeout = |pick: fn(&RequestOptions) -> Option<Duration>| {
        options
            .as_ref()
            .and_then(pick)
            .unwrap_or(DEFAULT_CONNECT_TIMEOUT)
    };
    let connect_timeout = timeout(|o| o.connect_timeout);
    let first_byte_timeout = timeout(|o| o.first_byte_timeout);
    let between_bytes_timeout = timeout(|o| o.between_bytes_timeout);

    let stream = tokio::time::timeout(connect_timeout, connect(addrs))
        .await
        .map_err(|_| Error::ConnectionTimeout)??;
    let stream: Box<dyn Stream> = if tls {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.into(),
        };
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::InternalError(Some(e.to_string())))?
        .with_root_certificates(roots)
        .with_no_client_auth();
        let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
        let name = match host.parse::<IpAddr>() {
            Ok(ip) => rustls::pki_types::ServerName::from(ip),
            Err(_) => rustls::pki_types::ServerName::try_from(host.to_owned())?,
        };
        let stream = tokio::time::timeout(connect_timeout, connector.connect(name, stream))
            .await
            .map_err(|_| Error::ConnectionTimeout)?
            .map_err(Error::Tls)?;
        Box::new(stream)
    } else {
        Box::new(stream)
    };
    let (mut sender, conn) = tokio::time::timeout(
        connect_timeout,
        hyper::client::conn::http1::Builder::new()
            .handshake(wasmtime_wasi_http::io::TokioIo::new(stream)),
    )
    .await
    .map_err(|_| Error::ConnectionTimeout)??;

    // The request line carries only the path (the authority went into the Host header).
    *request.uri_mut() = http::Uri::builder()
        .path_and_query(
            request
                .uri()
                .path_and_query()
                .map(|p| p.as_str())
                .unwrap_or("/"),
        )
        .build()
        .map_err(|e| Error::InternalError(Some(e.to_string())))?;

    /// A response body whose frames must come within the between-bytes timeout.
    struct Body {
        incoming: hyper::body::Incoming,
        timeout: tokio::time::Interval,
    }
    impl http_body::Body for Body {
        type Data = Bytes;
        type Error = Error;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Option<Result<http_body::Frame<Bytes>, Error>>> {
            match Pin::new(&mut self.incoming).poll_frame(cx) {
                Poll::Ready(None) => Poll::Ready(None),
                Poll::Ready(Some(Err(e))) if e.is_timeout() => {
                    Poll::Ready(Some(Err(Error::HttpResponseTimeout)))
                }
                Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(Error::from(e)))),
                Poll::Ready(Some(Ok(frame))) => {
                    self.timeout.reset();
                    Poll::Ready(Some(Ok(frame)))
                }
                Poll::Pending => {
                    ready!(self.timeout.poll_tick(cx));
                    Poll::Ready(Some(Err(Error::ConnectionReadTimeout)))
                }
            }
        }

        fn is_end_stream(&self) -> bool {
            http_body::Body::is_end_stream(&self.incoming)
        }

        fn size_hint(&self) -> http_body::SizeHint {
            http_body::Body::size_hint(&self.incoming)
        }
    }

    let send = async move {
        let response = tokio::time::timeout(first_byte_timeout, sender.send_request(request))
            .await
            .map_err(|_| Error::ConnectionReadTimeout)??;
        // tokio panics on a zero interval.
        let mut timeout = tokio::time::interval(between_bytes_timeout.max(Duration::new(0, 1)));
        timeout.reset();
        Ok::<_, Error>(response.map(|incoming| Body { incoming, timeout }))
    };
    let mut send = pin!(send);
    let mut conn = Some(conn);
    // Wait for the response while driving the connection's I/O.
    let response = std::future::poll_fn(|cx| match send.as_mut().poll(cx) {
        Poll::Ready(result) => Poll::Ready(result),
        Poll::Pending => {
            let Some(fut) = conn.as_mut() else {
                return Poll::Pending;
            };
            let result = ready!(Pin::new(fut).poll(cx));
            conn = None;
            match result {
                Ok(()) => send.as_mut().poll(cx),
                Err(e) => Poll::Ready(Err(Error::from(e))),
            }
        }
    })
    .await?;
    let io = async move {
        match conn {
            None => Ok(()),
            Some(conn) => conn.await.map_err(|e| {
                if e.is_timeout() {
                    Error::HttpResponseTimeout
                } else {
                    Error::from(e)
                }
            }),
        }
    };
    Ok((response.map(BodyExt::boxed_unsync), io))
}

/// Connects to the first of `addrs` that answers.
async fn connect(addrs: &[SocketAddr]) -> wasmtime_wasi_http::Result<TcpStream> {
    let mut last = None;
    for addr in addrs {
        match TcpStream::connect(addr).await {
            Ok(stream) => return Ok(stream),
            Err(e) => last = Some(e),
        }
    }
    Err(match last {
        Some(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => Error::ConnectionRefused,
        Some(e) => Error::Connect(e),
        None => Error::DestinationNotFound,
    })
}

/// Why `ip` is not an address on the public internet — `"a loopback address (127.0.0.0/8)"` —
/// or `None` when it is. IPv6 addresses that embed an IPv4 address (IPv4-mapped, NAT64, 6to4)
/// are judged by that address; IPv4-compatible (`::/96`), IPv4-translated, local-use NAT64 and
/// Teredo addresses are refused whatever they embed, as is everything outside the IPv6 global
/// unicast range `2000::/3` that is not an embedding.
pub fn non_public(ip: IpAddr) -> Option<String> {
    match ip {
        IpAddr::V4(v4) => v4_problem(v4).map(str::to_owned),
        IpAddr::V6(v6) => v6_problem(v6),
    }
}

/// Special-purpose IPv4 ranges (IANA's registry) that are not the public internet; the first
/// match names the problem.
const V4_RANGES: &[([u8; 4], u8, &str)] = &[
    ([0, 0, 0, 0], 8, "a \"this network\" address (0.0.0.0/8)"),
    ([10, 0, 0, 0], 8, "a private address (10.0.0.0/8)"),
    (
        [100, 64, 0, 0],
        10,
        "a shared (carrier-grade NAT) address (100.64.0.0/10)",
    ),
    ([127, 0, 0, 0], 8, "a loopback address (127.0.0.0/8)"),
    (
        [169, 254, 0, 0],
        16,
        "a link-local address (169.254.0.0/16)",
    ),
    ([172, 16, 0, 0], 12, "a private address (172.16.0.0/12)"),
    (
        [192, 0, 0, 0],
        24,
        "an IETF protocol assignment (192.0.0.0/24)",
    ),
    ([192, 0, 2, 0], 24, "a documentation address (192.0.2.0/24)"),
    (
        [192, 88, 99, 0],
        24,
        "a 6to4 relay anycast address (192.88.99.0/24)",
    ),
    ([192, 168, 0, 0], 16, "a private address (192.168.0.0/16)"),
    (
        [198, 18, 0, 0],
        15,
        "a benchmarking address (198.18.0.0/15)",
    ),
    (
        [198, 51, 100, 0],
        24,
        "a documentation address (198.51.100.0/24)",
    ),
    (
        [203, 0, 113, 0],
        24,
        "a documentation address (203.0.113.0/24)",
    ),
    ([224, 0, 0, 0], 4, "a multicast address (224.0.0.0/4)"),
    (
        [255, 255, 255, 255],
        32,
        "the broadcast address (255.255.255.255)",
    ),
    ([240, 0, 0, 0], 4, "a reserved address (240.0.0.0/4)"),
];

fn v4_problem(ip: Ipv4Addr) -> Option<&'static str> {
    let bits = u32::from(ip);
    V4_RANGES.iter().find_map(|&(net, prefix, why)| {
        let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
        (bits & mask == u32::from(Ipv4Addr::from(net))).then_some(why)
    })
}

/// How an IPv6 range is judged.
#[derive(Clone, Copy)]
enum V6 {
    /// Never public.
    Refused(&'static str),
    /// Judged by the IPv4 address in its last 32 bits; refused even when that is public
    /// when `always` is set.
    EmbedsLast32 { what: &'static str, always: bool },
    /// 6to4: the IPv4 address in bits 16–48.
    SixToFour,
    /// Teredo: the server's IPv4 address in bits 32–64, the client's (inverted) in the last
    /// 32 bits. Refused whatever they are (traffic goes through a relay of unknown reach).
    Teredo,
}

/// IPv6 ranges that are not the public internet or that embed an IPv4 address, most specific
/// first. Everything else outside `2000::/3` is refused too.
const V6_RANGES: &[(u128, u8, V6)] = &[
    (0, 128, V6::Refused("the unspecified address (::)")),
    (1, 128, V6::Refused("the loopback address (::1)")),
    (
        0xffff_0000_0000,
        96,
        V6::EmbedsLast32 {
            what: "an IPv4-mapped IPv6 address (::ffff:0:0/96)",
            always: false,
        },
    ),
    (
        0xffff_0000_0000_0000,
        96,
        V6::EmbedsLast32 {
            what: "an IPv4-translated IPv6 address (::ffff:0:0:0/96)",
            always: true,
        },
    ),
    (
        0,
        96,
        V6::EmbedsLast32 {
            what: "an IPv4-compatible IPv6 address (::/96, deprecated)",
            always: true,
        },
    ),
    (
        0x0064_ff9b_0000_0000_0000_0000_0000_0000,
        96,
        V6::EmbedsLast32 {
            what: "a NAT64 address (64:ff9b::/96)",
            always: false,
        },
    ),
    (
        0x0064_ff9b_0001_0000_0000_0000_0000_0000,
        48,
        V6::Refused("a local-use NAT64 address (64:ff9b:1::/48)"),
    ),
    (
        0x0100_0000_0000_0000_0000_0000_0000_0000,
        64,
        V6::Refused("a discard-only address (100::/64)"),
    ),
    (0x2001_0000_0000_0000_0000_0000_0000_0000, 32, V6::Teredo),
    (
        0x2001_0000_0000_0000_0000_0000_0000_0000,
        23,
        V6::Refused("an IETF protocol assignment (2001::/23)"),
    ),
    (
        0x2001_0db8_0000_0000_0000_0000_0000_0000,
        32,
        V6::Refused("a documentation address (2001:db8::/32)"),
    ),
    (0x2002_0000_0000_0000_0000_0000_0000_0000, 16, V6::SixToFour),
    (
        0x3fff_0000_0000_0000_0000_0000_0000_0000,
        20,
        V6::Refused("a documentation address (3fff::/20)"),
    ),
    (
        0xfc00_0000_0000_0000_0000_0000_0000_0000,
        7,
        V6::Refused("a unique-local address (fc00::/7)"),
    ),
    (
        0xfe80_0000_0000_0000_0000_0000_0000_0000,
        10,
        V6::Refused("a link-local address (fe80::/10)"),
    ),
    (
        0xfec0_0000_0000_0000_0000_0000_0000_0000,
        10,
        V6::Refused("a site-local address (fec0::/10, deprecated)"),
    ),
    (
        0xff00_0000_0000_0000_0000_0000_0000_0000,
        8,
        V6::Refused("a multicast address (ff00::/8)"),
    ),
];

fn v6_problem(ip: Ipv6Addr) -> Option<String> {
    let bits = u128::from(ip);
    let embedded = |v4: u32, what: &str, always: bool| {
        let v4 = Ipv4Addr::from(v4);
        match v4_problem(v4) {
            Some(why) => Some(format!("{what} embedding {v4}, {why}")),
            None if always => Some(what.to_owned()),
            None => None,
        }
    };
    let range = V6_RANGES.iter().find(|&&(net, prefix, _)| {
        let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
        bits & mask == net
    });
    match range.map(|&(_, _, judged)| judged) {
        Some(V6::Refused(why)) => Some(why.to_owned()),
        Some(V6::EmbedsLast32 { what, always }) => embedded(bits as u32, what, always),
        Some(V6::SixToFour) => embedded((bits >> 80) as u32, "a 6to4 address (2002::/16)", false),
        Some(V6::Teredo) => {
            const WHAT: &str = "a Teredo address (2001::/32)";
            let server = Ipv4Addr::from((bits >> 64) as u32);
            let client = Ipv4Addr::from(!(bits as u32));
            Some(match (v4_problem(client), v4_problem(server)) {
                (Some(why), _) => format!("{WHAT} whose client {client} is {why}"),
                (None, Some(why)) => format!("{WHAT} whose server {server} is {why}"),
                (None, None) => format!("{WHAT}, reached through a relay"),
            })
        }
        None if bits >> 125 != 0b001 => {
            Some("outside the global unicast range (2000::/3)".to_owned())
        }
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every range, both sides of each boundary: `(address, None)` is public, `(address,
    /// Some(text))` is refused with a reason containing `text`.
    #[test]
    fn the_address_classifier_knows_every_range() {
        let cases: &[(&str, Option<&str>)] = &[
            // 0.0.0.0/8
            ("0.0.0.0", Some("\"this network\" address (0.0.0.0/8)")),
            ("0.255.255.255", Some("(0.0.0.0/8)")),
            ("1.0.0.0", None),
            // 10.0.0.0/8
            ("9.255.255.255", None),
            ("10.0.0.0", Some("a private address (10.0.0.0/8)")),
            ("10.255.255.255", Some("(10.0.0.0/8)")),
            ("11.0.0.0", None),
            // 100.64.0.0/10
            ("100.63.255.255", None),
            ("100.64.0.0", Some("carrier-grade NAT")),
            ("100.127.255.255", Some("(100.64.0.0/10)")),
            ("100.128.0.0", None),
            // 127.0.0.0/8
            ("126.255.255.255", None),
            ("127.0.0.1", Some("a loopback address (127.0.0.0/8)")),
            ("127.255.255.255", Some("loopback")),
            ("128.0.0.0", None),
            // 169.254.0.0/16
            ("169.253.255.255", None),
            (
                "169.254.169.254",
                Some("a link-local address (169.254.0.0/16)"),
            ),
            ("169.255.0.0", None),
            // 172.16.0.0/12
            ("172.15.255.255", None),
            ("172.16.0.0", Some("(172.16.0.0/12)")),
            ("172.31.255.255", Some("(172.16.0.0/12)")),
            ("172.32.0.0", None),
            // 192.0.0.0/24, 192.0.2.0/24
            ("191.255.255.255", None),
            ("192.0.0.0", Some("IETF protocol assignment (192.0.0.0/24)")),
            ("192.0.0.255", Some("(192.0.0.0/24)")),
            ("192.0.1.0", None),
            ("192.0.2.1", Some("documentation address (192.0.2.0/24)")),
            ("192.0.3.0", None),
            // 192.88.99.0/24
            ("192.88.98.255", None),
            ("192.88.99.1", Some("6to4 relay anycast")),
            ("192.88.100.0", None),
            // 192.168.0.0/16
            ("192.167.255.255", None),
            ("192.168.1.1", Some("(192.168.0.0/16)")),
            ("192.169.0.0", None),
            // 198.18.0.0/15
            ("198.17.255.255", None),
            ("198.18.0.0", Some("benchmarking address (198.18.0.0/15)")),
            ("198.19.255.255", Some("benchmarking")),
            ("198.20.0.0", None),
            // 198.51.100.0/24, 203.0.113.0/24
            ("198.51.99.255", None),
            ("198.51.100.7", Some("(198.51.100.0/24)")),
            ("198.51.101.0", None),
            ("203.0.112.255", None),
            ("203.0.113.7", Some("(203.0.113.0/24)")),
            ("203.0.114.0", None),
            // 224.0.0.0/4, 240.0.0.0/4, broadcast
            ("223.255.255.255", None),
            ("224.0.0.1", Some("a multicast address (224.0.0.0/4)")),
            ("239.255.255.255", Some("multicast")),
            ("240.0.0.0", Some("a reserved address (240.0.0.0/4)")),
            ("255.255.255.254", Some("reserved")),
            ("255.255.255.255", Some("the broadcast address")),
            ("8.8.8.8", None),
            ("93.184.216.34", None),
            // IPv6: unspecified, loopback, IPv4-compatible
            ("::", Some("the unspecified address (::)")),
            ("::1", Some("the loopback address (::1)")),
            (
                "::2",
                Some("IPv4-compatible IPv6 address (::/96, deprecated)"),
            ),
            (
                "::127.0.0.1",
                Some(
                    "IPv4-compatible IPv6 address (::/96, deprecated) embedding 127.0.0.1, a loopback address",
                ),
            ),
            ("::8.8.8.8", Some("IPv4-compatible")),
            ("::1:0:0:0", Some("outside the global unicast range")),
            // IPv4-mapped
            (
                "::ffff:127.0.0.1",
                Some(
                    "IPv4-mapped IPv6 address (::ffff:0:0/96) embedding 127.0.0.1, a loopback address",
                ),
            ),
            (
                "::ffff:10.0.0.1",
                Some("embedding 10.0.0.1, a private address"),
            ),
            ("::ffff:169.254.169.254", Some("link-local")),
            ("::ffff:8.8.8.8", None),
            ("::fffe:ffff:ffff", Some("outside the global unicast range")),
            ("::1:0:0:0:0", Some("outside the global unicast range")),
            // IPv4-translated
            ("::ffff:0:8.8.8.8", Some("IPv4-translated")),
            (
                "::ffff:0:127.0.0.1",
                Some("IPv4-translated IPv6 address (::ffff:0:0:0/96) embedding 127.0.0.1"),
            ),
            // NAT64
            (
                "64:ff9b::7f00:1",
                Some("NAT64 address (64:ff9b::/96) embedding 127.0.0.1, a loopback address"),
            ),
            ("64:ff9b::a00:1", Some("embedding 10.0.0.1")),
            ("64:ff9b::808:808", None),
            (
                "64:ff9b::1:808:808",
                Some("outside the global unicast range"),
            ),
            (
                "64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff",
                Some("outside the global unicast range"),
            ),
            (
                "64:ff9b:1::808:808",
                Some("local-use NAT64 address (64:ff9b:1::/48)"),
            ),
            (
                "64:ff9b:1:ffff:ffff:ffff:ffff:ffff",
                Some("local-use NAT64"),
            ),
            ("64:ff9b:2::", Some("outside the global unicast range")),
            // Discard-only
            ("100::1", Some("discard-only address (100::/64)")),
            ("100::1:0:0:0:1", Some("outside the global unicast range")),
            // 2000::/3 boundaries
            (
                "1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                Some("outside the global unicast range (2000::/3)"),
            ),
            ("2000::", None),
            ("2606:2800:220:1::1", None),
            ("3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", None),
            ("4000::", Some("outside the global unicast range")),
            ("5f00::1", Some("outside the global unicast range")),
            // Teredo and the rest of 2001::/23
            ("2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", None),
            (
                "2001:0:4136:e378:8000:63bf:80ff:fffe",
                Some("Teredo address (2001::/32) whose client 127.0.0.1 is a loopback address"),
            ),
            (
                "2001:0:7f00:1:8000:63bf:f7f7:f7f7",
                Some("whose server 127.0.0.1 is a loopback"),
            ),
            (
                "2001:0:4136:e378:8000:63bf:f7f7:fbfb",
                Some("Teredo address (2001::/32), reached through a relay"),
            ),
            ("2001:1::1", Some("IETF protocol assignment (2001::/23)")),
            (
                "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff",
                Some("(2001::/23)"),
            ),
            ("2001:200::", None),
            ("2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", None),
            ("2001:db8::1", Some("documentation address (2001:db8::/32)")),
            ("2001:db9::", None),
            // 6to4
            ("2001:ffff::", None),
            (
                "2002:7f00:1::",
                Some("6to4 address (2002::/16) embedding 127.0.0.1, a loopback address"),
            ),
            (
                "2002:c0a8:101::1",
                Some("embedding 192.168.1.1, a private address"),
            ),
            ("2002:808:808::1", None),
            ("2003::", None),
            // 3fff::/20
            ("3ffe::", None),
            ("3fff::1", Some("documentation address (3fff::/20)")),
            (
                "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff",
                Some("(3fff::/20)"),
            ),
            ("3fff:1000::", None),
            // fc00::/7, fe80::/10, fec0::/10, ff00::/8
            (
                "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                Some("outside the global unicast range"),
            ),
            ("fc00::1", Some("unique-local address (fc00::/7)")),
            (
                "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                Some("unique-local"),
            ),
            ("fe00::", Some("outside the global unicast range")),
            ("fe80::1", Some("link-local address (fe80::/10)")),
            (
                "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                Some("link-local"),
            ),
            (
                "fec0::1",
                Some("site-local address (fec0::/10, deprecated)"),
            ),
            (
                "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                Some("site-local"),
            ),
            ("ff02::1", Some("multicast address (ff00::/8)")),
            ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", Some("multicast")),
        ];
        for (address, expected) in cases {
            let ip: IpAddr = address.parse().unwrap_or_else(|e| panic!("{address}: {e}"));
            let found = non_public(ip);
            match (expected, &found) {
                (None, None) => {}
                (Some(text), Some(why)) => {
                    assert!(
                        why.contains(text),
                        "{address}: {why:?} does not contain {text:?}"
                    )
                }
                _ => panic!("{address}: expected {expected:?}, found {found:?}"),
            }
        }
    }
}
