//! Journal replay (`host/engine/src/deploy/journal.rs`): arbitrary journal lines replayed onto a
//! stored checkpoint.

use std::sync::OnceLock;

use arbitrary::{Result, Unstructured};
use cairn_engine::deploy::journal::{JournalHeader, replay};
use cairn_engine::state::{
    DeploymentV3, Manifest, UntypedDeployment, decode_deployment, decode_untyped_deployment,
    verify_integrity,
};
use cairn_fuzz_driver::{Outcome, Target};
use serde_json::{Value, json};

use crate::generate::{self, TestCrypter};

pub const TARGET: Target = Target {
    name: "journal",
    about: "replay of journal records onto a checkpoint: never panics, a result re-reads as itself, decodes and re-encodes",
    run,
    seeds,
    dictionary: &[
        "{\"seq\":",
        "\"begin\":\"creating\"",
        "\"end\":",
        "\"mutations\":[",
        "{\"append\":",
        "{\"removeBase\":",
        "{\"replaceBase\":[",
        "{\"replaceAppended\":[",
        "\"dropBasePending\":true",
        "\"resource\":",
        "\n",
        "}",
        "]",
        "18446744073709551615",
    ],
    max_len: 4096,
};

/// The checkpoint every journal is replayed onto: the valid import case.
fn base() -> &'static DeploymentV3 {
    static BASE: OnceLock<DeploymentV3> = OnceLock::new();
    BASE.get_or_init(|| {
        let text = crate::seed_files("journal-base", &["tests/data/import/valid/deployment.json"]);
        let export: UntypedDeployment = serde_json::from_slice(&text[0])
            .unwrap_or_else(|e| panic!("the journal base does not parse: {e}"));
        decode_untyped_deployment(export).unwrap_or_else(|e| panic!("journal base: {e}"))
    })
}

/// The header line that matches [`base`], for this deployment's manifest.
fn header() -> Vec<u8> {
    let manifest = Manifest {
        time: "2025-01-01T00:00:00Z".into(),
        magic: String::new(),
        version: "fuzz".into(),
        plugins: Vec::new(),
        extra: Default::default(),
    };
    JournalHeader::new(base(), manifest)
        .to_line()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn seeds() -> Vec<Vec<u8>> {
    // Journals in the generated format, from fixed bytes.
    (0u8..16)
        .map(|i| {
            let bytes: Vec<u8> = (0..512u32)
                .map(|j| (j * 31 + u32::from(i) * 7) as u8)
                .collect();
            let mut seed = vec![0];
            seed.extend(bytes);
            seed
        })
        .collect()
}

fn run(data: &[u8]) -> Outcome {
    let base = base();
    let journal = match data.split_first() {
        // Raw lines after a matching header: the record parser sees arbitrary bytes.
        Some((mode, rest)) if mode % 2 == 1 => {
            let mut journal = header();
            journal.extend_from_slice(rest);
            journal
        }
        // Records generated from the bytes: deeper into the overlay logic.
        Some((_, rest)) => generated(&mut Unstructured::new(rest)).unwrap_or_else(|_| header()),
        None => Vec::new(),
    };
    let replayed = replay(base, &journal);
    if let Ok(deployment) = &replayed {
        check(deployment, &journal);
    }
    crate::outcome(&replayed)
}

fn check(deployment: &DeploymentV3, journal: &[u8]) {
    // What replay returns is what gets saved: it must survive a write and a read.
    let text = serde_json::to_string(deployment).unwrap_or_else(|e| panic!("{e}"));
    let reread: DeploymentV3 = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "a replayed deployment does not read back: {e}\njournal: {}",
            String::from_utf8_lossy(journal)
        )
    });
    assert_eq!(
        serde_json::to_value(&reread).ok(),
        serde_json::to_value(deployment).ok()
    );
    // An empty journal changes nothing.
    let same = replay(deployment, b"").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        serde_json::to_value(&same).ok(),
        serde_json::to_value(deployment).ok()
    );
    // Decoding and the integrity check never panic; a decodable result re-encodes the same.
    if let Ok(snapshot) = decode_deployment(deployment.clone(), Some(&TestCrypter)) {
        let _ = verify_integrity(&snapshot);
        super::state::check_snapshot_round_trip(&snapshot);
    }
}

