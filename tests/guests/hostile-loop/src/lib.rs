//! `hostile-loop`: `create` spins forever, to test the host's per-call deadline (epoch
//! interruption). Everything else is the SDK default.

use cairn_sdk::{
    CreateRequest, CreateResult, DeleteRequest, Provider, Result, UpdateRequest, UpdateResult,
};

/// The provider.
#[derive(Default)]
pub struct Loop;

impl Provider for Loop {
    fn create(&self, _: CreateRequest) -> Result<CreateResult> {
        let mut n = 0u64;
        loop {
            // black_box keeps the loop (and its back edge, where epochs are checked) alive.
            n = std::hint::black_box(n.wrapping_add(1));
        }
    }

    fn update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        Ok(UpdateResult { outputs: r.inputs })
    }

    fn delete(&self, _: DeleteRequest) -> Result<()> {
        Ok(())
    }
}

cairn_sdk::export_provider!(Loop, manifest = "cairn.json");
