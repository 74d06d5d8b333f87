//! The program's callbacks: transforms and resource hooks an SDK program hands the monitor as
//! `Callback`s (the address of the `Callbacks` service it serves and a token), which the
//! engine runs through that service. A request (`TransformRequest`, `ResourceHookRequest`) is
//! serialized into `CallbackInvokeRequest.request`, its answer read from
//! `CallbackInvokeResponse.response`.
//!
//! Everything a callback answers is checked as the program's own request would be: values in
//! [`crate::convert`], every option with [`crate::wire`], naming the field
//! (`its answer was refused: options.ignore_changes[0]: …`); the engine then admits the
//! transformed registration like any other. Callbacks are reached only on loopback addresses
//! ([`wire::callback_target`]), one connection per address.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use cairn_engine::deploy::hooks::{HookArgs, HookBinding, HookKind, ResourceHook};
use cairn_engine::deploy::migrations::{Migrated, Migration, StateMigration};
use cairn_engine::deploy::program::{
    Alias, InvokeTransform, ProgramInvokeRequest, ResourceOptions, ResourceTransform, Transform,
    TransformRequest, Transformed,
};
use cairn_engine::state::CustomTimeouts;
use cairn_engine::urn::Urn;
use indexmap::IndexMap;
use prost::Message;
use tonic::transport::{Channel, Endpoint};

use crate::convert::{Marshal, to_struct};
use crate::monitor::{
    alias, custom_timeouts, each, optional, optional_provider, optional_version, properties,
};
use crate::proto::pulumirpc as rpc;
use crate::proto::pulumirpc::callbacks_client::CallbacksClient;
use crate::wire::{self, FieldError};

/// The connections to the program's `Callbacks` services, by target.
#[derive(Default)]
pub struct Callbacks {
    clients: Mutex<HashMap<String, CallbacksClient<Channel>>>,
}

impl Callbacks {
    /// A client of the `Callbacks` service at `target` (checked; connected on first use).
    fn client(&self, field: &str, target: &str) -> Result<CallbacksClient<Channel>, FieldError> {
        wire::callback_target(field, target)?;
        let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(client) = clients.get(target) {
            return Ok(client.clone());
        }
        let endpoint =
            Endpoint::from_shared(format!("http://{target}")).map_err(|e| FieldError {
                field: field.to_owned(),
                problem: e.to_string(),
            })?;
        let client = CallbacksClient::new(endpoint.connect_lazy())
            .max_decoding_message_size(wire::max_message_bytes())
            .max_encoding_message_size(usize::MAX);
        clients.insert(target.to_owned(), client.clone());
        Ok(client)
    }

    fn callback(&self, field: &str, callback: rpc::Callback) -> Result<Remote, FieldError> {
        let client = self.client(&format!("{field}.target"), &callback.target)?;
        wire::callback_token(&format!("{field}.token"), &callback.token)?;
        Ok(Remote {
            client,
            target: callback.target,
            token: callback.token,
        })
    }

    /// A resource transform the program serves (`transforms[i]`, `RegisterStackTransform`).
    pub fn transform(&self, field: &str, callback: rpc::Callback) -> Result<Transform, FieldError> {
        Ok(Transform(Arc::new(GrpcTransform(
            self.callback(field, callback)?,
        ))))
    }

    /// A resource hook the program serves (`RegisterResourceHook`), named `name`.
    pub fn resource_hook(
        &self,
        field: &str,
        name: &str,
        callback: rpc::Callback,
    ) -> Result<Arc<dyn ResourceHook>, FieldError> {
        Ok(Arc::new(GrpcHook {
            remote: self.callback(field, callback)?,
            name: name.to_owned(),
        }))
    }

    /// A state migration the program serves (`state_migrations[i]` of a registration).
    pub fn state_migration(
        &self,
        field: &str,
        callback: rpc::Callback,
    ) -> Result<Migration, FieldError> {
        Ok(Migration(Arc::new(GrpcMigration(
            self.callback(field, callback)?,
        ))))
    }

