//! [`OrderedMap`]: a string-keyed map in insertion order, laid out for the small maps that
//! make up nearly every property value (a resource's inputs, outputs and nested objects).
//!
//! Why not `IndexMap`: a recorded state holds hundreds of thousands of maps of a few keys, and
//! an `IndexMap` spends on each a 72-byte header, a hash table and a cached hash per entry — at
//! 100,000 resources about 80 MB of a 270 MB preview. Here a map is a vector of pairs (32 bytes
//! of header, 56 per entry, sized exactly when collected) searched linearly while small, which
//! for a handful of keys is also faster than hashing. A map past [`INDEXED_FROM`] entries gets a
//! hash index, so a program, provider or state file that sends a map of a million keys costs
//! what it does in a hash map: no input makes an operation worse than linear.
//!
//! The interface follows `IndexMap`'s (the engine used it before), including its equality: two
//! maps are equal when they hold the same keys with equal values, in any order.

use std::fmt;
use std::hash::{BuildHasher, RandomState};

use hashbrown::HashTable;

/// The size from which a map keeps a hash index instead of searching its entries.
pub const INDEXED_FROM: usize = 16;

/// A map from strings to `V` that keeps insertion order; see the module's documentation.
#[derive(Clone)]
pub struct OrderedMap<V> {
    entries: Vec<(String, V)>,
    /// Positions of `entries` by key, once the map has [`INDEXED_FROM`] entries.
    index: Option<Box<KeyIndex>>,
}

/// A hash index of a map's keys: entry positions, hashed with a per-map random key (so no input
/// can choose colliding keys).
#[derive(Clone)]
struct KeyIndex {
    hasher: RandomState,
    positions: HashTable<usize>,
}

impl KeyIndex {
    fn build<V>(entries: &[(String, V)]) -> KeyIndex {
        let hasher = RandomState::new();
        let mut positions = HashTable::with_capacity(entries.len());
        for (position, (key, _)) in entries.iter().enumerate() {
            let hash = hasher.hash_one(key.as_str());
            positions.insert_unique(hash, position, |&p| hasher.hash_one(entries[p].0.as_str()));
        }
        KeyIndex { hasher, positions }
    }

    fn find<V>(&self, entries: &[(String, V)], key: &str) -> Option<usize> {
        let hash = self.hasher.hash_one(key);
        self.positions.find(hash, |&p| entries[p].0 == key).copied()
    }

    fn insert<V>(&mut self, entries: &[(String, V)], position: usize) {
        let hasher = &self.hasher;
        let hash = hasher.hash_one(entries[position].0.as_str());
        self.positions
            .insert_unique(hash, position, |&p| hasher.hash_one(entries[p].0.as_str()));
    }
}

impl<V> Default for OrderedMap<V> {
    fn default() -> Self {
        OrderedMap::new()
    }
}

impl<V> OrderedMap<V> {
    pub const fn new() -> Self {
        OrderedMap {
            entries: Vec::new(),
            index: None,
        }
    }

