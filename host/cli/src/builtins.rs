//! The built-in provider of package `pulumi`: `pulumi:pulumi:StackReference` reads another
//! stack's outputs from the same backend. It is read-only: creating, updating or deleting its
//! resources is an error naming the resource.
//!
//! A reference names a stack as `<stack>` (in the current project), `<project>/<stack>`, or
//! `<organization>/<project>/<stack>` (the organization is ignored by the local backend). The
//! resource's outputs are `name`, `outputs` (the stack's outputs; secret ones stay secret) and
//! `secretOutputNames`.

use async_trait::async_trait;
use cairn_backend::{Backend, names};
use cairn_engine::deploy::provider::{
    CheckRequest, CheckResult, CreateRequest, CreateResult, DeleteRequest, DiffRequest, DiffResult,
    Provider, ProviderError, ReadRequest, ReadResult, UpdateRequest, UpdateResult,
};
use cairn_engine::state::decode_deployment;
use cairn_engine::value::{PropertyMap, PropertyValue};

use crate::stack::LazyCrypter;
use crate::terminal::quoted;

/// The resource type of a stack reference.
pub const STACK_REFERENCE: &str = "pulumi:pulumi:StackReference";

/// The `pulumi` package's provider.
pub struct Builtins {
    backend: Backend,
    project: String,
}

impl Builtins {
    pub fn new(backend: Backend, project: &str) -> Builtins {
        Builtins {
            backend,
            project: project.to_owned(),
        }
    }
}

/// `(project, stack)` of a reference name. The name comes from the program, and both parts
/// become backend paths, so they must be valid project and stack names.
fn parse_reference<'a>(name: &'a str, current: &'a str) -> Result<(&'a str, &'a str), String> {
    let parts: Vec<&str> = name.split('/').collect();
    let (project, stack) = match parts.as_slice() {
        [stack] => (current, *stack),
        [project, stack] | [_, project, stack] => (*project, *stack),
        _ => ("", ""),
    };
    if !names::is_project_name(project) || !names::is_stack_name(stack) {
        return Err(format!(
            "stack reference {} is not a stack name: use <stack>, <project>/<stack> or \
             <organization>/<project>/<stack>, where {} and {}",
            quoted(name),
            names::STACK_NAME_RULE,
            names::PROJECT_NAME_RULE
        ));
    }
    Ok((project, stack))
}

/// The outputs of `stack` in `project`, read from `backend`.
fn read_stack(backend: &Backend, current_project: &str, name: &str) -> Result<PropertyMap, String> {
    let (project, stack) = parse_reference(name, current_project)?;
    let missing = || {
        format!(
            "stack {project}/{stack} does not exist on this backend ({})",
            backend.url()
        )
    };
    // The error and its causes, on one line.
    let unreadable = |e: cairn_backend::BackendError| {
        format!(
            "reading stack {project}/{stack}: {:#}",
            anyhow::Error::from(e)
        )
    };
    if !backend.stack_exists(project, stack).map_err(unreadable)? {
        return Err(missing());
    }
    let deployment = backend
        .latest(project, stack)
        .map_err(unreadable)?
        .ok_or_else(missing)?;
    let crypter = LazyCrypter::from_state(
        &format!("{project}/{stack}"),
        deployment.secrets_providers.as_ref(),
    );
    let snapshot = decode_deployment(deployment, Some(&crypter))
        .map_err(|e| format!("reading the outputs of stack {project}/{stack}: {e}"))?;
    Ok(snapshot
        .resources
        .into_iter()
        .find(|r| r.parent.is_none() && r.resource_type.as_str() == "pulumi:pulumi:Stack")
        .map(|r| r.outputs)
        .unwrap_or_default())
}

fn read_only(urn: &cairn_engine::urn::Urn, what: &str) -> ProviderError {
    ProviderError::failed(format!(
        "{urn}: {} resources cannot be {what}; they are read (e.g. StackReference)",
        urn.resource_type()
    ))
}

#[async_trait]
impl Provider for Builtins {
    fn package(&self) -> &str {
        "pulumi"
    }

    async fn configure(&self, _inputs: PropertyMap, _preview: bool) -> Result<(), ProviderError> {
        Ok(())
    }

    async fn check(&self, request: CheckRequest<'_>) -> Result<CheckResult, ProviderError> {
        Ok(CheckResult {
            inputs: request.news.clone(),
            failures: vec![],
        })
    }

    async fn diff(&self, _request: DiffRequest<'_>) -> Result<DiffResult, ProviderError> {
        Ok(DiffResult::default())
    }

    async fn create(&self, request: CreateRequest) -> Result<CreateResult, ProviderError> {
        Err(read_only(&request.urn, "created"))
    }

    async fn read(&self, request: ReadRequest) -> Result<ReadResult, ProviderError> {
        if request.urn.resource_type() != STACK_REFERENCE {
            return Err(ProviderError::failed(format!(
                "{}: the built-in pulumi provider has no resource type {}",
                request.urn,
                request.urn.resource_type()
            )));
        }
        let name = request.id.clone();
        let backend = self.backend.clone();
        let project = self.project.clone();
        let urn = request.urn.clone();
        // Reading a checkpoint and deriving a key block: off the async workers.
        let outputs = tokio::task::spawn_blocking(move || read_stack(&backend, &project, &name))
            .await
            .map_err(|e| ProviderError::failed(format!("{urn}: {e}")))?
            .map_err(ProviderError::failed)?;
        let secret_names: Vec<PropertyValue> = outputs
            .iter()
            .filter(|(_, v)| matches!(v, PropertyValue::Secret(_)))
            .map(|(k, _)| PropertyValue::String(k.clone()))
            .collect();
        let mut inputs = PropertyMap::new();
        inputs.insert("name".into(), PropertyValue::String(request.id.clone()));
        let mut state = inputs.clone();
        state.insert("outputs".into(), PropertyValue::Object(Box::new(outputs)));
        state.insert(
            "secretOutputNames".into(),
            PropertyValue::Array(secret_names),
        );
        Ok(ReadResult {
            id: request.id,
            inputs,
            outputs: state,
        })
    }

    async fn update(&self, request: UpdateRequest) -> Result<UpdateResult, ProviderError> {
        Err(read_only(&request.urn, "updated"))
    }

    async fn delete(&self, _request: DeleteRequest) -> Result<(), ProviderError> {
        // Nothing exists outside the state to delete.
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::parse_reference;

    #[test]
    fn reference_names() {
        assert_eq!(parse_reference("dev", "web"), Ok(("web", "dev")));
        assert_eq!(parse_reference("net/prod", "web"), Ok(("net", "prod")));
        assert_eq!(parse_reference("org/net/prod", "web"), Ok(("net", "prod")));
        for bad in [
            "",
            "a/",
            "/b",
            "a/b/c/d",
            "..",
            "../dev",
            "../../x",
            "org/../dev",
            "a\0b",
            "d\x1bv",
        ] {
            assert!(parse_reference(bad, "web").is_err(), "{bad:?}");
        }
    }
}
