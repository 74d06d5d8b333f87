//! `hello`: the sample provider of `guest-sdk/README.md` ("A provider"), built as a component
//! and tested here so the sample always compiles and does what the README says. The README's
//! block is the text between the `README sample` markers, verbatim (checked by
//! `guest-sdk/tests/readme.rs`).

// README sample begins
use cairn_sdk::{
    CreateRequest, CreateResult, DeleteRequest, PropertyMap, PropertyMapExt, Provider, Result,
    UpdateRequest, UpdateResult, Value, props,
};

/// `hello:index:Greeting`: input `name`; outputs `name` and `message`.
#[derive(Default)]
struct Hello;

/// The outputs for these inputs; `message` is unknown while `name` is (in a preview, `name`
/// may be another resource's output, not known yet).
fn greeting(inputs: &PropertyMap) -> PropertyMap {
    let message = match inputs.get_str("name") {
        Some(name) => Value::from(format!("Hello, {name}!")),
        None => Value::Unknown,
    };
    props! { "name" => inputs.get("name").cloned(), "message" => message }
}

impl Provider for Hello {
    /// `r.inputs`: the inputs as `check` returned them (the default `check` keeps the
    /// program's inputs).
    fn create(&self, r: CreateRequest) -> Result<CreateResult> {
        let name = r.inputs.require_str("name")?;
        // A real provider acts here: it calls the service that makes the resource.
        Ok(CreateResult {
            id: format!("greeting-{name}"),
            outputs: greeting(&r.inputs).into(),
        })
    }

    /// A preview calls this instead of `create`: describe the resource, never act. Without
    /// it, the default shows the inputs as the outputs.
    fn preview_create(&self, r: CreateRequest) -> Result<CreateResult> {
        Ok(CreateResult {
            id: String::new(),
            outputs: greeting(&r.inputs).into(),
        })
    }

    /// `r.inputs`: the new inputs as `check` returned them; `r.old_inputs` / `r.old_outputs`:
    /// what the state recorded.
    fn update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        // A real provider acts here.
        Ok(UpdateResult {
            outputs: greeting(&r.inputs).into(),
        })
    }

    /// A preview calls this instead of `update` (the default shows the new inputs as the
    /// outputs).
    fn preview_update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        Ok(UpdateResult {
            outputs: greeting(&r.inputs).into(),
        })
    }

    /// `r.id`, `r.old_inputs` / `r.old_outputs`: the resource as recorded. Never called in a
    /// preview.
    fn delete(&self, _r: DeleteRequest) -> Result<()> {
        // A real provider acts here: it deletes `r.id`.
        Ok(())
    }
}

cairn_sdk::export_provider!(Hello, manifest = "cairn.json");
// or, without Default: export_provider!(Hello = Hello::new(), manifest = "cairn.json");
// README sample ends

#[cfg(test)]
mod tests {
    use super::*;

    const URN: &str = "urn:pulumi:dev::proj::hello:index:Greeting::g";

    #[test]
    fn create_and_its_preview_agree_on_what_is_known() {
        let inputs = props! {"name" => "Ada"};
        let created = Hello
            .create(CreateRequest {
                urn: URN.into(),
                inputs: inputs.clone().into(),
                timeout: 0.0,
            })
            .unwrap();
        assert_eq!(created.id, "greeting-Ada");
        assert_eq!(
            created.outputs,
            props! {"name" => "Ada", "message" => "Hello, Ada!"}
        );
        let previewed = Hello
            .preview_create(CreateRequest {
                urn: URN.into(),
                inputs: inputs.into(),
                timeout: 0.0,
            })
            .unwrap();
        assert_eq!(previewed.id, "");
        assert_eq!(previewed.outputs, created.outputs);
    }

    #[test]
    fn an_unknown_name_gives_an_unknown_message() {
        let previewed = Hello
            .preview_create(CreateRequest {
                urn: URN.into(),
                inputs: props! {"name" => Value::Unknown}.into(),
                timeout: 0.0,
            })
            .unwrap();
        assert!(previewed.outputs["message"].is_unknown());
        let updated = Hello
            .preview_update(UpdateRequest {
                urn: URN.into(),
                inputs: props! {"name" => Value::Unknown}.into(),
                ..UpdateRequest::default()
            })
            .unwrap();
        assert!(updated.outputs["message"].is_unknown());
    }

    #[test]
    fn the_manifest_is_valid() {
        cairn_sdk::manifest::validate_source(
            include_bytes!("../cairn.json"),
            env!("CARGO_PKG_VERSION"),
        )
        .unwrap_or_else(|e| panic!("{}", e.join("\n")));
    }
}
