//! `sha256:<hex>` content digests, the only algorithm Cairn accepts from a registry.

use std::fmt;

use sha2::{Digest as _, Sha256};

/// A SHA-256 content digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest([u8; 32]);

impl Digest {
    /// Parses `sha256:` followed by 64 lower-case hex digits.
    pub fn parse(text: &str) -> Result<Digest, String> {
        let hex_part = text.strip_prefix("sha256:").ok_or_else(|| {
            format!("digest {text:?} is not a sha256 digest (sha256:<64 lower-case hex digits>)")
        })?;
        if hex_part.len() != 64
            || !hex_part
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return Err(format!(
                "digest {text:?} does not have 64 lower-case hex digits after sha256:"
            ));
        }
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(hex_part, &mut bytes).map_err(|e| format!("digest {text:?}: {e}"))?;
        Ok(Digest(bytes))
    }

    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Digest {
        Digest(Sha256::digest(bytes).into())
    }

    /// The 64 hex digits without the algorithm.
    pub fn hex(&self) -> String {
        hex::encode(self.0)
    }

    pub fn from_bytes(bytes: [u8; 32]) -> Digest {
        Digest(bytes)
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:{}", self.hex())
    }
}

impl serde::Serialize for Digest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Digest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Digest, D::Error> {
        let text = String::deserialize(d)?;
        Digest::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// Hashes bytes as they stream by.
#[derive(Default)]
pub struct Hasher(Sha256);

impl Hasher {
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    pub fn finish(self) -> Digest {
        Digest(self.0.finalize().into())
    }
}
