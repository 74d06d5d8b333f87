//! `side-effects`: a provider with real side effects that implements only `create`, `update`
//! and `delete`, so previews go through the SDK's defaults. Each writes (or removes)
//! `/out/<resource name>` in the granted directory; the file is the evidence of an act. The
//! input `trap` (`panic`, `spin`, `memory`) makes `create` and `update` trap *after* acting, as
//! an instance that dies mid-operation would, and `error` makes them return an error after
//! acting; `trapOnDelete` does the same for `delete` (read from the recorded inputs).

use std::fs;
use std::io::ErrorKind;

use cairn_sdk::{
    CreateRequest, CreateResult, DeleteRequest, Error, PropertyMap, PropertyMapExt, Provider,
    Result, UpdateRequest, UpdateResult,
};

const OUT: &str = "/out";

/// The provider.
#[derive(Default)]
pub struct SideEffects;

/// Writes `/out/<name>` with the inputs' `content`, then traps if told to.
fn write(name: &str, inputs: &PropertyMap) -> Result<()> {
    let content = inputs.get_str("content").unwrap_or("written");
    fs::write(format!("{OUT}/{name}"), content)
        .map_err(|e| Error::failed(format!("writing {OUT}/{name}: {e}")))?;
    trap(inputs.get_str("trap"))
}

/// Dies as told (a panic, a loop past the deadline, memory past the limit) or fails.
fn trap(how: Option<&str>) -> Result<()> {
    match how {
        Some("error") => return Err(Error::failed("side-effects: told to fail after acting")),
        Some("panic") => panic!("side-effects: told to panic after acting"),
        Some("spin") => loop {
            std::hint::spin_loop();
        },
        Some("memory") => {
            let mut hoard: Vec<Vec<u8>> = Vec::new();
            loop {
                hoard.push(std::hint::black_box(vec![1; 1 << 20]));
            }
        }
        _ => {}
    }
    Ok(())
}

fn name_of(urn: &str) -> &str {
    cairn_sdk::urn::name(urn).unwrap_or("unnamed")
}

impl Provider for SideEffects {
    fn create(&self, r: CreateRequest) -> Result<CreateResult> {
        let name = name_of(&r.urn).to_owned();
        write(&name, &r.inputs)?;
        Ok(CreateResult {
            id: name,
            outputs: r.inputs,
        })
    }

    fn update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        write(name_of(&r.urn), &r.inputs)?;
        Ok(UpdateResult { outputs: r.inputs })
    }

    fn delete(&self, r: DeleteRequest) -> Result<()> {
        match fs::remove_file(format!("{OUT}/{}", r.id)) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(Error::failed(format!("removing {OUT}/{}: {e}", r.id))),
        }
        trap(r.old_inputs.get_str("trapOnDelete"))
    }
}

cairn_sdk::export_provider!(SideEffects, manifest = "cairn.json");
