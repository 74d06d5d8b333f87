//! [`Properties`]: a property map that stays in its wire form until a provider reads it.
//!
//! Requests hand providers their inputs and state as `Properties`. Reading one (through
//! `Deref` to [`PropertyMap`]) validates and decodes it once; a provider that returns it
//! unread or unchanged sends the host's own table back without validating or encoding
//! anything, and the default `diff` compares tables in place. So the calls most providers
//! leave to the defaults (`check` returning the inputs, `diff` of inputs, `read` returning the
//! recorded state) cost no decoding at all, and properties never read cost nothing.
//!
//! # Lazy properties in the SDK
//!
//! Requests give providers `Properties`: the host's table as it came, validated on first read,
//! decoded into `Value`s on first read (`Deref` to `PropertyMap`), forgotten on first write
//! (`DerefMut`). Returned unchanged, it goes back as the same table (no encoding, and no validation
//! if it was never read: the default `check` costs the guest nothing per property); the default
//! `diff` compares two tables in place (`Node::same_as`, equivalent to `Value::same_as` and tested
//! against it), comparing texts and keys eight bytes at a time (wasm's `memcmp` is a byte loop) and
//! reading a key as text only when it changed; tables that are identical word for word and hold no
//! unknown (an unchanged resource: the host encodes equal maps alike) are taken as unchanged after
//! one block compare, without reading a node. Validating on first read rather than on arrival is
//! safe because the host is the trusted side — it only sends tables it encoded, and could rewrite
//! guest memory anyway — so guest-side validation guards against host bugs, not attacks: a
//! malformed table stops the provider with a panic naming the fault ("the host sent a malformed
//! property table: …"), which the host reports as a trap. On the host, `check` and `read` keep the
//! tables they sent and, when the guest returns exactly those tables (the SDK's defaults, a refresh
//! with no drift), reuse the engine's own maps instead of decoding; an empty map is encoded as no
//! nodes (no allocation), and a map's columns are sized before it is encoded, so they never grow.
//! Measured (`cargo bench -p cairn-wasm --bench wasm`, 1 KB object, 20 nodes, probe at opt-level 3,
//! median over batches in quiet periods; the machine's speed drifts by up to 1.5×, so the bench
//! prints the fastest batch too): Check 31 → 10.6 → 4.9 → **4.6 µs** (fastest 4.4), Diff (unchanged
//! resource) 38 → 18.8 → 11 → **4.4 µs** (fastest 4.2), a Diff with one changed property 8.6 µs
//! (its tables are validated and compared node by node), fixed cost of a call 2.2 µs (of which ~0.3
//! µs is wasmtime's async call itself; the rest is lowering and lifting the lists of an empty
//! request and result, and the pool). `CAIRN_WASM_PERFMAP=1` makes wasmtime write a perf map so
//! `perf` names guest functions (build the guest unstripped).

use std::cell::OnceCell;
use std::fmt;
use std::ops::{Deref, DerefMut};

use crate::bindings::cairn::deploy::types as wit;
use crate::value::{PropertyMap, Value};
use crate::wire::{self, Decode, Node};

/// A property map, decoded on first access. Derefs to [`PropertyMap`]; build one from a map
/// with `.into()`.
#[derive(Default)]
pub struct Properties {
    /// The host's table, while it still says what the map says.
    received: Option<Received>,
    /// The decoded (or given) map.
    map: OnceCell<PropertyMap>,
}

/// A table as the host sent it, validated when first read.
#[derive(Clone)]
struct Received {
    value: wit::Value,
    validated: OnceCell<()>,
}

impl Received {
    /// The root object (`None` for an empty table or a `null` root).
    ///
    /// The host only sends tables it encoded itself, so a malformed one is a host bug: the
    /// provider stops (a trap the host reports with this message) rather than read it.
    fn object(&self) -> Option<Node<'_>> {
        self.validated.get_or_init(|| {
            if let Err(e) = wire::validate_map(&self.value) {
                panic!("cairn-sdk: the host sent a malformed property table: {e}");
            }
        });
        wire::object(&self.value)
    }
}

impl Properties {
    /// Properties from a table the host sent; validated when first read.
    pub(crate) fn from_wire(value: wit::Value) -> Properties {
        Properties {
            received: Some(Received {
                value,
                validated: OnceCell::new(),
            }),
            map: OnceCell::new(),
        }
    }

    /// The wire form to send to the host: the received table if nothing changed.
    pub(crate) fn into_wire(self) -> wit::Value {
        match (self.received, self.map.into_inner()) {
            (Some(received), _) => received.value,
            (None, Some(map)) => wire::encode_map(&map),
            (None, None) => wire::encode_map(&PropertyMap::new()),
        }
    }

    /// The map, decoded if it has not been yet.
    pub fn into_map(self) -> PropertyMap {
        let Properties { received, map } = self;
        map.into_inner()
            .unwrap_or_else(|| received.as_ref().map(decoded).unwrap_or_default())
    }

