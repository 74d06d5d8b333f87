//! The WIT node table, host side (`host/wasm/src/convert.rs`): decoding the tables a guest
//! sends into the engine's values, with the engine's limits. The table's own rules and reading
//! it in place are `cairn-wire`'s, fuzzed by `wire_table` (`wire.rs`); the tables come from the
//! generators both targets share (`cairn_wire::arbitrary`).

use arbitrary::Unstructured;
use cairn_engine::limits;
use cairn_engine::state::{SecretsMode, decode_property_map, encode_property_map};
use cairn_fuzz_driver::{Outcome, Target};
use cairn_wasm::bindings::cairn::deploy::types as w;
use cairn_wasm::convert::{decode_map, decode_value, encode_value};
use cairn_wire::arbitrary::{DICTIONARY, Input, input};

use crate::generate::{self, Kinds, TestCrypter};

pub const TARGET: Target = Target {
    name: "wit_value",
    about: "WIT node tables from a guest: malformed tables are errors, accepted values pass the value limits, re-encode to themselves and can be stored as state",
    run,
    seeds,
    dictionary: DICTIONARY,
    max_len: 1024,
};

fn seeds() -> Vec<Vec<u8>> {
    cairn_wire::arbitrary::seeds(17)
}

/// A generated value of every kind, encoded by the host (the tables `cairn_wire::arbitrary`
/// damages).
pub(crate) fn encoded(u: &mut Unstructured<'_>) -> arbitrary::Result<w::Value> {
    Ok(encode_value(&generate::value(u, Kinds::ALL, 0)?))
}

fn run(data: &[u8]) -> Outcome {
    match input(data, encoded) {
        Some(Input::Table(table)) => check_table(table),
        // A generated value: it comes back exactly when the limits allow it, else it is refused.
        Some(Input::Value(mut u)) => {
            if let Ok(value) = generate::value(&mut u, Kinds::ALL, 0) {
                match (
                    decode_value(encode_value(&value)),
                    limits::check_value(&value),
                ) {
                    (Ok(back), Ok(())) => assert!(
                        generate::same(&back, &value),
                        "WIT round trip: {value:?} came back as {back:?}"
                    ),
                    (Err(_), Err(_)) => {}
                    (got, limits) => panic!(
                        "the host's own encoding of {value:?}: decoded {got:?}, limits say {limits:?}"
                    ),
                }
            }
            Outcome::Rejected
        }
        None => Outcome::Rejected,
    }
}

/// The properties of any table: decoding never panics; what decodes re-encodes to a table
/// that decodes to the same value; a property map that decodes is one the engine can keep.
fn check_table(table: w::Value) -> Outcome {
    let value = decode_value(table.clone());
    if let Ok(value) = &value {
        let again = decode_value(encode_value(value)).unwrap_or_else(|e| {
            panic!("re-encoding accepted value {value:?} gives a table that does not decode: {e}")
        });
        assert!(
            generate::same(&again, value),
            "decode∘encode changed {value:?} into {again:?}"
        );
    }
    if let Ok(map) = decode_map(table) {
        check_storable(&map, "a WIT table from a guest");
    }
    crate::outcome(&value)
}

/// A property map a boundary decoder accepted: within the value limits, and it can be written
/// to state and read back as the same stored JSON.
pub(crate) fn check_storable(map: &cairn_engine::value::PropertyMap, what: &str) {
    if let Err(e) = limits::check_properties(map) {
        panic!("{what} was accepted but breaks the value limits: {e}");
    }
    let crypter = TestCrypter;
    let stored = encode_property_map(map, SecretsMode::Encrypt(&crypter))
        .unwrap_or_else(|e| panic!("{what} was accepted but cannot be stored: {e}"));
    let text = serde_json::to_string(&stored).unwrap_or_else(|e| panic!("{e}"));
    let reread: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{what}: its state JSON does not parse back: {e}: {text:.300}"));
    let back = decode_property_map(&reread, Some(&crypter))
        .unwrap_or_else(|e| panic!("{what} was stored but cannot be read back: {e}: {text:.300}"));
    let stored_again = encode_property_map(&back, SecretsMode::Encrypt(&crypter))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        stored_again, stored,
        "{what}: stored, read back and stored again differs: {text:.300}"
    );
}