    pub fn with_capacity(capacity: usize) -> Self {
        OrderedMap {
            entries: Vec::with_capacity(capacity),
            index: None,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The position of `key`'s entry.
    fn get_index_of(&self, key: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.find(&self.entries, key),
            None => self.entries.iter().position(|(k, _)| k == key),
        }
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get_index_of(key).is_some()
    }

    pub fn get(&self, key: &str) -> Option<&V> {
        self.get_index_of(key).map(|p| &self.entries[p].1)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        self.get_index_of(key).map(|p| &mut self.entries[p].1)
    }

    /// Sets `key` to `value`: a new key goes last, an existing one keeps its place. Returns the
    /// value replaced.
    pub fn insert(&mut self, key: String, value: V) -> Option<V> {
        self.insert_full(key, value).1
    }

    /// Like [`OrderedMap::insert`], also returning the entry's position.
    fn insert_full(&mut self, key: String, value: V) -> (usize, Option<V>) {
        match self.get_index_of(&key) {
            Some(position) => (
                position,
                Some(std::mem::replace(&mut self.entries[position].1, value)),
            ),
            None => (self.push_new(key, value), None),
        }
    }

    /// Appends an entry whose key is known to be absent.
    fn push_new(&mut self, key: String, value: V) -> usize {
        let position = self.entries.len();
        self.entries.push((key, value));
        match &mut self.index {
            Some(index) => index.insert(&self.entries, position),
            None if self.entries.len() >= INDEXED_FROM => {
                self.index = Some(Box::new(KeyIndex::build(&self.entries)));
            }
            None => {}
        }
        position
    }

    /// Removes `key`'s entry, keeping the others in order (linear, as in `IndexMap`).
    pub fn shift_remove(&mut self, key: &str) -> Option<V> {
        self.shift_remove_entry(key).map(|(_, v)| v)
    }

    fn shift_remove_entry(&mut self, key: &str) -> Option<(String, V)> {
        let position = self.get_index_of(key)?;
        let removed = self.entries.remove(position);
        self.reindex();
        Some(removed)
    }

    /// Keeps the entries `keep` accepts, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&String, &mut V) -> bool) {
        let before = self.entries.len();
        self.entries.retain_mut(|(k, v)| keep(k, v));
        if self.entries.len() != before {
            self.reindex();
        }
    }

    /// Sorts the entries by key.
    pub fn sort_keys(&mut self) {
        self.entries.sort_by(|(a, _), (b, _)| a.cmp(b));
        self.reindex();
    }

    /// Rebuilds the index after entries moved (or drops it when the map got small).
    fn reindex(&mut self) {
        self.index =
            (self.entries.len() >= INDEXED_FROM).then(|| Box::new(KeyIndex::build(&self.entries)));
    }

    /// The entry for `key`, to read, change or fill in place.
    pub fn entry(&mut self, key: String) -> Entry<'_, V> {
        match self.get_index_of(&key) {
            Some(position) => Entry::Occupied(OccupiedEntry {
                map: self,
                position,
            }),
            None => Entry::Vacant(VacantEntry { map: self, key }),
        }
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.index = None;
    }

    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut V> + ExactSizeIterator {
        self.entries.iter_mut().map(|(_, v)| v)
    }

    pub fn iter(&self) -> Iter<'_, V> {
        Iter(self.entries.iter())
    }

    pub fn iter_mut(&mut self) -> IterMut<'_, V> {
        IterMut(self.entries.iter_mut())
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &String> + ExactSizeIterator + Clone {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + ExactSizeIterator + Clone {
        self.entries.iter().map(|(_, v)| v)
    }
}

impl<V: PartialEq> PartialEq for OrderedMap<V> {
    /// Same keys with equal values, in any order (as `IndexMap`'s equality).
    fn eq(&self, other: &Self) -> bool {
        if self.len() != other.len() {
            return false;
        }
        // Maps built the same way hold their keys in the same order: compare pairwise until
        // they differ, then look the rest up.
        let same_prefix = self
            .entries
            .iter()
            .zip(&other.entries)
            .take_while(|((ka, _), (kb, _))| ka == kb)
            .count();
        self.entries[..same_prefix]
            .iter()
            .zip(&other.entries[..same_prefix])
            .all(|((_, a), (_, b))| a == b)
            && self.entries[same_prefix..]
                .iter()
                .all(|(k, v)| other.get(k) == Some(v))
    }
}

impl<V: fmt::Debug> fmt::Debug for OrderedMap<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<V: serde::Serialize> serde::Serialize for OrderedMap<V> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<'de, V: serde::Deserialize<'de>> serde::Deserialize<'de> for OrderedMap<V> {
    /// A JSON object in order; of a repeated key, the last value (as `IndexMap` reads one).
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries<V>(std::marker::PhantomData<V>);

        impl<'de, V: serde::Deserialize<'de>> serde::de::Visitor<'de> for Entries<V> {
            type Value = OrderedMap<V>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                // A hint is the sender's word: bounded, so a short text cannot reserve much.
                let mut entries = OrderedMap::with_capacity(map.size_hint().unwrap_or(0).min(4096));
                while let Some((key, value)) = map.next_entry()? {
                    entries.insert(key, value);
                }
                Ok(entries)
            }
        }

        deserializer.deserialize_map(Entries(std::marker::PhantomData))
    }
}

