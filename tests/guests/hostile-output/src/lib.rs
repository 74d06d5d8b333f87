//! `hostile-output`: `create` returns a 64 MiB string output (`mib` sets the size), to test the
//! host's limits on what a call may return.

use cairn_sdk::{
    CreateRequest, CreateResult, DeleteRequest, PropertyMapExt, Provider, Result, UpdateRequest,
    UpdateResult, props,
};

/// The provider.
#[derive(Default)]
pub struct Output;

impl Provider for Output {
    fn create(&self, r: CreateRequest) -> Result<CreateResult> {
        let mib = r.inputs.get_i64("mib").unwrap_or(64).max(0) as usize;
        Ok(CreateResult {
            id: "probe".into(),
            outputs: props! {"result" => "x".repeat(mib << 20)}.into(),
        })
    }

    fn update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        Ok(UpdateResult { outputs: r.inputs })
    }

    fn delete(&self, _: DeleteRequest) -> Result<()> {
        Ok(())
    }
}

cairn_sdk::export_provider!(Output, manifest = "cairn.json");
