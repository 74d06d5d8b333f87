//! Generating random values from a [`Source`] of random `u64`s: unbiased choices, strings
//! with per-class minimums, integers in a range, v4 UUIDs and pet names.

use crate::words::{ADJECTIVES, ADVERBS, NAMES};

/// Random 64-bit words.
pub trait Source {
    fn next_u64(&mut self) -> Result<u64, String>;
}

/// The system's entropy: WASI `random` in a component, the OS natively.
pub struct Entropy;

impl Source for Entropy {
    fn next_u64(&mut self) -> Result<u64, String> {
        getrandom::u64().map_err(|e| format!("no randomness available: {e}"))
    }
}

/// A uniform integer in `0..n` (`n > 0`), by rejection sampling (no modulo bias).
pub fn below(src: &mut dyn Source, n: u64) -> Result<u64, String> {
    debug_assert!(n > 0);
    // 2^64 mod n values at the top of the range would be over-represented; reject them.
    let reject = (u64::MAX % n + 1) % n;
    loop {
        let x = src.next_u64()?;
        if reject == 0 || x < 0u64.wrapping_sub(reject) {
            return Ok(x % n);
        }
    }
}

/// Picks one element uniformly.
fn pick<T: Copy>(src: &mut dyn Source, items: &[T]) -> Result<T, String> {
    let i = below(src, items.len() as u64)? as usize;
    Ok(items[i])
}

pub const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
pub const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
pub const NUMERIC: &str = "0123456789";
/// The default special characters (as Pulumi's and Terraform's random providers use).
pub const SPECIAL: &str = "!@#$%&*()-_=+[]{}<>:?";

/// One character class of a random string: its characters and how many it must contribute.
#[derive(Debug, Clone, PartialEq)]
pub struct Class {
    pub chars: Vec<char>,
    pub min: usize,
}

/// A string of `length` characters drawn from `classes`: first each class's minimum, then
/// uniformly from all classes together, then shuffled. Classes with no characters are skipped.
pub fn string(src: &mut dyn Source, length: usize, classes: &[Class]) -> Result<String, String> {
    let all: Vec<char> = classes
        .iter()
        .flat_map(|c| c.chars.iter().copied())
        .collect();
    if all.is_empty() {
        return Err("there are no characters to choose from".into());
    }
    let mut out = Vec::with_capacity(length);
    for class in classes.iter().filter(|c| !c.chars.is_empty()) {
        for _ in 0..class.min {
            out.push(pick(src, &class.chars)?);
        }
    }
    while out.len() < length {
        out.push(pick(src, &all)?);
    }
    // Fisher-Yates, so the minimums are not all at the front.
    for i in (1..out.len()).rev() {
        let j = below(src, i as u64 + 1)? as usize;
        out.swap(i, j);
    }
    Ok(out.into_iter().collect())
}

/// A uniform integer in `min..=max`.
pub fn integer(src: &mut dyn Source, min: i64, max: i64) -> Result<i64, String> {
    if min > max {
        return Err(format!("min ({min}) is greater than max ({max})"));
    }
    let span = max.abs_diff(min);
    let offset = if span == u64::MAX {
        src.next_u64()?
    } else {
        below(src, span + 1)?
    };
    Ok(min.wrapping_add_unsigned(offset))
}

/// A random (version 4) UUID in lower-case hex.
pub fn uuid(src: &mut dyn Source) -> Result<String, String> {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&src.next_u64()?.to_le_bytes());
    bytes[8..].copy_from_slice(&src.next_u64()?.to_le_bytes());
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    ))
}

/// True for a lower- or upper-case hex UUID (`8-4-4-4-12`).
pub fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.chars().all(|c| c.is_ascii_hexdigit()))
}