    /// An invoke transform the program serves (`RegisterStackInvokeTransform`).
    pub fn invoke_transform(
        &self,
        field: &str,
        callback: rpc::Callback,
    ) -> Result<Arc<dyn InvokeTransform>, FieldError> {
        Ok(Arc::new(GrpcInvokeTransform(
            self.callback(field, callback)?,
        )))
    }
}

/// A callback at a target.
struct Remote {
    client: CallbacksClient<Channel>,
    target: String,
    token: String,
}

impl Remote {
    fn describe(&self, kind: &str) -> String {
        format!("{kind} {} at {}", self.token, self.target)
    }

    /// Runs the callback on `request`, decoding its answer as `R`.
    async fn invoke<R: Message + Default>(&self, request: impl Message) -> Result<R, String> {
        let response = self
            .client
            .clone()
            .invoke(rpc::CallbackInvokeRequest {
                token: self.token.clone(),
                request: request.encode_to_vec(),
            })
            .await
            .map_err(|status| match wire::oversized(&status) {
                Some(sizes) => format!("its answer is too large: {sizes}"),
                None => cairn_engine::limits::cap_message(status.message()).into_owned(),
            })?
            .into_inner();
        R::decode(response.response.as_slice())
            .map_err(|e| format!("its answer is not a valid message: {e}"))
    }
}

struct GrpcTransform(Remote);

#[async_trait]
impl ResourceTransform for GrpcTransform {
    fn describe(&self) -> String {
        self.0.describe("transform")
    }

    async fn transform(&self, request: TransformRequest) -> Result<Transformed, String> {
        let sent = rpc::TransformRequest {
            r#type: request.resource_type.to_string(),
            name: request.name.clone(),
            custom: request.custom,
            parent: request
                .parent
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default(),
            properties: Some(to_struct(&request.inputs, Marshal::ALL)),
            options: Some(options_to_rpc(&request.options)),
        };
        let answer: rpc::TransformResponse = self.0.invoke(sent).await?;
        let refused = |e: FieldError| format!("its answer was refused: {e}");
        let inputs = match &answer.properties {
            Some(properties) => {
                crate::monitor::properties("properties", Some(properties)).map_err(refused)?
            }
            None => request.inputs,
        };
        let options = match answer.options {
            Some(options) => options_from_rpc(options).map_err(refused)?,
            None => request.options,
        };
        Ok(Transformed { inputs, options })
    }
}

struct GrpcHook {
    remote: Remote,
    name: String,
}

#[async_trait]
impl ResourceHook for GrpcHook {
    fn describe(&self) -> String {
        self.remote.describe(&format!("hook {:?}", self.name))
    }

    async fn call(&self, _kind: HookKind, args: &HookArgs) -> Result<(), String> {
        let values = |map: &Option<cairn_engine::value::PropertyMap>| {
            map.as_ref().map(|m| to_struct(m, Marshal::ALL))
        };
        let sent = rpc::ResourceHookRequest {
            urn: args.urn.to_string(),
            id: args.id.clone().unwrap_or_default(),
            name: args.urn.name().to_owned(),
            r#type: args.urn.resource_type().to_string(),
            new_inputs: values(&args.new_inputs),
            old_inputs: values(&args.old_inputs),
            new_outputs: values(&args.new_outputs),
            old_outputs: values(&args.old_outputs),
        };
        let answer: rpc::ResourceHookResponse = self.remote.invoke(sent).await?;
        if answer.error.is_empty() {
            Ok(())
        } else {
            Err(answer.error)
        }
    }
}

struct GrpcMigration(Remote);

#[async_trait]
impl StateMigration for GrpcMigration {
    fn describe(&self) -> String {
        self.0.describe("state migration")
    }

