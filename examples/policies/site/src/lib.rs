//! `site-policies`: an example policy pack for the example providers, as a WebAssembly
//! component (`cairn up --policy-pack site_policies.wasm`).
//!
//! * `no-world-writable` (mandatory): a `file:index:File` whose `mode` lets anyone write.
//! * `password-length` (advisory): a `random:index/randomPassword:RandomPassword` shorter than the configured
//!   `minLength` (default 16).
//! * `max-resources` (advisory, stack): more resources than the configured `max` (default 50).

use cairn_sdk::policy::serde_json::json;
use cairn_sdk::policy::{Enforcement, Policy, PolicyPack, Severity};

pub fn pack() -> PolicyPack {
    PolicyPack::new("site-policies", env!("CARGO_PKG_VERSION"))
        .policy(
            Policy::resource(
                "no-world-writable",
                "Files must not be writable by everyone.",
                |r, v| {
                    if r.resource_type != "file:index:File" {
                        return;
                    }
                    if let Some(mode) = r.string("mode")
                        && world_writable(mode)
                    {
                        v.report(format!("mode {mode} lets anyone write {}", r.name));
                    }
                },
            )
            .enforcement(Enforcement::Mandatory)
            .severity(Severity::High),
        )
        .policy(
            Policy::resource(
                "password-length",
                "Passwords must be long enough.",
                |r, v| {
                    if r.resource_type != "random:index/randomPassword:RandomPassword" {
                        return;
                    }
                    let min = r
                        .config()
                        .get("minLength")
                        .and_then(|m| m.as_f64())
                        .unwrap_or(16.0);
                    if let Some(length) = r.number("length")
                        && length < min
                    {
                        v.report(format!(
                            "{} is {length} characters (at least {min})",
                            r.name
                        ));
                    }
                },
            )
            .config_schema(json!({
                "properties": {"minLength": {"type": "integer", "minimum": 1, "default": 16}}
            })),
        )
        .policy(
            Policy::stack("max-resources", "Stacks must stay small.", |s, v| {
                let max = s.config().get("max").and_then(|m| m.as_u64()).unwrap_or(50);
                if s.resources.len() as u64 > max {
                    v.report(format!(
                        "the stack has {} resources (at most {max})",
                        s.resources.len()
                    ));
                }
            })
            .config_schema(json!({
                "properties": {"max": {"type": "integer", "minimum": 0, "default": 50}}
            })),
        )
}

/// Whether an octal mode (`"0646"`, `"777"`) has the write bit for others.
fn world_writable(mode: &str) -> bool {
    mode.chars()
        .last()
        .and_then(|c| c.to_digit(8))
        .is_some_and(|others| others & 2 != 0)
}

cairn_sdk::export_policy_pack!(pack);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_that_let_anyone_write() {
        for (mode, writable) in [
            ("0644", false),
            ("0646", true),
            ("777", true),
            ("0600", false),
        ] {
            assert_eq!(world_writable(mode), writable, "{mode}");
        }
    }
}
