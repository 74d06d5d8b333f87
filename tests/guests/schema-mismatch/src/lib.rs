//! `schema-mismatch`: `get-schema` serves a schema other than its manifest's (the property
//! `size` is a string, not an integer, and a function the manifest lacks), so that
//! `cairn package get-schema` can be seen to ask the guest and check the two agree.

use cairn_sdk::{
    CreateRequest, CreateResult, DeleteRequest, Provider, Result, UpdateRequest, UpdateResult,
};

/// The provider.
#[derive(Default)]
pub struct Mismatch;

impl Provider for Mismatch {
    fn get_schema(&self) -> Result<Option<String>> {
        let schema = r#"{
            "name": "schema-mismatch",
            "version": "0.1.0",
            "resources": {
                "schema-mismatch:index:Thing": {
                    "properties": {"size": {"type": "string"}}
                }
            },
            "functions": {
                "schema-mismatch:index:getThing": {}
            }
        }"#;
        Ok(Some(schema.to_owned()))
    }

    fn create(&self, r: CreateRequest) -> Result<CreateResult> {
        Ok(CreateResult {
            id: "thing".into(),
            outputs: r.inputs,
        })
    }

    fn update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        Ok(UpdateResult { outputs: r.inputs })
    }

    fn delete(&self, _: DeleteRequest) -> Result<()> {
        Ok(())
    }
}

cairn_sdk::export_provider!(Mismatch, manifest = "cairn.json");