    async fn migrate(&self, urn: &Urn, old_state: Vec<u8>) -> Result<Option<Migrated>, String> {
        let sent = rpc::StateMigrationRequest {
            urn: urn.to_string(),
            old_state,
        };
        let answer: rpc::StateMigrationResponse = self.0.invoke(sent).await?;
        if answer.new_state.is_empty() && answer.successors.is_empty() {
            return Ok(None);
        }
        // Protobuf maps arrive in any order.
        let mut successors: IndexMap<String, String> = answer.successors.into_iter().collect();
        successors.sort_keys();
        Ok(Some(Migrated {
            new_state: answer.new_state,
            successors,
        }))
    }
}

struct GrpcInvokeTransform(Remote);

#[async_trait]
impl InvokeTransform for GrpcInvokeTransform {
    fn describe(&self) -> String {
        self.0.describe("invoke transform")
    }

    async fn transform(
        &self,
        request: ProgramInvokeRequest,
    ) -> Result<ProgramInvokeRequest, String> {
        let sent = rpc::TransformInvokeRequest {
            token: request.token.clone(),
            args: Some(to_struct(&request.args, Marshal::ALL)),
            options: Some(rpc::TransformInvokeOptions {
                provider: request.provider.clone().unwrap_or_default(),
                version: request.version.clone().unwrap_or_default(),
                plugin_download_url: String::new(),
            }),
        };
        let answer: rpc::TransformInvokeResponse = self.0.invoke(sent).await?;
        let refused = |e: FieldError| format!("its answer was refused: {e}");
        let args = match &answer.args {
            Some(args) => properties("args", Some(args)).map_err(refused)?,
            None => request.args,
        };
        let (provider, version) = match answer.options {
            Some(options) => (
                optional_provider("options.provider", options.provider).map_err(refused)?,
                optional_version("options.version", options.version).map_err(refused)?,
            ),
            None => (request.provider, request.version),
        };
        Ok(ProgramInvokeRequest {
            token: request.token,
            args,
            provider,
            version,
        })
    }
}

/// Seconds as a Go duration (`300s`); 0 (the provider's default) as nothing.
fn duration_text(seconds: f64) -> String {
    if seconds == 0.0 {
        String::new()
    } else {
        format!("{seconds}s")
    }
}

fn alias_to_rpc(alias: &Alias) -> rpc::Alias {
    use rpc::alias::spec::Parent;
    rpc::Alias {
        alias: Some(match alias {
            Alias::Urn(urn) => rpc::alias::Alias::Urn(urn.to_string()),
            Alias::Spec {
                name,
                resource_type,
                parent,
                stack,
                project,
            } => rpc::alias::Alias::Spec(rpc::alias::Spec {
                name: name.clone().unwrap_or_default(),
                r#type: resource_type
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_default(),
                stack: stack.clone().unwrap_or_default(),
                project: project.clone().unwrap_or_default(),
                parent: match parent {
                    None => None,
                    Some(None) => Some(Parent::NoParent(true)),
                    Some(Some(urn)) => Some(Parent::ParentUrn(urn.to_string())),
                },
            }),
        }),
    }
}

/// The options a transform is shown.
fn options_to_rpc(o: &ResourceOptions) -> rpc::TransformResourceOptions {
    rpc::TransformResourceOptions {
        depends_on: o.depends_on.iter().map(ToString::to_string).collect(),
        protect: o.protect.then_some(true),
        ignore_changes: o.ignore_changes.clone(),
        replace_on_changes: o.replace_on_changes.clone(),
        version: o.version.clone().unwrap_or_default(),
        aliases: o.aliases.iter().map(alias_to_rpc).collect(),
        provider: o.provider.clone().unwrap_or_default(),
        custom_timeouts: o.custom_timeouts.as_ref().map(|t| {
            rpc::register_resource_request::CustomTimeouts {
                create: duration_text(t.create),
                update: duration_text(t.update),
                delete: duration_text(t.delete),
                read: duration_text(t.read),
            }
        }),
        plugin_download_url: o.plugin_download_url.clone().unwrap_or_default(),
        retain_on_delete: o.retain_on_delete.then_some(true),
        deleted_with: o
            .deleted_with
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default(),
        delete_before_replace: o.delete_before_replace,
        additional_secret_outputs: o.additional_secret_outputs.clone(),
        providers: o
            .providers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        import: o.import_id.clone().unwrap_or_default(),
        hooks: o.hooks.as_deref().map(hooks_to_rpc),
    }
}

