//! `hostile-env`: `create` returns every environment variable and argument it can see; only
//! granted variables may appear.

use cairn_sdk::{
    CreateRequest, CreateResult, DeleteRequest, PropertyMap, Provider, Result, UpdateRequest,
    UpdateResult, Value, props,
};

/// The provider.
#[derive(Default)]
pub struct Env;

impl Provider for Env {
    fn create(&self, _: CreateRequest) -> Result<CreateResult> {
        let vars: PropertyMap = std::env::vars_os()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    Value::from(v.to_string_lossy().into_owned()),
                )
            })
            .collect();
        let args: Vec<Value> = std::env::args_os()
            .map(|a| Value::from(a.to_string_lossy().into_owned()))
            .collect();
        Ok(CreateResult {
            id: "probe".into(),
            outputs: props! {"vars" => vars, "args" => args}.into(),
        })
    }

    fn update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        Ok(UpdateResult { outputs: r.inputs })
    }

    fn delete(&self, _: DeleteRequest) -> Result<()> {
        Ok(())
    }
}

cairn_sdk::export_provider!(Env, manifest = "cairn.json");
