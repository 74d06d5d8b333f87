//! Outbound TCP for guests (`wasi:sockets`): the `tcp` capability, the address check, name
//! lookup done by the host, and the per-instance socket cap.
//!
//! # What a connection must pass
//!
//! 1. The manifest requests the destination under `capabilities.tcp` (`host:port`, where a
//!    request may say `*` for any host or any port: a database provider asks for `*:*`) **and**
//!    the user grants it under `cairn:grants.<package>.tcp` (`host:port` with a port; `*` for
//!    any public host). A program's grant is `cairn:program.tcp` and needs no request.
//! 2. The guest has no DNS of its own: UDP is denied, and `wasi:sockets/ip-name-lookup` is the
//!    host's ([`TcpGuard::lookup_allowed`]). A name is resolved only when a grant names it
//!    exactly or a `*` grant could reach it; the addresses it resolved to are remembered for the
//!    instance, and a connection to one of them counts as a connection to that name.
//! 3. `connect` is checked on the address itself ([`TcpPolicy::decide`]): a grant of an IP
//!    literal matches exactly that address (an IPv4-mapped IPv6 form is a different address and
//!    does not match); a grant of a name matches the addresses that name resolved to for this
//!    instance; `*` matches only public internet addresses ([`crate::http::non_public`]:
//!    loopback, private, link-local, the IPv4-in-IPv6 forms of those and the other special
//!    ranges are reached only when named exactly).
//! 4. Connect only: binding is allowed only as the implicit ephemeral bind of a connect
//!    (the unspecified address, port 0); listening, accepting and UDP are refused.
//! 5. At most [`MAX_TCP_SOCKETS`] TCP sockets are open in an instance at once, at most
//!    [`MAX_LOOKUPS_IN_FLIGHT`] name lookups are in flight, and at most [`MAX_RESOLVED_NAMES`]
//!    names are resolved in its life.
//!
//! Connecting and every read or write wait inside the guest's call, so the call's deadline
//! bounds them: the host abandons a call at its deadline wherever the guest is waiting.
//! A refusal is recorded as a violation naming the package, the address and the grant that
//! was missing, which fails the call even if the guest carries on.
//!
//! # Raw TCP is a grant checked by the host, TLS is the guest's
//!
//! A database provider needs a socket, not HTTP, so `wasi:sockets` TCP is granted per `host:port`
//! (`src/tcp.rs`): the host does the name lookups (only for names a grant could use) and checks
//! every connect against the addresses it handed out, so a guest can neither use DNS of its own nor
//! reach loopback or private networks through `*`. TLS stays inside the guest (the postgresql
//! provider's rustls with the pure-Rust RustCrypto provider): `wasi:tls` in wasmtime 48 cannot take
//! a custom root CA, which `sslmode=verify-ca` with `sslrootcert` needs, and `ring` would need a C
//! compiler for wasm32 in every build. The price is ~0.9 MB of component and a few ms per handshake
//! (measurements in `examples/providers/postgresql/src/client/tls.rs`).

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use wasmtime_wasi::sockets::SocketAddrUse;

use crate::grants::is_host_name;
use crate::state::CallShared;

/// TCP sockets one instance may have open at once.
pub const MAX_TCP_SOCKETS: usize = 64;

/// Distinct names one instance may resolve; more lookups are refused.
pub const MAX_RESOLVED_NAMES: usize = 256;

/// Name lookups one instance may have in flight at once (each holds a host resolver thread).
pub const MAX_LOOKUPS_IN_FLIGHT: usize = 8;

/// Addresses kept per resolved name (the rest of a long answer is dropped).
const MAX_ADDRESSES_PER_NAME: usize = 32;

/// The host part of a `tcp` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TcpHost {
    /// `*`: any host (in a grant: any public address).
    Any,
    Ip(IpAddr),
    /// A host name, lower-case, without a trailing dot.
    Name(String),
}

