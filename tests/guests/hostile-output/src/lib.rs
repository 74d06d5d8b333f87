//! `hostile-output`: `create` returns a 64 MiB string output (`mib` sets the size), to test the
//! host's limits on what a call may return. With `returnAfterMs`, it builds the result, then
//! waits until that many milliseconds have passed since the call began before returning it (to
//! return a large result just before its deadline).

use cairn_sdk::{
    CreateRequest, CreateResult, DeleteRequest, PropertyMapExt, Provider, Result, UpdateRequest,
    UpdateResult, props,
};

/// The provider.
#[derive(Default)]
pub struct Output;

impl Provider for Output {
    fn create(&self, r: CreateRequest) -> Result<CreateResult> {
        let began = std::time::Instant::now();
        let mib = r.inputs.get_i64("mib").unwrap_or(64).max(0) as usize;
        let result = CreateResult {
            id: "probe".into(),
            outputs: props! {"result" => "x".repeat(mib << 20)}.into(),
        };
        let wait = r.inputs.get_i64("returnAfterMs").unwrap_or(0).max(0) as u64;
        while began.elapsed() < std::time::Duration::from_millis(wait) {
            std::hint::spin_loop();
        }
        Ok(result)
    }

    fn update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        Ok(UpdateResult { outputs: r.inputs })
    }

    fn delete(&self, _: DeleteRequest) -> Result<()> {
        Ok(())
    }
}

cairn_sdk::export_provider!(Output, manifest = "cairn.json");
