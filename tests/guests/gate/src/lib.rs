//! `gate`: a test provider whose operations wait at gates, so an end-to-end test can hold an
//! operation in flight (to interrupt cairn there) without sleeping. Gates are files in the
//! granted directory `/gates`; for a `gate:index:Gate` named N:
//!
//! * `create` appends a line to `N.creates`, writes `N.entered`, then waits until `N.open`
//!   exists, and returns ID N with its inputs as outputs (a preview never calls it: the SDK's
//!   default `preview_create` acts on nothing);
//! * `check` with input `checkGate` true writes `N.checking`, then waits until `N.check-open`
//!   exists;
//! * `update` returns the new inputs; `delete` appends a line to `N.deletes`, then, with input
//!   `deleteGate` true, writes `N.deleting` and waits until `N.delete-open` exists.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use cairn_sdk::{
    CheckRequest, CheckResult, CreateRequest, CreateResult, DeleteRequest, Error, PropertyMapExt,
    Provider, Result, UpdateRequest, UpdateResult,
};

const GATES: &str = "/gates";

/// The provider.
#[derive(Default)]
pub struct Gate;

fn gate_file(name: &str, suffix: &str) -> PathBuf {
    PathBuf::from(GATES).join(format!("{name}.{suffix}"))
}

fn failed(what: &str, e: std::io::Error) -> Error {
    Error::failed(format!("{what}: {e}"))
}

/// Appends one line to `N.<suffix>`: a count of calls the test can read back.
fn count(name: &str, suffix: &str) -> Result<()> {
    let path = gate_file(name, suffix);
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(b"1\n"))
        .map_err(|e| failed(&format!("appending to {}", path.display()), e))
}

/// Announces that the operation reached its gate (`N.<entered>`), then waits for `N.<open>`.
fn wait_at(name: &str, entered: &str, open: &str) -> Result<()> {
    let path = gate_file(name, entered);
    fs::write(&path, b"").map_err(|e| failed(&format!("writing {}", path.display()), e))?;
    let open = gate_file(name, open);
    while !open.exists() {
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(())
}

impl Provider for Gate {
    fn check(&self, r: CheckRequest) -> Result<CheckResult> {
        if r.inputs.get_bool("checkGate") == Some(true) {
            wait_at(r.name(), "checking", "check-open")?;
        }
        Ok(CheckResult::ok(r.inputs))
    }

    fn create(&self, r: CreateRequest) -> Result<CreateResult> {
        let name = r.name().to_owned();
        count(&name, "creates")?;
        wait_at(&name, "entered", "open")?;
        Ok(CreateResult {
            id: name,
            outputs: r.inputs,
        })
    }

    fn update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        Ok(UpdateResult { outputs: r.inputs })
    }

    fn delete(&self, r: DeleteRequest) -> Result<()> {
        count(r.name(), "deletes")?;
        if r.old_inputs.get_bool("deleteGate") == Some(true) {
            wait_at(r.name(), "deleting", "delete-open")?;
        }
        Ok(())
    }
}

cairn_sdk::export_provider!(Gate, manifest = "cairn.json");