/// One `host:port` entry of a request or a grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcpPattern {
    pub host: TcpHost,
    /// `None`: any port (requests only).
    pub port: Option<u16>,
}

impl fmt::Display for TcpPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            TcpHost::Any => f.write_str("*")?,
            TcpHost::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]")?,
            TcpHost::Ip(ip) => write!(f, "{ip}")?,
            TcpHost::Name(name) => f.write_str(name)?,
        }
        match self.port {
            Some(port) => write!(f, ":{port}"),
            None => f.write_str(":*"),
        }
    }
}

const GRANT_EXPECTED: &str = "expected HOST:PORT — a host name, an IP address (IPv6 in brackets: [::1]:5432) or * (any public address), and a port number";
const REQUEST_EXPECTED: &str = "expected HOST:PORT — a host name, an IP address (IPv6 in brackets) or *, and a port number or *";

impl TcpPattern {
    /// A manifest's request: `host:port` where either may be `*`.
    pub fn parse_request(text: &str) -> Result<TcpPattern, String> {
        Self::parse(text, true).map_err(|e| format!("{e}; {REQUEST_EXPECTED}"))
    }

    /// A user's grant: `host:port` with a port number; the host may be `*`.
    pub fn parse_grant(text: &str) -> Result<TcpPattern, String> {
        Self::parse(text, false).map_err(|e| format!("{e}; {GRANT_EXPECTED}"))
    }

    fn parse(text: &str, any_port: bool) -> Result<TcpPattern, String> {
        if text.contains('/') {
            return Err("no scheme or path".into());
        }
        let Some((host, port)) = text.rsplit_once(':') else {
            return Err("no port".into());
        };
        let port = match port {
            "*" if any_port => None,
            "*" => return Err("a grant names its port (\"*\" is for manifests)".into()),
            _ => Some(
                port.parse::<u16>()
                    .ok()
                    .filter(|p| *p > 0)
                    .ok_or_else(|| format!("invalid port {port:?}"))?,
            ),
        };
        let host = if host == "*" {
            TcpHost::Any
        } else if let Some(v6) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            TcpHost::Ip(IpAddr::V6(
                v6.parse()
                    .map_err(|_| format!("invalid IPv6 address {v6:?}"))?,
            ))
        } else if host.contains(':') {
            return Err("an IPv6 address needs brackets".into());
        } else if let Ok(ip) = host.parse::<IpAddr>() {
            TcpHost::Ip(ip)
        } else {
            let name = host.trim_end_matches('.').to_ascii_lowercase();
            if !is_host_name(&name) {
                return Err(format!("invalid host {host:?}"));
            }
            TcpHost::Name(name)
        };
        Ok(TcpPattern { host, port })
    }

    fn port_matches(&self, port: u16) -> bool {
        self.port.is_none_or(|p| p == port)
    }

    /// Whether this entry reaches `addr`, given the instance's resolved names. `*` reaches
    /// every address when `any_is_public_only` is false (a manifest's request), only public
    /// ones when it is true (a user's grant).
    fn reaches(&self, addr: SocketAddr, resolved: &Resolved, any_is_public_only: bool) -> bool {
        self.port_matches(addr.port())
            && match &self.host {
                TcpHost::Any => !any_is_public_only || crate::http::non_public(addr.ip()).is_none(),
                TcpHost::Ip(ip) => *ip == addr.ip(),
                TcpHost::Name(name) => resolved.resolves_to(name, addr.ip()),
            }
    }

    /// Whether this entry may need `name` resolved.
    fn may_resolve(&self, name: &str) -> bool {
        match &self.host {
            TcpHost::Any => true,
            TcpHost::Ip(_) => false,
            TcpHost::Name(n) => n == name,
        }
    }
}

/// The TCP allow-list: a destination must be reached by both lists.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TcpPolicy {
    /// What the manifest requests (for a program: the same as the grant).
    pub requested: Vec<TcpPattern>,
    pub granted: Vec<TcpPattern>,
}

