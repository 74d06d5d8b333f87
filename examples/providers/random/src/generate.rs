//! Generating random values from a [`Source`] of random `u64`s: unbiased choices, strings
//! with per-class minimums, integers in a range, bytes, version 4 and 7 UUIDs, pet names and
//! shuffles. Seeded sources make the seeded resources (`seed`) repeatable.

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

/// A repeatable stream (SplitMix64) from a 64-bit state.
pub struct Seeded(pub u64);

impl Seeded {
    /// The stream for a user's `seed` text: its FNV-1a hash starts the stream, so the same
    /// text always gives the same values.
    pub fn from_text(seed: &str) -> Seeded {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in seed.as_bytes() {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
        Seeded(hash)
    }
}

impl Source for Seeded {
    fn next_u64(&mut self) -> Result<u64, String> {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Ok(z ^ (z >> 31))
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

/// Picks one element uniformly (`items` is not empty).
fn pick<T: Copy>(src: &mut dyn Source, items: &[T]) -> Result<T, String> {
    let i = below(src, items.len() as u64)? as usize;
    Ok(items[i])
}

pub const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
pub const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
pub const NUMERIC: &str = "0123456789";
/// The special characters used unless `overrideSpecial` names others.
pub const SPECIAL: &str = "!@#$%&*()-_=+[]{}<>:?";

/// What a random string is drawn from: `pool`, the characters of the enabled classes, and
/// `minimums`, characters that must appear at least so many times each (a class's minimum
/// applies even when the class is disabled, as in the published package).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Alphabet {
    pub pool: Vec<char>,
    pub minimums: Vec<(Vec<char>, usize)>,
}

/// A string of `length` characters: first each minimum, then uniformly from the pool, then
/// shuffled (so the minimums are not all at the front).
pub fn string(src: &mut dyn Source, length: usize, alphabet: &Alphabet) -> Result<String, String> {
    if alphabet.pool.is_empty() {
        return Err("there are no characters to choose from".into());
    }
    let mut out = Vec::with_capacity(length);
    for (chars, min) in &alphabet.minimums {
        if chars.is_empty() {
            continue;
        }
        for _ in 0..*min {
            out.push(pick(src, chars)?);
        }
    }
    while out.len() < length {
        out.push(pick(src, &alphabet.pool)?);
    }
    fisher_yates(src, &mut out)?;
    Ok(out.into_iter().collect())
}

/// Shuffles `items` in place, every order equally likely.
fn fisher_yates<T>(src: &mut dyn Source, items: &mut [T]) -> Result<(), String> {
    for i in (1..items.len()).rev() {
        let j = below(src, i as u64 + 1)? as usize;
        items.swap(i, j);
    }
    Ok(())
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

/// `n` random bytes.
pub fn bytes(src: &mut dyn Source, n: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(n + 8);
    while out.len() < n {
        out.extend_from_slice(&src.next_u64()?.to_le_bytes());
    }
    out.truncate(n);
    Ok(out)
}

/// A random version 4 UUID (RFC 9562): 122 random bits.
pub fn uuid4(src: &mut dyn Source) -> Result<[u8; 16], String> {
    let mut b = [0u8; 16];
    b.copy_from_slice(&bytes(src, 16)?);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    Ok(b)
}

/// A version 7 UUID (RFC 9562): 48 bits of Unix time in milliseconds, then 74 random bits.
pub fn uuid7(src: &mut dyn Source, unix_millis: u64) -> Result<[u8; 16], String> {
    let mut b = [0u8; 16];
    b.copy_from_slice(&bytes(src, 16)?);
    b[..6].copy_from_slice(&unix_millis.to_be_bytes()[2..]);
    b[6] = (b[6] & 0x0f) | 0x70;
    b[8] = (b[8] & 0x3f) | 0x80;
    Ok(b)
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
    for _ in 2..length {
        words.push(pick(src, ADVERBS)?);
    }
    if length >= 2 {
        words.push(pick(src, ADJECTIVES)?);
    }
    if length >= 1 {
        words.push(pick(src, NAMES)?);
    }
    Ok(words.join(separator))
}

/// `count` items of `items` in random order: a shuffle of all of them, continued with further
/// shuffles while more are wanted (so no item repeats more often than the list is exhausted).
pub fn shuffle(
    src: &mut dyn Source,
    items: &[String],
    count: usize,
) -> Result<Vec<String>, String> {
    let mut out = Vec::with_capacity(count);
    if items.is_empty() {
        return Ok(out);
    }
    while out.len() < count {
        let mut round: Vec<&String> = items.iter().collect();
        fisher_yates(src, &mut round)?;
        out.extend(round.into_iter().take(count - out.len()).cloned());
    }
    Ok(out)
}

#[cfg(test)]
pub mod tests {
    use super::*;

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

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
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
        let mut src = Seeded(1);
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
    fn seeds_repeat_and_differ() {
        let mut a = Seeded::from_text("fixed");
        let mut b = Seeded::from_text("fixed");
        let mut c = Seeded::from_text("other");
        let (x, y, z) = (
            a.next_u64().unwrap(),
            b.next_u64().unwrap(),
            c.next_u64().unwrap(),
        );
        assert_eq!(x, y);
        assert_ne!(x, z);
    }

    #[test]
    fn strings_meet_their_minimums() {
        let mut src = Seeded(42);
        let alphabet = Alphabet {
            pool: chars(&format!("{LOWER}{UPPER}{NUMERIC}{SPECIAL}")),
            minimums: vec![
                (chars(LOWER), 2),
                (chars(UPPER), 3),
                (chars(NUMERIC), 4),
                (chars(SPECIAL), 1),
            ],
        };
        for _ in 0..200 {
            let s = string(&mut src, 12, &alphabet).unwrap();
            assert_eq!(s.chars().count(), 12);
            let count = |set: &str| s.chars().filter(|c| set.contains(*c)).count();
            assert!(count(LOWER) >= 2 && count(UPPER) >= 3 && count(NUMERIC) >= 4);
            assert!(count(SPECIAL) >= 1);
        }
    }

    #[test]
    fn strings_draw_only_from_the_pool_beyond_the_minimums() {
        let mut src = Seeded(7);
        let digits = Alphabet {
            pool: chars(NUMERIC),
            minimums: vec![(chars(UPPER), 0)],
        };
        let s = string(&mut src, 64, &digits).unwrap();
        assert!(s.chars().all(|c| c.is_ascii_digit()), "{s}");
        // A minimum of a class outside the pool still applies.
        let forced = Alphabet {
            pool: chars(NUMERIC),
            minimums: vec![(chars(UPPER), 2)],
        };
        let s = string(&mut src, 8, &forced).unwrap();
        assert_eq!(s.chars().filter(char::is_ascii_uppercase).count(), 2, "{s}");
        let s = string(
            &mut src,
            16,
            &Alphabet {
                pool: chars("λ€"),
                minimums: vec![],
            },
        )
        .unwrap();
        assert!(s.chars().all(|c| c == 'λ' || c == '€'));
        assert!(string(&mut src, 4, &Alphabet::default()).is_err());
    }

    #[test]
    fn integers_stay_in_range() {
        let mut src = Seeded(3);
        let mut seen = [false; 5];
        for _ in 0..1000 {
            let n = integer(&mut src, -2, 2).unwrap();
            assert!((-2..=2).contains(&n));
            seen[(n + 2) as usize] = true;
        }
        assert!(seen.iter().all(|s| *s));
        assert_eq!(integer(&mut src, 5, 5), Ok(5));
        assert!(integer(&mut src, 6, 5).is_err());
        integer(&mut src, i64::MIN, i64::MAX).unwrap();
    }

    #[test]
    fn bytes_have_the_requested_length() {
        let mut src = Seeded(11);
        for n in [1, 7, 8, 9, 33] {
            assert_eq!(bytes(&mut src, n).unwrap().len(), n);
        }
        assert_ne!(bytes(&mut src, 16).unwrap(), bytes(&mut src, 16).unwrap());
    }

    #[test]
    fn uuids_carry_their_version_and_variant() {
        let mut src = Seeded(9);
        let u = uuid4(&mut src).unwrap();
        assert_eq!(u[6] >> 4, 4);
        assert_eq!(u[8] >> 6, 0b10);
        assert_ne!(u, uuid4(&mut src).unwrap());
        let millis = 0x0193_0000_abcd;
        let v = uuid7(&mut src, millis).unwrap();
        assert_eq!(v[6] >> 4, 7);
        assert_eq!(v[8] >> 6, 0b10);
        assert_eq!(&v[..6], &[0x01, 0x93, 0x00, 0x00, 0xab, 0xcd]);
        // Later times sort after earlier ones.
        assert!(uuid7(&mut src, millis + 1).unwrap() > v);
    }

    #[test]
    fn pets_have_the_requested_shape() {
        let mut src = Seeded(5);
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
    fn shuffles_are_permutations_continued_in_rounds() {
        let items: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        let mut src = Seeded(13);
        let mut all = shuffle(&mut src, &items, 4).unwrap();
        all.sort();
        assert_eq!(all, items);
        let ten = shuffle(&mut src, &items, 10).unwrap();
        assert_eq!(ten.len(), 10);
        let mut first_round = ten[..4].to_vec();
        first_round.sort();
        assert_eq!(first_round, items, "each round is a whole permutation");
        assert_eq!(shuffle(&mut src, &items, 2).unwrap().len(), 2);
        assert!(shuffle(&mut src, &[], 3).unwrap().is_empty());
        let seeded = |seed| shuffle(&mut Seeded::from_text(seed), &items, 4).unwrap();
        assert_eq!(seeded("s"), seeded("s"));
    }

    #[test]
    fn a_failing_source_is_an_error() {
        assert_eq!(uuid4(&mut Fixed(vec![])), Err("exhausted".to_owned()));
    }
}
