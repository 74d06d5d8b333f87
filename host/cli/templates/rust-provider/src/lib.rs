//! The `${PACKAGE}` provider: Cairn loads it as a sandboxed WebAssembly component and calls it
//! to check, create, update and delete the package's resources.
//!
//! It manages one resource type, `${PACKAGE}:index:Greeting` (its schema is in `cairn.json`):
//! inputs `name` and `salutation`, output `message`. A greeting lives only in the stack's
//! state; a real provider calls a service in `create`, `update` and `delete` (asking for the
//! hosts it needs under `capabilities` in `cairn.json`).

use cairn_sdk::{
    CheckRequest, CheckResult, Checker, CreateRequest, CreateResult, DeleteRequest, PropertyMap,
    PropertyMapExt, Provider, Result, UpdateRequest, UpdateResult, Value, props,
};

#[derive(Default)]
struct Greeter;

/// The resource's outputs for these (checked) inputs. In a preview an input may be unknown
/// (another resource's output), and so is the message then.
fn outputs(inputs: &PropertyMap) -> PropertyMap {
    let message = match (inputs.get_str("salutation"), inputs.get_str("name")) {
        (Some(salutation), Some(name)) => Value::from(format!("{salutation}, {name}!")),
        _ => Value::Unknown,
    };
    props! {
        "name" => inputs.get("name").cloned(),
        "salutation" => inputs.get("salutation").cloned(),
        "message" => message,
    }
}

impl Provider for Greeter {
    /// Validates the inputs and fills in defaults; failures name the property.
    fn check(&self, r: CheckRequest) -> Result<CheckResult> {
        let mut checker = Checker::new(r.inputs);
        checker.required_string("name");
        checker.default("salutation", "Hello");
        if checker.string("salutation").is_some_and(|s| s.trim().is_empty()) {
            checker.fail("salutation", "must not be empty");
        }
        Ok(checker.finish())
    }

    fn create(&self, r: CreateRequest) -> Result<CreateResult> {
        let name = r.inputs.require_str("name")?;
        Ok(CreateResult {
            id: format!("greeting-{name}"),
            outputs: outputs(&r.inputs).into(),
        })
    }

    /// A preview calls this instead of `create`: it describes the result and never acts.
    fn preview_create(&self, r: CreateRequest) -> Result<CreateResult> {
        Ok(CreateResult {
            id: String::new(),
            outputs: outputs(&r.inputs).into(),
        })
    }

    fn update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        Ok(UpdateResult {
            outputs: outputs(&r.inputs).into(),
        })
    }

    fn preview_update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        Ok(UpdateResult {
            outputs: outputs(&r.inputs).into(),
        })
    }

    fn delete(&self, _: DeleteRequest) -> Result<()> {
        Ok(())
    }
}

cairn_sdk::export_provider!(Greeter, manifest = "cairn.json");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_is_valid() {
        let manifest =
            cairn_sdk::manifest::validate_source(include_bytes!("../cairn.json"), "0.1.0");
        assert!(manifest.is_ok(), "{manifest:?}");
    }

    #[test]
    fn the_message_greets_the_name() {
        let inputs = props! { "name" => "Ada", "salutation" => "Hi" };
        assert_eq!(outputs(&inputs).get_str("message"), Some("Hi, Ada!"));
        let unknown = props! { "name" => Value::Unknown, "salutation" => "Hi" };
        assert!(outputs(&unknown).is_unknown("message"));
    }
}
