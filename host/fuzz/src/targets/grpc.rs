//! `google.protobuf.Struct` conversion (`host/grpc/src/convert.rs`): from the wire and to it.

use arbitrary::Unstructured;
use cairn_engine::value::{PropertyMap, PropertyValue};
use cairn_fuzz_driver::{Outcome, Target};
use cairn_grpc::convert::{Marshal, from_struct, plain_json, to_struct};
use prost::Message;
use prost_types::Struct;

use crate::generate::{self, Kinds};

pub const TARGET: Target = Target {
    name: "grpc_struct",
    about: "protobuf Struct from a plugin or SDK: accepted maps pass the value limits, can be stored, and re-encode (every Marshal) to what decodes the same",
    run,
    seeds,
    dictionary: &[
        "4dabf18193072939515e22adb298388d",
        "1b47061264138c4ac30d75fd1eb44270",
        "d0e6a833031e9bbcd3f4e8bde6ca49a4",
        "5cf8f73096256a8f31e491e813e4eb8e",
        "04da6b54-80e4-46f7-96ec-b56ff0331ba9",
        "urn:pulumi:dev::p::a:b:C::n",
        "\u{a}\u{5}value\u{12}",
        "\u{11}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{f8}\u{7f}",
    ],
    max_len: 1024,
};

fn seeds() -> Vec<Vec<u8>> {
    // The wire bytes of generated maps (mode byte 0 = raw wire bytes).
    let mut seeds = Vec::new();
    for i in 0u8..24 {
        let bytes: Vec<u8> = (0..300u32)
            .map(|j| (j * 29 + u32::from(i) * 11) as u8)
            .collect();
        if let Ok(map) = generate::map(&mut Unstructured::new(&bytes), Kinds::ALL) {
            let mut seed = vec![0];
            seed.extend(to_struct(&map, Marshal::ALL).encode_to_vec());
            seeds.push(seed);
        }
        let mut generated = vec![1];
        generated.extend(bytes);
        seeds.push(generated);
    }
    seeds
}

const MARSHALS: [Marshal; 4] = [
    Marshal::ALL,
    Marshal::PLAIN,
    Marshal {
        secrets: true,
        resources: false,
        outputs: false,
    },
    Marshal {
        secrets: false,
        resources: true,
        outputs: true,
    },
];

fn run(data: &[u8]) -> Outcome {
    let Some((mode, rest)) = data.split_first() else {
        return Outcome::Rejected;
    };
    if mode % 2 == 1 {
        // Generated maps: to the wire and back, exactly up to key order and the protocol's
        // foldings (checked as a fixed point).
        if let Ok(map) = generate::map(&mut Unstructured::new(rest), Kinds::ALL) {
            let wire = to_struct(&map, Marshal::ALL).encode_to_vec();
            let s = Struct::decode(wire.as_slice()).unwrap_or_else(|e| panic!("{e}"));
            if let Ok(back) = from_struct(Some(&s)) {
                check_fixed_point(&back);
            }
            let plain = Kinds {
                outputs: false,
                ..Kinds::EXACT
            };
            if let Ok(map) = generate::map(&mut Unstructured::new(rest), plain) {
                let s = to_struct(&map, Marshal::ALL);
                let back = from_struct(Some(&s))
                    .unwrap_or_else(|e| panic!("generated {map:?} does not come back: {e}"));
                assert!(
                    generate::same(&back, &sorted_map(&map)),
                    "gRPC round trip of {map:?} gave {back:?}"
                );
            }
        }
        return Outcome::Rejected;
    }
    let Ok(s) = Struct::decode(rest) else {
        return Outcome::Rejected;
    };
    let map = from_struct(Some(&s));
    if let Ok(map) = &map {
        super::wit::check_storable(map, "a protobuf Struct from a plugin");
        check_fixed_point(map);
    }
    crate::outcome(&map)
}

/// A decoded map re-encodes, for every kind of peer, to a Struct that decodes; for a peer that
/// accepts everything, to the same map.
fn check_fixed_point(map: &PropertyMap) {
    for marshal in MARSHALS {
        let s = to_struct(map, marshal);
        let wire = s.encode_to_vec();
        let s = Struct::decode(wire.as_slice())
            .unwrap_or_else(|e| panic!("our own encoding does not decode as protobuf: {e}"));
        let back = from_struct(Some(&s))
            .unwrap_or_else(|e| panic!("{map:?} encoded for {marshal:?} does not decode: {e}"));
        if marshal == Marshal::ALL {
            let again = to_struct(&back, marshal);
            assert!(
                generate::same(&again, &s),
                "decode→encode is not a fixed point for {map:?}"
            );
        }
    }
    for value in map.values() {
        let _ = plain_json(value);
    }
}

/// The map with object keys (and archive members) sorted, as a `Struct` orders them.
fn sorted_map(map: &PropertyMap) -> PropertyMap {
    let mut out: PropertyMap = map
        .iter()
        .map(|(k, v)| (k.clone(), sorted(v.clone())))
        .collect();
    out.sort_keys();
    out
}

fn sorted(value: PropertyValue) -> PropertyValue {
    use cairn_engine::asset::{ArchiveMember, ArchiveSource};
    fn archive(mut a: cairn_engine::asset::Archive) -> cairn_engine::asset::Archive {
        if let ArchiveSource::Assets(members) = &mut a.source {
            members.sort_keys();
            for member in members.values_mut() {
                if let ArchiveMember::Archive(inner) = member {
                    *inner = archive(inner.clone());
                }
            }
        }
        a
    }
    value.map(&mut |v| match v {
        PropertyValue::Object(mut m) => {
            m.sort_keys();
            PropertyValue::Object(m)
        }
        PropertyValue::Archive(a) => PropertyValue::Archive(Box::new(archive(*a))),
        other => other,
    })
}
