//! [`MemberState`], the hasher of archive member maps: SipHash-1-3 (std's `RandomState`
//! algorithm) keyed at random once per process.
//!
//! Member names come from untrusted guests (the host decodes every archive a provider
//! returns), so with a known key a guest could pick names that all collide and make each
//! insertion into a large archive walk every earlier one. A key drawn from the operating
//! system (`getrandom`: `getrandom(2)` on Linux, `wasi:random` in a component) is not known to
//! the guest. `foldhash`, already in the dependency tree, was not chosen: it says itself it
//! does not aim at resistance to such flooding.

use core::hash::BuildHasher;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use siphasher::sip::SipHasher13;

/// Builds the [`SipHasher13`]s of archive member maps with the process's random key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemberState {
    k0: u64,
    k1: u64,
}

impl Default for MemberState {
    fn default() -> MemberState {
        let (k0, k1) = keys();
        MemberState { k0, k1 }
    }
}

impl BuildHasher for MemberState {
    type Hasher = SipHasher13;

    #[inline]
    fn build_hasher(&self) -> SipHasher13 {
        SipHasher13::new_with_keys(self.k0, self.k1)
    }
}

static READY: AtomicBool = AtomicBool::new(false);
static K0: AtomicU64 = AtomicU64::new(0);
static K1: AtomicU64 = AtomicU64::new(0);

/// The process's key, drawn on first use. Two threads racing to draw it may leave one's `k0`
/// with the other's `k1`: still a random key, and every map keeps the key it was built with.
fn keys() -> (u64, u64) {
    if !READY.load(Ordering::Acquire) {
        let (k0, k1) = draw();
        K0.store(k0, Ordering::Relaxed);
        K1.store(k1, Ordering::Relaxed);
        READY.store(true, Ordering::Release);
    }
    (K0.load(Ordering::Relaxed), K1.load(Ordering::Relaxed))
}

fn draw() -> (u64, u64) {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No randomness source (not expected on Linux or wasip2): fall back to where the
        // process was loaded (address-space layout randomisation), which beats a fixed key.
        let here = &bytes as *const _ as usize as u64;
        let code = draw as *const () as usize as u64;
        bytes[..8].copy_from_slice(&here.rotate_left(29).to_le_bytes());
        bytes[8..].copy_from_slice(&(code ^ 0x9e37_79b9_7f4a_7c15).to_le_bytes());
    }
    let (a, b) = bytes.split_at(8);
    let word = |s: &[u8]| u64::from_le_bytes(s.try_into().unwrap_or_default());
    (word(a), word(b))
}

#[cfg(test)]
mod tests {
    use core::hash::BuildHasher;

    use super::*;

    #[test]
    fn the_key_is_random_and_shared() {
        let a = MemberState::default();
        let b = MemberState::default();
        // Maps built at different times hash alike (one process key) ...
        assert_eq!(a, b);
        assert_eq!(a.hash_one("member.txt"), b.hash_one("member.txt"));
        // ... and the key is not SipHash's all-zero default.
        assert_ne!((a.k0, a.k1), (0, 0));
        let zero = MemberState { k0: 0, k1: 0 };
        assert_ne!(a.hash_one("member.txt"), zero.hash_one("member.txt"));
    }
}