/// A hook binding as the protocol carries it.
pub(crate) fn hooks_to_rpc(
    b: &HookBinding,
) -> rpc::register_resource_request::ResourceHooksBinding {
    rpc::register_resource_request::ResourceHooksBinding {
        before_create: b.before_create.clone(),
        after_create: b.after_create.clone(),
        before_update: b.before_update.clone(),
        after_update: b.after_update.clone(),
        before_delete: b.before_delete.clone(),
        after_delete: b.after_delete.clone(),
        on_error: Vec::new(),
    }
}

/// A hook binding from a request (`field`: `hooks`, `options.hooks`), none if it binds no
/// hook; error hooks are not offered, so a binding of one is refused.
pub(crate) fn hooks_from_rpc(
    field: &str,
    b: Option<rpc::register_resource_request::ResourceHooksBinding>,
) -> Result<Option<Box<HookBinding>>, FieldError> {
    let Some(b) = b else {
        return Ok(None);
    };
    if !b.on_error.is_empty() {
        return Err(FieldError {
            field: format!("{field}.on_error"),
            problem: "error hooks are not supported".to_owned(),
        });
    }
    let binding = HookBinding {
        before_create: b.before_create,
        after_create: b.after_create,
        before_update: b.before_update,
        after_update: b.after_update,
        before_delete: b.before_delete,
        after_delete: b.after_delete,
    };
    for kind in HookKind::ALL {
        for (i, name) in binding.names(kind).iter().enumerate() {
            wire::hook_name(&format!("{field}.{}[{i}]", kind.name()), name)?;
        }
    }
    Ok((!binding.is_empty()).then(|| Box::new(binding)))
}

/// The options a transform answered, checked as a registration's are.
fn options_from_rpc(o: rpc::TransformResourceOptions) -> Result<ResourceOptions, FieldError> {
    let aliases = o
        .aliases
        .into_iter()
        .enumerate()
        .map(|(i, a)| alias(&format!("options.aliases[{i}]"), a))
        .collect::<Result<Vec<_>, _>>()?;
    each("options.ignore_changes", &o.ignore_changes, wire::path)?;
    each(
        "options.replace_on_changes",
        &o.replace_on_changes,
        wire::path,
    )?;
    each(
        "options.additional_secret_outputs",
        &o.additional_secret_outputs,
        wire::key,
    )?;
    let mut providers = IndexMap::new();
    for (package, reference) in o.providers {
        wire::package("options.providers", &package)?;
        wire::provider_reference(&format!("options.providers[{package:?}]"), &reference)?;
        providers.insert(package, reference);
    }
    providers.sort_keys();
    let import_id = optional(o.import);
    if let Some(id) = &import_id {
        wire::id("options.import", id)?;
    }
    let custom_timeouts: Option<CustomTimeouts> = o
        .custom_timeouts
        .map(|t| custom_timeouts(t).map_err(|e| prefixed("options.", e)))
        .transpose()?;
    Ok(ResourceOptions {
        protect: o.protect.unwrap_or(false),
        retain_on_delete: o.retain_on_delete.unwrap_or(false),
        deleted_with: wire::optional_urn("options.deleted_with", &o.deleted_with)?,
        depends_on: wire::urns("options.depends_on", &o.depends_on)?,
        provider: optional_provider("options.provider", o.provider)?,
        providers,
        aliases,
        ignore_changes: o.ignore_changes,
        replace_on_changes: o.replace_on_changes,
        delete_before_replace: o.delete_before_replace,
        additional_secret_outputs: o.additional_secret_outputs,
        custom_timeouts,
        import_id,
        version: optional_version("options.version", o.version)?,
        plugin_download_url: crate::monitor::optional_download_url(o.plugin_download_url)?,
        transforms: Vec::new(),
        hooks: hooks_from_rpc("options.hooks", o.hooks)?,
        state_migrations: Vec::new(),
    })
}

