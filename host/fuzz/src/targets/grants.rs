//! The grants JSON, `cairn:grants` and `cairn:program` (`host/wasm/src/grants.rs`).

use std::path::Path;

use cairn_fuzz_driver::{Outcome, Target};
use cairn_wasm::{Capabilities, DirRequest, Grants, Manifest, Sandbox};
use serde_json::Value;

pub const TARGET: Target = Target {
    name: "grants",
    about: "cairn:grants / cairn:program JSON: accepted grants hold valid names, hosts and paths, and sandboxes built from them never panic",
    run,
    seeds,
    dictionary: &[
        "\"http\"",
        "\"tcp\"",
        "\"127.0.0.1:5432\"",
        "\"*:5432\"",
        "\"directories\"",
        "\"env\"",
        "\"memoryMiB\"",
        "\"timeoutSeconds\"",
        "\"host\"",
        "\"guest\"",
        "\"write\"",
        "\"*\"",
        "\"*.\"",
        "\"[::1]\"",
        "\":65535\"",
        "1e308",
        "-1",
        "0.000001",
        "604800",
        "65536",
        "\"/\"",
        "\"..\"",
    ],
    max_len: 1024,
};

fn seeds() -> Vec<Vec<u8>> {
    crate::seed_files("grants", &[])
}

fn run(data: &[u8]) -> Outcome {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return Outcome::Rejected;
    };
    let base = Path::new("/nonexistent-cairn-fuzz-project");
    let grants = Grants::parse(&value, base);
    if let (Ok(grants), Value::Object(map)) = (&grants, &value) {
        for package in map.keys() {
            let grant = grants.package(package);
            for dir in &grant.directories {
                assert!(dir.guest.starts_with('/'), "guest path {:?}", dir.guest);
                assert!(!dir.guest.split('/').any(|c| c == ".." || c == "."));
                assert!(dir.host.starts_with(base) || dir.host.is_absolute());
            }
            for destination in &grant.tcp {
                // A granted destination always names its port, and prints as it parses.
                assert!(destination.port.is_some(), "{destination}");
                let again = cairn_wasm::TcpPattern::parse_grant(&destination.to_string());
                assert_eq!(again.as_ref(), Ok(destination));
            }
            if let Some(t) = grant.timeout_seconds {
                assert!(t.is_finite() && t > 0.0, "timeout {t}");
            }
            // The sandbox of a provider that asks for everything the grant names.
            let manifest = Manifest {
                name: package.clone(),
                version: semver_zero(),
                schema: Value::Null,
                capabilities: Capabilities {
                    http: grant.http.clone(),
                    tcp: grant.tcp.iter().map(ToString::to_string).collect(),
                    directories: grant
                        .directories
                        .iter()
                        .map(|d| DirRequest {
                            guest: d.guest.clone(),
                            write: true,
                        })
                        .collect(),
                    env: grant.env.iter().map(|(n, _)| n.clone()).collect(),
                },
                wit: "0.3.0".into(),
            };
            if let Ok(sandbox) = Sandbox::new(&manifest, &grant) {
                assert!(sandbox.memory_mib() >= 1);
                assert_eq!(sandbox.tcp.granted, grant.tcp);
            }
        }
    }
    let program = Grants::parse_program(&value, base);
    if let Ok(grant) = &program {
        let _ = Sandbox::for_program("prog", grant);
    }
    if grants.is_ok() || program.is_ok() {
        Outcome::Accepted
    } else {
        Outcome::Rejected
    }
}

fn semver_zero() -> semver::Version {
    semver::Version::new(1, 0, 0)
}
