//! `oci://HOST[:PORT]/REPOSITORY[:TAG|@sha256:HEX]` references, checked against the OCI
//! distribution specification's grammar before anything is sent.

use std::fmt;

use crate::digest::Digest;
use crate::error::RegistryError;

/// The scheme every registry reference starts with.
pub const SCHEME: &str = "oci://";

/// A repository in a registry and, when one is named, a tag or a digest in it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reference {
    /// `host[:port]`, as written (lower-cased).
    pub registry: String,
    /// `path/to/repo`: lower-case components separated by `/`.
    pub repository: String,
    pub target: Option<Target>,
}

/// What a reference points at inside its repository.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Target {
    Tag(String),
    Digest(Digest),
}

impl Reference {
    /// Parses `oci://HOST[:PORT]/REPO[:TAG|@DIGEST]`.
    pub fn parse(text: &str) -> Result<Reference, RegistryError> {
        let bad = |why: &str| RegistryError::BadReference {
            reference: text.to_owned(),
            why: why.to_owned(),
        };
        let rest = text
            .strip_prefix(SCHEME)
            .ok_or_else(|| bad("it must start with oci://"))?;
        let (registry, path) = rest
            .split_once('/')
            .ok_or_else(|| bad("it names no repository (oci://HOST/REPOSITORY)"))?;
        check_registry(registry).map_err(|why| bad(&why))?;
        let (path, target) = if let Some((path, digest)) = path.split_once('@') {
            let digest = Digest::parse(digest).map_err(|why| bad(&why))?;
            (path, Some(Target::Digest(digest)))
        } else {
            // A tag follows the last `:` after the last `/`.
            let last = path.rfind('/').map_or(0, |i| i + 1);
            match path[last..].rfind(':') {
                Some(colon) => {
                    let tag = &path[last + colon + 1..];
                    check_tag(tag).map_err(|why| bad(&why))?;
                    (&path[..last + colon], Some(Target::Tag(tag.to_owned())))
                }
                None => (path, None),
            }
        };
        check_repository(path).map_err(|why| bad(&why))?;
        Ok(Reference {
            registry: registry.to_ascii_lowercase(),
            repository: path.to_owned(),
            target,
        })
    }

    /// The same repository with `target`.
    pub fn with_target(&self, target: Target) -> Reference {
        Reference {
            target: Some(target),
            ..self.clone()
        }
    }

    /// The registry's host name or address without the port or brackets.
    pub fn host(&self) -> &str {
        host_of(&self.registry)
    }

    /// The tag or digest as the distribution API's `<reference>` path segment.
    pub fn target_segment(&self) -> Option<String> {
        match &self.target {
            Some(Target::Tag(tag)) => Some(tag.clone()),
            Some(Target::Digest(digest)) => Some(digest.to_string()),
            None => None,
        }
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}/{}", self.registry, self.repository)?;
        match &self.target {
            Some(Target::Tag(tag)) => write!(f, ":{tag}"),
            Some(Target::Digest(digest)) => write!(f, "@{digest}"),
            None => Ok(()),
        }
    }
}

/// `host[:port]` without the port (and without the brackets of an IPv6 literal).
pub fn host_of(registry: &str) -> &str {
    if let Some(rest) = registry.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    registry.split(':').next().unwrap_or(registry)
}

/// The tag a version is published under: semver's `+` is not allowed in tags, so it is `_`.
pub fn tag_for_version(version: &semver::Version) -> String {
    version.to_string().replace('+', "_")
}

/// The version a tag names, if it names one (`_` read as `+`).
pub fn version_of_tag(tag: &str) -> Option<semver::Version> {
    semver::Version::parse(&tag.replace('_', "+")).ok()
}

fn check_registry(registry: &str) -> Result<(), String> {
    if registry.is_empty() {
        return Err("it names no registry host".into());
    }
    let (host, port) = if let Some(rest) = registry.strip_prefix('[') {
        let (addr, after) = rest
            .split_once(']')
            .ok_or("its IPv6 address has no closing ]")?;
        addr.parse::<std::net::Ipv6Addr>()
            .map_err(|_| format!("{addr:?} is not an IPv6 address"))?;
        (None, after.strip_prefix(':'))
    } else {
        match registry.split_once(':') {
            Some((host, port)) => (Some(host), Some(port)),
            None => (Some(registry), None),
        }
    };
    if let Some(host) = host {
        let label_ok = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        };
        if host.len() > 253 || !host.split('.').all(label_ok) {
            return Err(format!("{host:?} is not a host name or address"));
        }
    }
    if let Some(port) = port
        && !(port.parse::<u16>().is_ok_and(|p| p > 0) && port.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(format!("{port:?} is not a port"));
    }
    Ok(())
}

