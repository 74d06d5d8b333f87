//! `hostile-memory`: `create` allocates memory 1 MiB at a time until it has `mib` (default
//! 1024, i.e. 1 GiB) or allocation fails. With `mode: "abort"` (the default) a failed
//! allocation aborts (a trap, as in any naive guest); with `mode: "try"` it returns an error
//! saying how far it got.

use cairn_sdk::{
    CreateRequest, CreateResult, DeleteRequest, Error, PropertyMapExt, Provider, Result,
    UpdateRequest, UpdateResult, props,
};

/// The provider.
#[derive(Default)]
pub struct Memory;

const MIB: usize = 1 << 20;

impl Provider for Memory {
    fn create(&self, r: CreateRequest) -> Result<CreateResult> {
        let target = r.inputs.get_i64("mib").unwrap_or(1024).max(0) as usize;
        let graceful = r.inputs.get_str("mode") == Some("try");
        let mut held: Vec<u8> = Vec::new();
        for mib in 0..target {
            if graceful {
                if held.try_reserve_exact(MIB).is_err() {
                    return Err(Error::failed(format!("allocation failed after {mib} MiB")));
                }
            } else {
                held.reserve_exact(MIB);
            }
            // Touch the new memory so it is really used.
            held.resize(held.len() + MIB, 0xA5);
        }
        let allocated = std::hint::black_box(&held).len() / MIB;
        Ok(CreateResult {
            id: "probe".into(),
            outputs: props! {"allocatedMib" => allocated}.into(),
        })
    }

    fn update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        Ok(UpdateResult { outputs: r.inputs })
    }

    fn delete(&self, _: DeleteRequest) -> Result<()> {
        Ok(())
    }
}

cairn_sdk::export_provider!(Memory, manifest = "cairn.json");