impl<V> std::ops::Index<&str> for OrderedMap<V> {
    type Output = V;

    /// The value of `key`; panics when absent, as `IndexMap` does (for tests and keys known to
    /// be present).
    fn index(&self, key: &str) -> &V {
        match self.get(key) {
            Some(value) => value,
            None => panic!("no entry for key {key:?}"),
        }
    }
}

impl<V> FromIterator<(String, V)> for OrderedMap<V> {
    fn from_iter<I: IntoIterator<Item = (String, V)>>(iter: I) -> Self {
        let iter = iter.into_iter();
        let mut map = OrderedMap::with_capacity(iter.size_hint().0);
        map.extend(iter);
        map
    }
}

impl<V> Extend<(String, V)> for OrderedMap<V> {
    fn extend<I: IntoIterator<Item = (String, V)>>(&mut self, iter: I) {
        for (key, value) in iter {
            self.insert(key, value);
        }
    }
}

impl<V, const N: usize> From<[(String, V); N]> for OrderedMap<V> {
    fn from(entries: [(String, V); N]) -> Self {
        entries.into_iter().collect()
    }
}

impl<V> IntoIterator for OrderedMap<V> {
    type Item = (String, V);
    type IntoIter = std::vec::IntoIter<(String, V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<'a, V> IntoIterator for &'a OrderedMap<V> {
    type Item = (&'a String, &'a V);
    type IntoIter = Iter<'a, V>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, V> IntoIterator for &'a mut OrderedMap<V> {
    type Item = (&'a String, &'a mut V);
    type IntoIter = IterMut<'a, V>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

/// The entries of a map, in order.
#[derive(Clone)]
pub struct Iter<'a, V>(std::slice::Iter<'a, (String, V)>);

impl<'a, V> Iterator for Iter<'a, V> {
    type Item = (&'a String, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (k, v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<V> DoubleEndedIterator for Iter<'_, V> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(k, v)| (k, v))
    }
}

impl<V> ExactSizeIterator for Iter<'_, V> {}

/// The entries of a map, in order, values mutable.
pub struct IterMut<'a, V>(std::slice::IterMut<'a, (String, V)>);

impl<'a, V> Iterator for IterMut<'a, V> {
    type Item = (&'a String, &'a mut V);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (&*k, v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<V> DoubleEndedIterator for IterMut<'_, V> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(k, v)| (&*k, v))
    }
}

impl<V> ExactSizeIterator for IterMut<'_, V> {}

/// A key's place in a map: [`OrderedMap::entry`].
pub enum Entry<'a, V> {
    Occupied(OccupiedEntry<'a, V>),
    Vacant(VacantEntry<'a, V>),
}

pub struct OccupiedEntry<'a, V> {
    map: &'a mut OrderedMap<V>,
    position: usize,
}

pub struct VacantEntry<'a, V> {
    map: &'a mut OrderedMap<V>,
    key: String,
}

impl<'a, V> Entry<'a, V> {
    pub fn or_insert(self, default: V) -> &'a mut V {
        self.or_insert_with(|| default)
    }

    pub fn or_insert_with(self, default: impl FnOnce() -> V) -> &'a mut V {
        match self {
            Entry::Occupied(entry) => entry.into_mut(),
            Entry::Vacant(entry) => entry.insert(default()),
        }
    }
}

impl<'a, V> OccupiedEntry<'a, V> {
    pub fn into_mut(self) -> &'a mut V {
        &mut self.map.entries[self.position].1
    }
}

impl<'a, V> VacantEntry<'a, V> {
    pub fn insert(self, value: V) -> &'a mut V {
        let position = self.map.push_new(self.key, value);
        &mut self.map.entries[position].1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(keys: &[&str]) -> OrderedMap<usize> {
        keys.iter()
            .enumerate()
            .map(|(i, k)| (k.to_string(), i))
            .collect()
    }