/// Why a connection or lookup is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TcpRefusal {
    Unrequested,
    Ungranted,
    /// Only a `*` grant (on this port) would reach it, and the address is not public.
    NonPublic(String),
}

impl TcpPolicy {
    /// Whether the guest may use TCP at all.
    pub fn enabled(&self) -> bool {
        !self.requested.is_empty() && !self.granted.is_empty()
    }

    /// Whether a connection to `addr` is allowed.
    pub(crate) fn decide(&self, addr: SocketAddr, resolved: &Resolved) -> Result<(), TcpRefusal> {
        if !self
            .requested
            .iter()
            .any(|p| p.reaches(addr, resolved, false))
        {
            return Err(TcpRefusal::Unrequested);
        }
        if self.granted.iter().any(|p| p.reaches(addr, resolved, true)) {
            return Ok(());
        }
        let wildcard_on_port = self
            .granted
            .iter()
            .any(|p| p.host == TcpHost::Any && p.port_matches(addr.port()));
        match crate::http::non_public(addr.ip()) {
            Some(why) if wildcard_on_port => Err(TcpRefusal::NonPublic(why)),
            _ => Err(TcpRefusal::Ungranted),
        }
    }

    /// Whether the guest may resolve `name` (lower-case, no trailing dot).
    pub(crate) fn lookup(&self, name: &str) -> Result<(), TcpRefusal> {
        if !self.requested.iter().any(|p| p.may_resolve(name)) {
            return Err(TcpRefusal::Unrequested);
        }
        if !self.granted.iter().any(|p| p.may_resolve(name)) {
            return Err(TcpRefusal::Ungranted);
        }
        Ok(())
    }
}

/// The names an instance resolved and the addresses they resolved to.
#[derive(Debug, Default)]
pub(crate) struct Resolved {
    names: HashMap<String, HashSet<IpAddr>>,
}

impl Resolved {
    fn resolves_to(&self, name: &str, ip: IpAddr) -> bool {
        self.names.get(name).is_some_and(|ips| ips.contains(&ip))
    }

    /// The first name (in sorted order, for stable messages) that resolved to `ip`.
    fn name_of(&self, ip: IpAddr) -> Option<&str> {
        self.names
            .iter()
            .filter(|(_, ips)| ips.contains(&ip))
            .map(|(name, _)| name.as_str())
            .min()
    }

    /// Remembers `ips` as addresses of `name`; false when the instance resolved too many names.
    fn record(&mut self, name: &str, ips: &[IpAddr]) -> bool {
        if !self.names.contains_key(name) && self.names.len() >= MAX_RESOLVED_NAMES {
            return false;
        }
        let entry = self.names.entry(name.to_owned()).or_default();
        for ip in ips {
            if entry.len() >= MAX_ADDRESSES_PER_NAME {
                break;
            }
            entry.insert(*ip);
        }
        true
    }
}

/// The TCP side of one instance's sandbox: the policy, the names it resolved, where violations
/// go. Shared by the address check (which runs inside wasmtime's socket code) and the host's
/// name lookup.
pub(crate) struct TcpGuard {
    pub policy: TcpPolicy,
    pub shared: Arc<CallShared>,
    /// Whether this is a program's sandbox (grants under `cairn:program`, no manifest).
    pub program: bool,
    resolved: Mutex<Resolved>,
    /// Lookups started and not finished (or abandoned) yet.
    lookups_in_flight: Arc<AtomicUsize>,
}

/// A lookup's place among the instance's [`MAX_LOOKUPS_IN_FLIGHT`]; given back when dropped,
/// whether the lookup finished or was abandoned with its call.
pub(crate) struct LookupSlot(Arc<AtomicUsize>);