    /// The host's table, while the properties are still exactly that: `Some(None)` when it
    /// is empty (or a `null` root), `None` once the map may have changed.
    pub(crate) fn object(&self) -> Option<Option<Node<'_>>> {
        self.received.as_ref().map(Received::object)
    }

    /// Whether both are still the host's tables and these are identical with no unknown in
    /// them ([`cairn_wire::same_known`]): then nothing differs, and nothing need be read.
    pub(crate) fn same_known_table(&self, other: &Properties) -> bool {
        match (&self.received, &other.received) {
            (Some(a), Some(b)) => cairn_wire::same_known(&a.value, &b.value),
            _ => false,
        }
    }

    fn map(&self) -> &PropertyMap {
        self.map
            .get_or_init(|| self.received.as_ref().map(decoded).unwrap_or_default())
    }
}

fn decoded(received: &Received) -> PropertyMap {
    received.object().map(Decode::to_map).unwrap_or_default()
}

impl Deref for Properties {
    type Target = PropertyMap;

    fn deref(&self) -> &PropertyMap {
        self.map()
    }
}

impl DerefMut for Properties {
    /// Decodes, and forgets the host's table: the map may change.
    fn deref_mut(&mut self) -> &mut PropertyMap {
        self.map();
        self.received = None;
        self.map.get_mut().expect("decoded just above")
    }
}

impl From<PropertyMap> for Properties {
    fn from(map: PropertyMap) -> Properties {
        Properties {
            received: None,
            map: OnceCell::from(map),
        }
    }
}

impl From<Properties> for PropertyMap {
    fn from(p: Properties) -> PropertyMap {
        p.into_map()
    }
}

impl FromIterator<(String, Value)> for Properties {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Properties {
        PropertyMap::from_iter(iter).into()
    }
}

impl<'a> IntoIterator for &'a Properties {
    type Item = (&'a String, &'a Value);
    type IntoIter = indexmap::map::Iter<'a, String, Value>;

    fn into_iter(self) -> Self::IntoIter {
        self.map().iter()
    }
}

impl Clone for Properties {
    fn clone(&self) -> Properties {
        Properties {
            received: self.received.clone(),
            map: self.map.clone(),
        }
    }
}

impl PartialEq for Properties {
    fn eq(&self, other: &Properties) -> bool {
        self.map() == other.map()
    }
}

impl PartialEq<PropertyMap> for Properties {
    fn eq(&self, other: &PropertyMap) -> bool {
        self.map() == other
    }
}

impl fmt::Debug for Properties {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.map().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{props, secret};

    fn from_host(map: &PropertyMap) -> Properties {
        Properties::from_wire(wire::encode_map(map))
    }

    #[test]
    fn unread_properties_go_back_as_they_came() {
        let map = props! {"a" => 1, "s" => secret("x")};
        let sent = wire::encode_map(&map);
        let p = Properties::from_wire(sent.clone());
        assert!(p.object().is_some());
        assert_eq!(p.into_wire(), sent);

        // Reading decodes but keeps the table: nothing changed.
        let p = from_host(&map);
        assert_eq!(p.get("a"), Some(&Value::from(1)));
        assert!(p.object().is_some());
        assert_eq!(p.into_wire(), sent);
    }

    #[test]
    fn changed_properties_are_encoded_afresh() {
        let mut p = from_host(&props! {"a" => 1});
        p.insert("b".into(), Value::from(true));
        assert!(p.object().is_none());
        let back = wire::decode_map(p.into_wire()).unwrap();
        assert_eq!(back, props! {"a" => 1, "b" => true});

        let built: Properties = props! {"x" => "y"}.into();
        assert_eq!(
            wire::decode_map(built.into_wire()).unwrap(),
            props! {"x" => "y"}
        );
        assert_eq!(
            wire::decode_map(Properties::default().into_wire()).unwrap(),
            props! {}
        );
    }

    #[test]
    fn equality_debug_and_conversion_see_the_map() {
        let map = props! {"k" => vec![Value::from(1)]};
        let p = from_host(&map);
        assert_eq!(p, Properties::from(map.clone()));
        assert_eq!(p, map);
        assert_eq!(format!("{p:?}"), format!("{map:?}"));
        assert_eq!(p.clone().into_map(), map);
        assert_eq!((&p).into_iter().count(), 1);
    }

    #[test]
    fn tables_are_validated_when_first_read() {
        // Unread, a table goes back untouched: nothing validates what nothing reads.
        let number = wire::encode(&Value::from(3));
        assert_eq!(Properties::from_wire(number.clone()).into_wire(), number);
        assert!(Properties::from_wire(wire::encode(&Value::Null)).is_empty());
    }

    #[test]
    #[should_panic(expected = "the host sent a malformed property table")]
    fn a_table_that_is_not_an_object_stops_the_provider_when_read() {
        let p = Properties::from_wire(wire::encode(&Value::from(3)));
        let _ = p.len();
    }

    #[test]
    #[should_panic(expected = "malformed property table")]
    fn a_malformed_table_stops_the_provider_when_read() {
        let mut value = wire::encode_map(&props! {"a" => "b"});
        value.strings.truncate(1);
        let p = Properties::from_wire(value);
        let _ = p.object();
    }
}
