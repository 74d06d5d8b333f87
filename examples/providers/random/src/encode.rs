//! Text forms of random bytes: hex, base64 (standard and URL-safe), decimal, UUIDs — and
//! reading them back, for import IDs.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};

/// Lower-case hexadecimal.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Standard base64, padded.
pub fn b64_std(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// URL-safe base64 without padding.
pub fn b64_url(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

pub fn from_b64_std(text: &str) -> Option<Vec<u8>> {
    STANDARD.decode(text).ok()
}

pub fn from_b64_url(text: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(text).ok()
}

/// The bytes read as one big-endian unsigned integer, in decimal (`"0"` for none).
pub fn decimal(bytes: &[u8]) -> String {
    // Repeated division by 10 of the big-endian number; digits come out least significant first.
    let mut number: Vec<u8> = bytes.iter().copied().skip_while(|b| *b == 0).collect();
    let mut digits = Vec::new();
    while !number.is_empty() {
        let mut remainder = 0u32;
        for byte in number.iter_mut() {
            let acc = (remainder << 8) | u32::from(*byte);
            *byte = (acc / 10) as u8;
            remainder = acc % 10;
        }
        digits.push(b'0' + remainder as u8);
        let leading = number.iter().take_while(|b| **b == 0).count();
        number.drain(..leading);
    }
    if digits.is_empty() {
        return "0".into();
    }
    digits.iter().rev().map(|d| char::from(*d)).collect()
}

/// A UUID in its canonical form, `8-4-4-4-12` lower-case hex digits.
pub fn uuid(bytes: &[u8; 16]) -> String {
    let h = hex(bytes);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// How strictly a UUID is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UuidForms {
    /// Only `8-4-4-4-12` hex digits (either case).
    Canonical,
    /// Also 32 hex digits without hyphens, `{…}` braces and a `urn:uuid:` prefix.
    Lenient,
}

/// Reads a UUID, returning its canonical form.
pub fn parse_uuid(text: &str, forms: UuidForms) -> Option<String> {
    let mut body = text;
    if forms == UuidForms::Lenient {
        if let Some(rest) = body
            .get(..9)
            .filter(|p| p.eq_ignore_ascii_case("urn:uuid:"))
            .and_then(|_| body.get(9..))
        {
            body = rest;
        } else if let Some(inner) = body.strip_prefix('{').and_then(|b| b.strip_suffix('}')) {
            body = inner;
        }
    }
    let digits: String = if body.len() == 36 {
        let hyphens_in_place = body
            .char_indices()
            .all(|(i, c)| (c == '-') == matches!(i, 8 | 13 | 18 | 23));
        if !hyphens_in_place {
            return None;
        }
        body.chars().filter(|c| *c != '-').collect()
    } else if forms == UuidForms::Lenient && body.len() == 32 {
        body.to_owned()
    } else {
        return None;
    };
    if !digits.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let lower = digits.to_ascii_lowercase();
    Some(format!(
        "{}-{}-{}-{}-{}",
        &lower[..8],
        &lower[8..12],
        &lower[12..16],
        &lower[16..20],
        &lower[20..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings() {
        let bytes = [0xfb, 0xff, 0x01];
        assert_eq!(hex(&bytes), "fbff01");
        assert_eq!(b64_std(&bytes), "+/8B");
        assert_eq!(b64_url(&bytes), "-_8B");
        assert_eq!(b64_std(&[1]), "AQ==");
        assert_eq!(b64_url(&[1]), "AQ");
        assert_eq!(from_b64_url("-_8B").unwrap(), bytes);
        assert_eq!(from_b64_std("+/8B").unwrap(), bytes);
        assert!(from_b64_std("not base64!").is_none());
        assert!(from_b64_url("AQ==").is_none(), "no padding in the URL form");
    }

    #[test]
    fn decimals_of_big_numbers() {
        for (bytes, expected) in [
            (&[][..], "0"),
            (&[0, 0][..], "0"),
            (&[7][..], "7"),
            (&[1, 0][..], "256"),
            (&[0xff; 8][..], "18446744073709551615"),
            (&[1, 0, 0, 0, 0, 0, 0, 0, 0][..], "18446744073709551616"),
        ] {
            assert_eq!(decimal(bytes), expected, "{bytes:?}");
        }
    }

    #[test]
    fn uuids_in_their_forms() {
        let canonical = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
        let upper = canonical.to_ascii_uppercase();
        for (text, forms, expected) in [
            (canonical, UuidForms::Canonical, Some(canonical)),
            (upper.as_str(), UuidForms::Canonical, Some(canonical)),
            (
                "0193a1b2c3d47e5f8a9b0c1d2e3f4a5b",
                UuidForms::Canonical,
                None,
            ),
            (
                "0193a1b2c3d47e5f8a9b0c1d2e3f4a5b",
                UuidForms::Lenient,
                Some(canonical),
            ),
            (
                "{0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b}",
                UuidForms::Lenient,
                Some(canonical),
            ),
            (
                "urn:uuid:0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
                UuidForms::Lenient,
                Some(canonical),
            ),
            (
                "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5",
                UuidForms::Lenient,
                None,
            ),
            (
                "0193a1b2-c3d4-7e5f-8a9b0-c1d2e3f4a5b",
                UuidForms::Lenient,
                None,
            ),
            (
                "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5g",
                UuidForms::Lenient,
                None,
            ),
            ("", UuidForms::Lenient, None),
            ("é", UuidForms::Lenient, None),
        ] {
            assert_eq!(
                parse_uuid(text, forms).as_deref(),
                expected,
                "{text} {forms:?}"
            );
        }
        assert_eq!(uuid(&[0xab; 16]), "abababab-abab-abab-abab-abababababab");
    }
}
