//! `hostile-fs`: `create` reads files outside its grant (`/etc/passwd`, a path escaping the
//! granted `/work`) and lists `/`, and returns what it got or the error text, so a sandbox test
//! can assert that nothing leaked.

use std::fs;

use cairn_sdk::{
    CreateRequest, CreateResult, DeleteRequest, PropertyMap, PropertyMapExt, Provider, Result,
    UpdateRequest, UpdateResult, Value, props,
};

/// The provider.
#[derive(Default)]
pub struct Fs;

/// `{ok: true, value}` or `{ok: false, value: <error text>}`.
fn outcome(result: std::io::Result<String>) -> Value {
    match result {
        Ok(v) => props! {"ok" => true, "value" => v}.into(),
        Err(e) => props! {"ok" => false, "value" => e.to_string()}.into(),
    }
}

impl Provider for Fs {
    fn create(&self, r: CreateRequest) -> Result<CreateResult> {
        let paths: Vec<String> = match r.inputs.get_array("paths") {
            Some(items) => items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
            None => ["/etc/passwd", "/work/../outside.txt", "/outside.txt"]
                .map(str::to_owned)
                .to_vec(),
        };
        let mut results = PropertyMap::new();
        for path in paths {
            let got = outcome(fs::read_to_string(&path));
            results.insert(path, got);
        }
        let listing = fs::read_dir("/").map(|entries| {
            let names: Vec<String> = entries
                .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
                .collect();
            names.join(",")
        });
        results.insert("ls /".into(), outcome(listing));
        Ok(CreateResult {
            id: "probe".into(),
            outputs: props! {"results" => results}.into(),
        })
    }

    fn update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        Ok(UpdateResult { outputs: r.inputs })
    }

    fn delete(&self, _: DeleteRequest) -> Result<()> {
        Ok(())
    }
}

cairn_sdk::export_provider!(Fs, manifest = "cairn.json");