impl Drop for LookupSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl TcpGuard {
    pub fn new(policy: TcpPolicy, shared: Arc<CallShared>, program: bool) -> TcpGuard {
        TcpGuard {
            policy,
            shared,
            program,
            resolved: Mutex::new(Resolved::default()),
            lookups_in_flight: Arc::new(AtomicUsize::new(0)),
        }
    }

    fn grant_key(&self) -> &str {
        &self.shared.grant_key
    }

    /// The check wasmtime runs before every bind, listen and connect (and UDP use).
    pub fn check(&self, addr: SocketAddr, use_: SocketAddrUse) -> bool {
        let refusal = match use_ {
            SocketAddrUse::TcpConnect => return self.check_connect(addr),
            // The implicit bind of a connect: the unspecified address, an ephemeral port.
            SocketAddrUse::TcpBind if addr.ip().is_unspecified() && addr.port() == 0 => {
                return true;
            }
            SocketAddrUse::TcpBind => format!(
                "binding a TCP socket to {addr} is not granted (guests may only connect out)"
            ),
            SocketAddrUse::TcpListen => {
                "listening for TCP connections is not granted (guests may only connect out)".into()
            }
            SocketAddrUse::TcpAccept => format!(
                "accepting a TCP connection from {addr} is not granted (guests may only connect out)"
            ),
            _ => format!("UDP to or from {addr} is not granted (guests get TCP connections only)"),
        };
        self.shared.violation(refusal);
        false
    }

    fn check_connect(&self, addr: SocketAddr) -> bool {
        let resolved = crate::runtime::lock(&self.resolved);
        let Err(refusal) = self.policy.decide(addr, &resolved) else {
            return true;
        };
        let target = match resolved.name_of(addr.ip()) {
            Some(name) => format!("{addr} ({name})"),
            None => addr.to_string(),
        };
        drop(resolved);
        let grant_key = self.grant_key();
        let message = match refusal {
            TcpRefusal::Unrequested if self.program => {
                format!(
                    "TCP connection to {target} is not granted (grant it under {grant_key}.tcp)"
                )
            }
            TcpRefusal::Unrequested => format!(
                "TCP connection to {target} is not granted (the provider's manifest does not request it under capabilities.tcp)"
            ),
            TcpRefusal::Ungranted => format!(
                "TCP connection to {target} is not granted (grant it under {grant_key}.tcp)"
            ),
            TcpRefusal::NonPublic(why) => format!(
                "TCP connection to {target} is not granted: {} is {why} (\"*\" reaches only public addresses; grant this host exactly under {grant_key}.tcp)",
                addr.ip()
            ),
        };
        self.shared.violation(message);
        false
    }

    /// Whether the guest may resolve `name`; records the violation when not. Returns the
    /// normalised name.
    pub fn lookup_allowed(&self, name: &str) -> Option<String> {
        let normalised = name.trim_end_matches('.').to_ascii_lowercase();
        let shown = crate::convert::quoted(name);
        let grant_key = self.grant_key();
        if !self.policy.enabled() {
            self.shared.violation(format!(
                "resolving {shown} (wasi:sockets/ip-name-lookup) is not granted (no TCP destination is granted under {grant_key}.tcp)"
            ));
            return None;
        }
        if !is_host_name(&normalised) {
            self.shared
                .violation(format!("resolving {shown}: not a valid host name"));
            return None;
        }
        let refusal = match self.policy.lookup(&normalised) {
            Ok(()) => return Some(normalised),
            Err(refusal) => refusal,
        };
        self.shared.violation(match refusal {
            TcpRefusal::Unrequested if !self.program => format!(
                "resolving {shown} is not granted (the provider's manifest does not request it under capabilities.tcp)"
            ),
            _ => format!(
                "resolving {shown} is not granted (no entry of {grant_key}.tcp names it; grant \"{normalised}:PORT\")"
            ),
        });
        None
    }