/// A pet name of `length` words: `name`, `adjective-name`, or adverbs then an adjective then a
/// name, joined by `separator`, after `prefix` when given.
pub fn pet(
    src: &mut dyn Source,
    length: usize,
    separator: &str,
    prefix: Option<&str>,
) -> Result<String, String> {
    let mut words: Vec<&str> = Vec::with_capacity(length + 1);
    if let Some(p) = prefix {
        words.push(p);
    }
    if length >= 3 {
        for _ in 0..length - 2 {
            words.push(pick(src, ADVERBS)?);
        }
    }
    if length >= 2 {
        words.push(pick(src, ADJECTIVES)?);
    }
    if length >= 1 {
        words.push(pick(src, NAMES)?);
    }
    Ok(words.join(separator))
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// A deterministic source (SplitMix64).
    pub struct Seq(pub u64);

    impl Source for Seq {
        fn next_u64(&mut self) -> Result<u64, String> {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            Ok(z ^ (z >> 31))
        }
    }

    /// Replays fixed words.
    struct Fixed(Vec<u64>);

    impl Source for Fixed {
        fn next_u64(&mut self) -> Result<u64, String> {
            if self.0.is_empty() {
                return Err("exhausted".into());
            }
            Ok(self.0.remove(0))
        }
    }

    fn class(chars: &str, min: usize) -> Class {
        Class {
            chars: chars.chars().collect(),
            min,
        }
    }

    #[test]
    fn below_rejects_the_biased_top() {
        // n = 3: 2^64 mod 3 = 1, so u64::MAX is rejected and the next word used.
        let mut src = Fixed(vec![u64::MAX, 7]);
        assert_eq!(below(&mut src, 3), Ok(1));
        let mut src = Fixed(vec![u64::MAX]);
        assert_eq!(below(&mut src, 1 << 63), Ok((1 << 63) - 1));
    }

    #[test]
    fn below_is_roughly_uniform() {
        let mut src = Seq(1);
        let mut counts = [0u32; 6];
        for _ in 0..60_000 {
            counts[below(&mut src, 6).unwrap() as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_000..11_000).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn strings_meet_their_minimums() {
        let mut src = Seq(42);
        for _ in 0..200 {
            let classes = [
                class(LOWER, 2),
                class(UPPER, 3),
                class(NUMERIC, 4),
                class(SPECIAL, 1),
            ];
            let s = string(&mut src, 12, &classes).unwrap();
            assert_eq!(s.chars().count(), 12);
            let count = |set: &str| s.chars().filter(|c| set.contains(*c)).count();
            assert!(count(LOWER) >= 2 && count(UPPER) >= 3 && count(NUMERIC) >= 4);
            assert!(count(SPECIAL) >= 1);
        }
    }

    #[test]
    fn strings_use_only_enabled_classes() {
        let mut src = Seq(7);
        let s = string(&mut src, 64, &[class(NUMERIC, 0), class("", 0)]).unwrap();
        assert!(s.chars().all(|c| c.is_ascii_digit()), "{s}");
        let s = string(&mut src, 16, &[class("λ€", 0)]).unwrap();
        assert!(s.chars().all(|c| c == 'λ' || c == '€'));
        assert!(string(&mut src, 4, &[class("", 0)]).is_err());
    }

    #[test]
    fn integers_stay_in_range() {
        let mut src = Seq(3);
        let mut seen = [false; 5];
        for _ in 0..1000 {
            let n = integer(&mut src, -2, 2).unwrap();
            assert!((-2..=2).contains(&n));
            seen[(n + 2) as usize] = true;
        }
        assert!(seen.iter().all(|s| *s));
        assert_eq!(integer(&mut src, 5, 5), Ok(5));
        assert!(integer(&mut src, 6, 5).is_err());
        let n = integer(&mut src, i64::MIN, i64::MAX).unwrap();
        let _ = n; // any value is in range
    }

    #[test]
    fn uuids_are_version_4() {
        let mut src = Seq(9);
        let u = uuid(&mut src).unwrap();
        assert!(is_uuid(&u), "{u}");
        assert_eq!(&u[14..15], "4");
        assert!("89ab".contains(&u[19..20]), "{u}");
        assert_ne!(u, uuid(&mut src).unwrap());
        assert!(!is_uuid("not-a-uuid"));
    }

    #[test]
    fn pets_have_the_requested_shape() {
        let mut src = Seq(5);
        let p = pet(&mut src, 2, "-", None).unwrap();
        let words: Vec<&str> = p.split('-').collect();
        assert_eq!(words.len(), 2);
        assert!(
            ADJECTIVES.contains(&words[0]) && NAMES.contains(&words[1]),
            "{p}"
        );
        let p = pet(&mut src, 4, "_", Some("dev")).unwrap();
        let words: Vec<&str> = p.split('_').collect();
        assert_eq!(words.len(), 5);
        assert_eq!(words[0], "dev");
        assert!(ADVERBS.contains(&words[1]) && ADVERBS.contains(&words[2]));
        assert!(NAMES.contains(&pet(&mut src, 1, "-", None).unwrap().as_str()));
    }

    #[test]
    fn a_failing_source_is_an_error() {
        assert_eq!(uuid(&mut Fixed(vec![])), Err("exhausted".to_owned()));
    }
}
