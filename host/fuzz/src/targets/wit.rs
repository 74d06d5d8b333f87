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
use cairn_wire::arbitrary::{damaged, raw_table};

use crate::generate::{self, Kinds, TestCrypter};

pub const TARGET: Target = Target {
    name: "wit_value",
    about: "WIT node tables from a guest: malformed tables are errors, accepted values pass the value limits, re-encode to themselves and can be stored as state",
    run,
    seeds,
    dictionary: &[
        "\u{0}\u{0}\u{0}\u{0}",
        "\u{5}\u{0}\u{0}\u{0}",
        "\u{4}\u{0}\u{0}\u{0}",
        "\u{1}\u{0}\u{0}\u{0}",
    ],
    max_len: 1024,
};

fn seeds() -> Vec<Vec<u8>> {
    // Structured inputs start with 0: a generated value, encoded, perhaps damaged.
    (0u8..24)
        .map(|i| {
            let mut seed = vec![i % 3];
            seed.extend((0..400u32).map(|j| (j.wrapping_mul(17) + u32::from(i) * 13) as u8));
            seed
        })
        .collect()
}

fn run(data: &[u8]) -> Outcome {
    let Some((mode, rest)) = data.split_first() else {
        return Outcome::Rejected;
    };
    let mut u = Unstructured::new(rest);
    let table = match mode % 3 {
        // A table built word by word: mostly nonsense, sometimes well-formed.
        0 => raw_table::<w::Value>(&mut u),
        // An encoded value with a few words, bytes or extras damaged.
        1 => generate::value(&mut u, Kinds::ALL, 0)
            .and_then(|value| damaged(&mut u, encode_value(&value))),
        // A generated value: it must come back exactly.
        _ => {
            // Any value: it comes back exactly when the limits allow it, else it is refused.
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
            return Outcome::Rejected;
        }
    };
    let Ok(table) = table else {
        return Outcome::Rejected;
    };
    check_table(table)
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