    /// A place for one more lookup in flight, or a violation when the instance has
    /// [`MAX_LOOKUPS_IN_FLIGHT`] already.
    pub fn lookup_slot(&self, name: &str) -> Option<LookupSlot> {
        let taken = self
            .lookups_in_flight
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < MAX_LOOKUPS_IN_FLIGHT).then_some(n + 1)
            });
        if taken.is_ok() {
            return Some(LookupSlot(self.lookups_in_flight.clone()));
        }
        self.shared.violation(format!(
            "resolving {} is refused: an instance may have at most {MAX_LOOKUPS_IN_FLIGHT} name lookups in flight (a fixed limit)",
            crate::convert::quoted(name)
        ));
        None
    }

    /// Remembers what `name` resolved to; false (and a violation) when the instance resolved
    /// too many names.
    pub fn record(&self, name: &str, ips: &[IpAddr]) -> bool {
        if crate::runtime::lock(&self.resolved).record(name, ips) {
            return true;
        }
        self.shared.violation(format!(
            "resolving {} is refused: an instance may resolve at most {MAX_RESOLVED_NAMES} names (a fixed limit)",
            crate::convert::quoted(name)
        ));
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(requested: &[&str], granted: &[&str]) -> TcpPolicy {
        TcpPolicy {
            requested: requested
                .iter()
                .map(|r| TcpPattern::parse_request(r).unwrap())
                .collect(),
            granted: granted
                .iter()
                .map(|g| TcpPattern::parse_grant(g).unwrap())
                .collect(),
        }
    }

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn patterns_parse_and_print() {
        for (text, shown) in [
            ("127.0.0.1:5432", "127.0.0.1:5432"),
            ("DB.Internal.:5432", "db.internal:5432"),
            ("*:5432", "*:5432"),
            ("[::1]:5432", "[::1]:5432"),
        ] {
            assert_eq!(TcpPattern::parse_grant(text).unwrap().to_string(), shown);
        }
        assert_eq!(TcpPattern::parse_request("*:*").unwrap().to_string(), "*:*");
        for (bad, why) in [
            ("db.internal", "no port"),
            ("db:0", "invalid port \"0\""),
            ("db:65536", "invalid port"),
            ("db:*", "a grant names its port"),
            ("::1:5432", "needs brackets"),
            ("[::g]:1", "invalid IPv6 address"),
            ("a b:1", "invalid host \"a b\""),
            ("*.example.com:1", "invalid host"),
            ("https://db:1", "no scheme or path"),
        ] {
            let err = TcpPattern::parse_grant(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
            assert!(err.contains("expected HOST:PORT"), "{bad}: {err}");
        }
    }

    #[test]
    fn connections_need_request_and_grant() {
        let mut resolved = Resolved::default();
        resolved.record("db.internal", &["10.0.0.5".parse().unwrap()]);
        resolved.record("evil.example", &["127.0.0.1".parse().unwrap()]);
        resolved.record("public.example", &["93.184.216.34".parse().unwrap()]);
        let p = policy(&["*:*"], &["127.0.0.1:5432", "db.internal:5432", "*:6432"]);
        let cases: &[(&str, Result<(), TcpRefusal>)] = &[
            ("127.0.0.1:5432", Ok(())),
            ("127.0.0.1:5433", Err(TcpRefusal::Ungranted)),
            ("10.0.0.5:5432", Ok(())),
            ("10.0.0.6:5432", Err(TcpRefusal::Ungranted)),
            ("93.184.216.34:6432", Ok(())),
            // `*` never reaches loopback or private addresses, named or resolved.
            (
                "127.0.0.1:6432",
                Err(TcpRefusal::NonPublic(
                    "a loopback address (127.0.0.0/8)".into(),
                )),
            ),
            (
                "10.0.0.5:6432",
                Err(TcpRefusal::NonPublic(
                    "a private address (10.0.0.0/8)".into(),
                )),
            ),
            // The IPv4-mapped form of a granted address is another address.
            ("[::ffff:127.0.0.1]:5432", Err(TcpRefusal::Ungranted)),
            ("[::1]:5432", Err(TcpRefusal::Ungranted)),
        ];
        for (a, expected) in cases {
            assert_eq!(&p.decide(addr(a), &resolved), expected, "{a}");
        }
        let mapped = p.decide(addr("[::ffff:127.0.0.1]:6432"), &resolved);
        assert!(
            matches!(mapped, Err(TcpRefusal::NonPublic(_))),
            "{mapped:?}"
        );

        // The manifest's request narrows the grant.
        let p = policy(&["*:5432"], &["127.0.0.1:5432", "127.0.0.1:22"]);
        assert_eq!(p.decide(addr("127.0.0.1:5432"), &resolved), Ok(()));
        assert_eq!(
            p.decide(addr("127.0.0.1:22"), &resolved),
            Err(TcpRefusal::Unrequested)
        );
        let p = policy(&["db.internal:5432"], &["*:5432", "127.0.0.1:5432"]);
        assert_eq!(
            p.decide(addr("127.0.0.1:5432"), &resolved),
            Err(TcpRefusal::Unrequested)
        );
        // ... and `*` in the grant still reaches only public addresses.
        assert!(matches!(
            p.decide(addr("10.0.0.5:5432"), &resolved),
            Err(TcpRefusal::NonPublic(_))
        ));
        let p = policy(&["db.internal:5432"], &["db.internal:5432"]);
        assert_eq!(p.decide(addr("10.0.0.5:5432"), &resolved), Ok(()));
    }

    #[test]
    fn lookups_need_a_grant_that_could_use_the_name() {
        let p = policy(&["*:*"], &["db.internal:5432", "127.0.0.1:5432"]);
        assert_eq!(p.lookup("db.internal"), Ok(()));
        assert_eq!(p.lookup("other.internal"), Err(TcpRefusal::Ungranted));
        let p = policy(&["db.internal:*"], &["*:5432"]);
        assert_eq!(p.lookup("db.internal"), Ok(()));
        assert_eq!(p.lookup("other"), Err(TcpRefusal::Unrequested));
        assert!(!policy(&[], &["*:5432"]).enabled());
        assert!(!policy(&["*:*"], &[]).enabled());
    }

    #[test]
    fn lookups_in_flight_are_bounded_and_given_back() {
        let shared = Arc::new(CallShared {
            provider: "p@1.0.0".into(),
            grant_key: "cairn:grants.p".into(),
            log: crate::log::tracing_log_sink(),
            budget: crate::state::GuestBudget::new(),
            call: Mutex::new(Default::default()),
        });
        let guard = TcpGuard::new(policy(&["*:*"], &["*:5432"]), shared.clone(), false);
        let slots: Vec<LookupSlot> = (0..MAX_LOOKUPS_IN_FLIGHT)
            .map(|_| guard.lookup_slot("db.example").expect("a slot"))
            .collect();
        assert!(guard.lookup_slot("db.example").is_none());
        let report = shared.finish_call();
        assert_eq!(report.violations.len(), 1);
        assert!(
            report.violations[0].contains("at most 8 name lookups in flight"),
            "{:?}",
            report.violations
        );
        drop(slots);
        assert!(
            guard.lookup_slot("db.example").is_some(),
            "slots are given back"
        );
    }

    #[test]
    fn resolved_names_are_bounded() {
        let mut resolved = Resolved::default();
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        for i in 0..MAX_RESOLVED_NAMES {
            assert!(resolved.record(&format!("n{i}"), &[ip]));
        }
        assert!(!resolved.record("one-more", &[ip]));
        assert!(
            resolved.record("n0", &[ip]),
            "a known name may be resolved again"
        );
        let many: Vec<IpAddr> = (0..100u8).map(|i| IpAddr::from([192, 0, 2, i])).collect();
        resolved.record("n1", &many);
        assert!(resolved.names["n1"].len() <= MAX_ADDRESSES_PER_NAME);
    }
}
