//! A policy pack that misbehaves when it analyzes a resource named after the misdeed: `trap`
//! panics, `loop` never returns, `flood` logs without end, `grow` allocates without end,
//! `files` tries to read the host's files, `control` answers a message full of terminal
//! escapes, `huge` one of 16 MiB, `many` 20,000 violations; `echo` reports what it was told of
//! the resource (options, provider); any other resource gets an honest advisory violation (so a
//! test sees the pack working before it misbehaves).

use cairn_sdk::policy::{Policy, PolicyPack};

fn pack() -> PolicyPack {
    PolicyPack::new("hostile-policy", "0.0.1").policy(Policy::resource(
        "misbehave",
        "Misbehaves on demand.",
        |r, v| match r.name.as_str() {
            "trap" => panic!("the hostile policy traps"),
            "loop" => {
                let mut n: u64 = 0;
                loop {
                    n = std::hint::black_box(n.wrapping_add(1));
                }
            }
            "flood" => loop {
                cairn_sdk::log::warn(&r.urn, "flood ".repeat(1000));
            },
            "grow" => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(vec![1; 1 << 20]);
                }
            }
            "files" => match std::fs::read_to_string("/etc/passwd") {
                Ok(text) => v.report(format!("read the host's files: {}", text.len())),
                Err(e) => v.report(format!("no files: {e}")),
            },
            "control" => v.report("\u{1b}[2J\u{1b}]0;owned\u{7}\rfaked\u{202e}"),
            "huge" => v.report("x".repeat(16 << 20)),
            "echo" => v.report(format!(
                "{} {} protect={} ignore={:?} dbr={:?} aliases={:?} secret={:?} parent={:?} \
                 provider={:?}",
                r.resource_type,
                r.urn,
                r.protect,
                r.ignore_changes,
                r.delete_before_replace,
                r.aliases,
                r.additional_secret_outputs,
                r.parent,
                r.provider.as_ref().map(|p| (
                    &p.resource_type,
                    &p.name,
                    p.properties.get("region")
                )),
            )),
            "many" => {
                for i in 0..20_000 {
                    v.report(format!("violation {i}"));
                }
            }
            _ => v.report(format!("checked {}", r.name)),
        },
    ))
}

cairn_sdk::export_policy_pack!(pack);