    #[test]
    fn keeps_insertion_order_and_replaces_in_place() {
        let mut m = map(&["b", "a", "c"]);
        assert_eq!(m.insert("a".into(), 9), Some(1));
        m.insert("d".into(), 3);
        let entries: Vec<_> = m.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(entries, [("b", 0), ("a", 9), ("c", 2), ("d", 3)]);
        assert_eq!(m.shift_remove("a"), Some(9));
        assert_eq!(m.keys().collect::<Vec<_>>(), ["b", "c", "d"]);
        assert_eq!(m.get("zz"), None);
    }

    #[test]
    fn equality_ignores_order_as_index_map_does() {
        assert_eq!(map(&["a", "b", "c"]), {
            let mut m = OrderedMap::new();
            m.insert("c".to_string(), 2);
            m.insert("a".to_string(), 0);
            m.insert("b".to_string(), 1);
            m
        });
        assert_ne!(map(&["a", "b"]), map(&["a", "c"]));
        assert_ne!(
            map(&["a", "b"]),
            map(&["b", "a"]),
            "same keys, values swapped"
        );
        assert_ne!(map(&["a"]), map(&["a", "b"]));
    }

    /// Every operation gives what the same operations give on an `IndexMap`, across the size at
    /// which the index appears and disappears.
    #[test]
    fn agrees_with_index_map_across_the_indexed_size() {
        let mut ours: OrderedMap<u64> = OrderedMap::new();
        let mut theirs: indexmap::IndexMap<String, u64> = indexmap::IndexMap::new();
        // A fixed pseudo-random sequence of operations on 40 possible keys.
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        for step in 0..20_000u64 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let key = format!("k{}", seed % 40);
            match (seed >> 8) % 6 {
                0..=2 => assert_eq!(ours.insert(key.clone(), step), theirs.insert(key, step)),
                3 | 4 => assert_eq!(ours.shift_remove(&key), theirs.shift_remove(&key)),
                _ => {
                    *ours.entry(key.clone()).or_insert(step) += 1;
                    *theirs.entry(key).or_insert(step) += 1;
                }
            }
            assert!(ours.iter().eq(theirs.iter()), "after step {step}");
            for probe in 0..40 {
                let k = format!("k{probe}");
                assert_eq!(ours.get(&k), theirs.get(&k), "{k} after step {step}");
            }
        }
    }

    /// Read as `IndexMap` reads a JSON object: in order, a repeated key's last value in its
    /// first place; and written back in that order.
    #[test]
    fn reads_and_writes_json_objects_in_order() {
        let m: OrderedMap<u32> = serde_json::from_str(r#"{"z": 1, "a": 2, "z": 3}"#).unwrap();
        let theirs: indexmap::IndexMap<String, u32> =
            serde_json::from_str(r#"{"z": 1, "a": 2, "z": 3}"#).unwrap();
        assert!(m.iter().eq(theirs.iter()));
        assert_eq!(serde_json::to_string(&m).unwrap(), r#"{"z":3,"a":2}"#);
        assert!(serde_json::from_str::<OrderedMap<u32>>("[1]").is_err());
    }

    #[test]
    fn a_map_of_many_keys_is_indexed_and_stays_linear() {
        let n = 200_000;
        let mut m: OrderedMap<usize> = (0..n).map(|i| (format!("key-{i}"), i)).collect();
        assert!(m.index.is_some());
        assert_eq!(m.get("key-123456"), Some(&123_456));
        m.retain(|_, v| *v % 2 == 0);
        assert_eq!(m.len(), n / 2);
        assert_eq!(m.get("key-123456"), Some(&123_456));
        assert_eq!(m.get("key-123457"), None);
        m.retain(|_, v| *v < 10);
        assert!(m.index.is_none(), "small again: searched, not indexed");
        assert_eq!(
            m.keys().collect::<Vec<_>>(),
            ["key-0", "key-2", "key-4", "key-6", "key-8"]
        );
    }
}