/// `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)*`, at most 255 bytes.
fn check_repository(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("it names no repository".into());
    }
    if path.len() > 255 {
        return Err("its repository name is longer than 255 characters".into());
    }
    for component in path.split('/') {
        let ok = !component.is_empty()
            && component.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && component.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && component
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
            && !component.contains("..")
            && !component.contains("___")
            && !component.contains("._")
            && !component.contains("_.")
            && !component.contains(".-")
            && !component.contains("-.")
            && !component.contains("_-")
            && !component.contains("-_");
        if !ok {
            return Err(format!(
                "repository component {component:?} is not lower-case letters and digits \
                 separated by '.', '_', '__' or dashes"
            ));
        }
    }
    Ok(())
}

/// `[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}`.
fn check_tag(tag: &str) -> Result<(), String> {
    let ok = !tag.is_empty()
        && tag.len() <= 128
        && !tag.starts_with(['.', '-'])
        && tag
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "tag {tag:?} is not 1 to 128 letters, digits, '_', '.' or '-' (not starting with '.' or '-')"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_parse_and_print_back() {
        for (text, registry, repository, target) in [
            (
                "oci://127.0.0.1:5000/cairn/postgresql:3.18.2",
                "127.0.0.1:5000",
                "cairn/postgresql",
                Some("3.18.2"),
            ),
            (
                "oci://ghcr.io/acme/providers/random",
                "ghcr.io",
                "acme/providers/random",
                None,
            ),
            (
                "oci://localhost:5000/a__b/c-d.e:1.0.0_build.5",
                "localhost:5000",
                "a__b/c-d.e",
                Some("1.0.0_build.5"),
            ),
            (
                "oci://[::1]:5000/x:latest",
                "[::1]:5000",
                "x",
                Some("latest"),
            ),
        ] {
            let r = Reference::parse(text).unwrap();
            assert_eq!(r.registry, registry);
            assert_eq!(r.repository, repository);
            assert_eq!(r.target_segment().as_deref(), target);
            assert_eq!(r.to_string(), text);
        }
        let digest = format!("sha256:{}", "ab".repeat(32));
        let r = Reference::parse(&format!("oci://r.example/x@{digest}")).unwrap();
        assert_eq!(r.target_segment().unwrap(), digest);
        assert_eq!(
            Reference::parse("oci://[::1]:5000/x").unwrap().host(),
            "::1"
        );
        assert_eq!(Reference::parse("oci://h:5/x").unwrap().host(), "h");
    }

    #[test]
    fn bad_references_say_what_is_wrong() {
        for (text, why) in [
            ("https://h/x", "must start with oci://"),
            ("oci://h", "names no repository"),
            ("oci:///x", "names no registry host"),
            ("oci://h/X", "is not lower-case"),
            ("oci://h/a//b", "is not lower-case"),
            ("oci://h/../etc", "is not lower-case"),
            ("oci://h/x:", "tag \"\""),
            ("oci://h/x:-a", "tag \"-a\""),
            ("oci://h/x:a+b", "tag \"a+b\""),
            ("oci://h:0/x", "is not a port"),
            ("oci://h:99999/x", "is not a port"),
            ("oci://h_x/x", "is not a host name"),
            ("oci://h/x@sha256:00", "64 lower-case hex"),
            ("oci://h/x@md5:00", "sha256"),
            ("oci://[zz]/x", "not an IPv6"),
        ] {
            let err = Reference::parse(text).unwrap_err().to_string();
            assert!(err.contains(text) && err.contains(why), "{text}: {err}");
        }
    }

    #[test]
    fn versions_become_tags_and_back() {
        let v = semver::Version::parse("1.2.3-rc.1+build.7").unwrap();
        assert_eq!(tag_for_version(&v), "1.2.3-rc.1_build.7");
        assert_eq!(version_of_tag("1.2.3-rc.1_build.7"), Some(v));
        assert_eq!(version_of_tag("latest"), None);
    }
}
