//! `hostile-recursion`: `create` recurses without bound (each frame keeps 256 bytes alive), to
//! test that stack exhaustion is a clean trap.

use cairn_sdk::{
    CreateRequest, CreateResult, DeleteRequest, PropertyMapExt, Provider, Result, UpdateRequest,
    UpdateResult, props,
};

/// The provider.
#[derive(Default)]
pub struct Recursion;

/// Recurses until `limit`; `black_box` keeps every frame's buffer (and the frame) real.
fn deep(n: u64, limit: u64) -> u64 {
    if n >= limit {
        return n;
    }
    let pad = std::hint::black_box([n; 32]);
    let depth = deep(n + 1, limit);
    // Using the buffer after the call keeps it (and so the frame) alive across it.
    std::hint::black_box(&pad);
    depth
}

impl Provider for Recursion {
    fn create(&self, r: CreateRequest) -> Result<CreateResult> {
        let limit = r
            .inputs
            .get_i64("limit")
            .map_or(u64::MAX, |l| l.max(0) as u64);
        let depth = deep(0, std::hint::black_box(limit));
        Ok(CreateResult {
            id: "probe".into(),
            outputs: props! {"depth" => depth}.into(),
        })
    }

    fn update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        Ok(UpdateResult { outputs: r.inputs })
    }

    fn delete(&self, _: DeleteRequest) -> Result<()> {
        Ok(())
    }
}

cairn_sdk::export_provider!(Recursion, manifest = "cairn.json");