/// A journal: the matching header, then records (mostly well-formed) built from the bytes.
fn generated(u: &mut Unstructured<'_>) -> Result<Vec<u8>> {
    let mut journal = header();
    let records = u.int_in_range(0..=12)?;
    let mut begun: Vec<u64> = Vec::new();
    let mut appended: Vec<String> = Vec::new();
    for seq in 1..=records as u64 {
        let seq_field = if u.ratio(1, 40)? { seq + 1 } else { seq };
        let record = match u.int_in_range(0..=5)? {
            0 | 1 => {
                begun.push(seq);
                json!({"seq": seq_field, "begin": kind(u)?, "resource": resource(u, &appended)?})
            }
            2 | 3 => {
                let id = if !begun.is_empty() && u.ratio(7, 8)? {
                    begun.remove(u.choose_index(begun.len())?)
                } else {
                    u.int_in_range(0..=20)?
                };
                json!({"seq": seq_field, "end": id, "mutations": mutations(u, &mut appended)?})
            }
            4 => json!({"seq": seq_field, "mutations": mutations(u, &mut appended)?}),
            _ => json!({"seq": seq_field, "dropBasePending": true}),
        };
        let mut line = serde_json::to_vec(&record).unwrap_or_default();
        if u.ratio(1, 30)? {
            // A torn or damaged line.
            line.truncate(u.choose_index(line.len().max(1))?);
        }
        line.push(b'\n');
        journal.extend(line);
    }
    Ok(journal)
}

fn kind(u: &mut Unstructured<'_>) -> Result<&'static str> {
    u.choose(&["creating", "updating", "deleting", "reading", "importing"])
        .copied()
}

fn mutations(u: &mut Unstructured<'_>, appended: &mut Vec<String>) -> Result<Value> {
    let n = u.int_in_range(0..=3)?;
    let base_len = base().resources.len() as u64;
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(match u.int_in_range(0..=4)? {
            0 | 1 => {
                let r = resource(u, appended)?;
                if let Some(urn) = r.get("urn").and_then(Value::as_str) {
                    appended.push(urn.to_owned());
                }
                json!({"append": r})
            }
            2 => json!({"removeBase": u.int_in_range(0..=base_len)?}),
            3 => json!({"replaceBase": [u.int_in_range(0..=base_len)?, resource(u, appended)?]}),
            _ => {
                let urn = if !appended.is_empty() && u.ratio(3, 4)? {
                    appended[u.choose_index(appended.len())?].clone()
                } else {
                    generate::urn(u)?.to_string()
                };
                json!({"replaceAppended": [urn, resource(u, appended)?]})
            }
        });
    }
    Ok(Value::Array(out))
}

/// A stored resource: a base resource changed a little, or a new one that refers to base or
/// appended resources.
fn resource(u: &mut Unstructured<'_>, appended: &[String]) -> Result<Value> {
    let base = base();
    let mut r = if u.arbitrary()? {
        let i = u.choose_index(base.resources.len())?;
        serde_json::to_value(&base.resources[i]).unwrap_or(Value::Null)
    } else {
        let urn = generate::urn(u)?;
        let custom: bool = u.arbitrary()?;
        let mut r = json!({"urn": urn.to_string(), "custom": custom, "type": urn.resource_type()});
        if custom {
            r["id"] = json!(generate::text(u)?);
        }
        r
    };
    let mut targets: Vec<String> = base.resources.iter().map(|r| r.urn.to_string()).collect();
    targets.extend(appended.iter().cloned());
    if u.ratio(1, 3)? {
        let t = &targets[u.choose_index(targets.len())?];
        r["parent"] = json!(t);
    }
    if u.ratio(1, 3)? {
        let n = u.int_in_range(1..=3)?;
        let deps: Vec<&String> = (0..n)
            .map(|_| u.choose_index(targets.len()).map(|i| &targets[i]))
            .collect::<Result<_>>()?;
        r["dependencies"] = json!(deps);
    }
    if u.ratio(1, 4)? {
        r["delete"] = json!(true);
    }
    if u.ratio(1, 3)? {
        let outputs = generate::map(u, generate::Kinds::EXACT)?;
        let encoded = cairn_engine::state::encode_property_map(
            &outputs,
            cairn_engine::state::SecretsMode::Encrypt(&TestCrypter),
        );
        if let Ok(encoded) = encoded {
            r["outputs"] = Value::Object(encoded);
        }
    }
    Ok(r)
}