fn prefixed(prefix: &str, e: FieldError) -> FieldError {
    FieldError {
        field: format!("{prefix}{}", e.field),
        problem: e.problem,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_cross_to_a_transform_and_back_unchanged() {
        let urn = |name: &str| Urn::parse(&format!("urn:pulumi:dev::p::t:m:R::{name}")).unwrap();
        let options = ResourceOptions {
            protect: true,
            retain_on_delete: true,
            deleted_with: Some(urn("d")),
            depends_on: vec![urn("a"), urn("b")],
            provider: Some("urn:pulumi:dev::p::pulumi:providers:t::p::0ab".into()),
            providers: [(
                "t".to_owned(),
                "urn:pulumi:dev::p::pulumi:providers:t::q::1cd".to_owned(),
            )]
            .into_iter()
            .collect(),
            aliases: vec![
                Alias::Urn(urn("old")),
                Alias::Spec {
                    name: Some("older".into()),
                    resource_type: None,
                    parent: Some(None),
                    stack: None,
                    project: Some("q".into()),
                },
            ],
            ignore_changes: vec!["tags[\"a b\"]".into()],
            replace_on_changes: vec!["size".into()],
            delete_before_replace: Some(false),
            plugin_download_url: Some("oci://registry.example/acme".into()),
            additional_secret_outputs: vec!["out".into()],
            custom_timeouts: Some(CustomTimeouts {
                create: 300.0,
                update: 1.5,
                delete: 0.0,
                read: 60.0,
            }),
            import_id: Some("i-1".into()),
            version: Some("1.2.3".into()),
            transforms: Vec::new(),
            hooks: Some(Box::new(HookBinding {
                before_create: vec!["check".into()],
                after_delete: vec!["notify".into(), "log".into()],
                ..Default::default()
            })),
            state_migrations: Vec::new(),
        };
        assert_eq!(options_from_rpc(options_to_rpc(&options)).unwrap(), options);
    }

    #[test]
    fn a_transform_s_answer_is_checked_naming_the_option() {
        let cases: Vec<(rpc::TransformResourceOptions, &str)> = vec![
            (
                rpc::TransformResourceOptions {
                    ignore_changes: vec!["a[\"b".into()],
                    ..Default::default()
                },
                "options.ignore_changes[0]: invalid property path",
            ),
            (
                rpc::TransformResourceOptions {
                    depends_on: vec!["not a urn".into()],
                    ..Default::default()
                },
                "options.depends_on: ",
            ),
            (
                rpc::TransformResourceOptions {
                    custom_timeouts: Some(rpc::register_resource_request::CustomTimeouts {
                        create: "5 days".into(),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                "options.customTimeouts.create: ",
            ),
            (
                rpc::TransformResourceOptions {
                    import: "i".repeat(cairn_engine::limits::MAX_ID_BYTES + 1),
                    ..Default::default()
                },
                "options.import: the ID is",
            ),
            (
                rpc::TransformResourceOptions {
                    provider: "aws".into(),
                    ..Default::default()
                },
                "options.provider: invalid provider reference",
            ),
        ];
        for (answer, expected) in cases {
            let error = options_from_rpc(answer).unwrap_err().to_string();
            assert!(error.starts_with(expected), "{error}\nexpected: {expected}");
        }
    }
}
