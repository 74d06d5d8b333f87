//! The scripted program: a scenario's declarations, registered concurrently, each waiting only
//! for what it references.
//!
//! In inputs (and component / stack outputs) a string `${x.path}` is replaced by the value at
//! `path` in the registered outputs of declaration `x` (`${x.id}` and `${x.urn}` are its ID and
//! URN), recording a property dependency on `x`. Inside a longer string, references are
//! interpolated as text.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use cairn_engine::deploy::monitor::{Monitor, Unregistered};
use cairn_engine::deploy::program::{
    Alias, Program, ProgramError, ReadResourceRequest, RegisterResourceRequest, ResourceOptions,
};
use cairn_engine::state::CustomTimeouts;
use cairn_engine::urn::{TypeToken, Urn};
use cairn_engine::value::{PropertyDependencies, PropertyMap, PropertyValue};
use indexmap::IndexMap;
use serde_yaml_ng::{Mapping, Value as Yaml};
use tokio::sync::watch;

use crate::provider::lock;
use crate::scenario::Decl;
use crate::values::{from_yaml, lookup};

pub const PROJECT: &str = "proj";
pub const STACK: &str = "dev";
pub const DEFAULT_TYPE: &str = "test:index:Resource";
pub const COMPONENT_TYPE: &str = "test:index:Component";

/// The prefix of every URN in the scenarios' stack.
pub fn urn_prefix() -> String {
    format!("urn:pulumi:{STACK}::{PROJECT}::")
}

/// A URN from its short form (`type::name`, without the `urn:pulumi:dev::proj::` prefix).
pub fn full_urn(text: &str) -> Result<Urn, String> {
    let full = if text.starts_with("urn:") {
        text.to_owned()
    } else {
        format!("{}{text}", urn_prefix())
    };
    Urn::parse(&full).map_err(|e| e.to_string())
}

/// The short form of a URN.
pub fn short_urn(urn: &Urn) -> String {
    urn.as_str()
        .strip_prefix(&urn_prefix())
        .unwrap_or(urn.as_str())
        .to_owned()
}

/// What a declaration's registration produced.
#[derive(Debug, Clone)]
pub struct Registered {
    pub urn: Urn,
    pub id: Option<String>,
    pub outputs: PropertyMap,
}

/// A registration's result, as recorded for expectations.
#[derive(Debug, Clone, PartialEq)]
pub enum RegOutcome {
    Ok,
    /// Not attempted because something it waited for failed.
    Skipped(String),
    Failed(String),
}

type Cell = watch::Sender<Option<Result<Registered, Failure>>>;

/// Why a declaration has no value: the message, and whether it is (a consequence of) a
/// registration the deployment went on without (`--continue-on-error`), which, as with SDKs
/// that report results (Python's `ResourceRegistrationFailed`), does not fail the program.
#[derive(Debug, Clone)]
struct Failure {
    message: String,
    continued: bool,
}

struct Cells {
    /// Resolved when the declaration is registered (its URN is known).
    registered: Cell,
    /// Resolved when its outputs are final (components: after `outputs` are registered).
    outputs: Cell,
}

pub struct ScriptedProgram {
    decls: Vec<Decl>,
    pub outcomes: Arc<Mutex<IndexMap<String, RegOutcome>>>,
}

impl ScriptedProgram {
    pub fn new(decls: Vec<Decl>) -> ScriptedProgram {
        ScriptedProgram {
            decls,
            outcomes: Arc::new(Mutex::new(IndexMap::new())),
        }
    }
}

/// The type token of a declaration.
pub fn decl_type(decl: &Decl) -> String {
    match (&decl.resource_type, decl.component) {
        (Some(t), _) => t.clone(),
        (None, true) => COMPONENT_TYPE.to_owned(),
        (None, false) => DEFAULT_TYPE.to_owned(),
    }
}

/// The URN a declaration gets (following its parent chain through the other declarations).
pub fn decl_urn(decls: &[Decl], decl: &Decl) -> Result<Urn, String> {
    let name = decl.name.as_deref().ok_or("the declaration has no name")?;
    let resource_type = decl_type(decl);
    let mut qualified = resource_type.clone();
    let mut parent = decl.parent.clone();
    let mut depth = 0;
    while let Some(p) = parent {
        depth += 1;
        if depth > 32 {
            return Err(format!("{name}: parent cycle"));
        }
        let parent_decl = decls
            .iter()
            .find(|d| d.key() == Some(p.as_str()))
            .ok_or_else(|| format!("{name}: parent {p} is not declared"))?;
        qualified = format!("{}${qualified}", decl_type(parent_decl));
        parent = parent_decl.parent.clone();
    }
    full_urn(&format!("{qualified}::{name}"))
}

/// The `${...}` references in a string: (handle, path).
fn references(text: &str) -> Vec<(String, Vec<String>, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(start) = text[from..].find("${") {
        let start = from + start;
        let Some(len) = text[start..].find('}') else {
            break;
        };
        let end = start + len + 1;
        let inner = &text[start + 2..end - 1];
        let mut parts = inner.split('.');
        let handle = parts.next().unwrap_or_default().to_owned();
        out.push((handle, parts.map(str::to_owned).collect(), start..end));
        from = end;
    }
    out
}

/// Every handle a YAML value references.
fn referenced_handles(value: &Yaml, out: &mut Vec<String>) {
    match value {
        Yaml::String(s) => {
            for (handle, _, _) in references(s) {
                if !out.contains(&handle) {
                    out.push(handle);
                }
            }
        }
        Yaml::Sequence(items) => items.iter().for_each(|v| referenced_handles(v, out)),
        Yaml::Mapping(map) => map.values().for_each(|v| referenced_handles(v, out)),
        Yaml::Tagged(t) => referenced_handles(&t.value, out),
        _ => {}
    }
}

struct Ctx {
    decls: Vec<Decl>,
    cells: IndexMap<String, Cells>,
    preview: bool,
}

impl Ctx {
    fn cell(&self, handle: &str, outputs: bool) -> Result<&Cell, String> {
        let cells = self
            .cells
            .get(handle)
            .ok_or_else(|| format!("{handle:?} is not declared"))?;
        Ok(if outputs {
            &cells.outputs
        } else {
            &cells.registered
        })
    }

    async fn wait(&self, handle: &str, outputs: bool) -> Result<Registered, Wait> {
        let mut rx = self
            .cell(handle, outputs)
            .map_err(Wait::Broken)?
            .subscribe();
        let value = rx
            .wait_for(Option::is_some)
            .await
            .map_err(|_| Wait::Broken(format!("{handle} never resolved")))?;
        match value.as_ref() {
            Some(Ok(r)) => Ok(r.clone()),
            Some(Err(e)) => Err(Wait::Skipped(
                format!("{handle} failed: {}", e.message),
                e.continued,
            )),
            None => unreachable!(),
        }
    }

    fn value_of(&self, registered: &Registered, path: &[String]) -> PropertyValue {
        let unknown = || {
            if self.preview {
                PropertyValue::Computed
            } else {
                PropertyValue::Null
            }
        };
        match path.first().map(String::as_str) {
            Some("id") if path.len() == 1 => match &registered.id {
                Some(id) if !id.is_empty() && id != cairn_engine::state::UNKNOWN_ID => {
                    PropertyValue::String(id.clone())
                }
                _ => unknown(),
            },
            Some("urn") if path.len() == 1 => PropertyValue::String(registered.urn.to_string()),
            _ => {
                let segments: Vec<&str> = path.iter().map(String::as_str).collect();
                lookup(
                    &PropertyValue::Object(Box::new(registered.outputs.clone())),
                    &segments,
                )
                .unwrap_or_else(unknown)
            }
        }
    }

    /// Converts a YAML value, substituting references; records the handles used.
    fn resolve(
        &self,
        value: &Yaml,
        resolved: &IndexMap<String, Registered>,
        used: &mut Vec<String>,
    ) -> Result<PropertyValue, String> {
        Ok(match value {
            Yaml::String(s) if s.contains("${") => {
                let refs = references(s);
                for (handle, _, _) in &refs {
                    if !used.contains(handle) {
                        used.push(handle.clone());
                    }
                }
                if refs.len() == 1 && refs[0].2 == (0..s.len()) {
                    let (handle, path, _) = &refs[0];
                    let registered = resolved
                        .get(handle)
                        .ok_or_else(|| format!("{handle} is not resolved"))?;
                    return Ok(self.value_of(registered, path));
                }
                let mut text = String::new();
                let mut last = 0;
                let mut secret = false;
                for (handle, path, range) in &refs {
                    text.push_str(&s[last..range.start]);
                    let registered = resolved
                        .get(handle)
                        .ok_or_else(|| format!("{handle} is not resolved"))?;
                    let mut value = self.value_of(registered, path);
                    if let PropertyValue::Secret(inner) = value {
                        secret = true;
                        value = *inner;
                    }
                    match value {
                        PropertyValue::String(v) => text.push_str(&v),
                        PropertyValue::Number(n) => text.push_str(&n.to_string()),
                        PropertyValue::Bool(b) => text.push_str(&b.to_string()),
                        PropertyValue::Computed => return Ok(PropertyValue::Computed),
                        other => return Err(format!("cannot interpolate {other:?} into {s:?}")),
                    }
                    last = range.end;
                }
                text.push_str(&s[last..]);
                let value = PropertyValue::String(text);
                if secret {
                    PropertyValue::secret(value)
                } else {
                    value
                }
            }
            Yaml::Sequence(items) => PropertyValue::Array(
                items
                    .iter()
                    .map(|v| self.resolve(v, resolved, used))
                    .collect::<Result<_, _>>()?,
            ),
            Yaml::Mapping(map)
                if !(map.len() == 1 && map.contains_key(crate::values::SECRET_KEY)) =>
            {
                let mut out = PropertyMap::new();
                for (k, v) in map {
                    let key = k.as_str().ok_or("object keys must be strings")?;
                    out.insert(key.to_owned(), self.resolve(v, resolved, used)?);
                }
                PropertyValue::Object(Box::new(out))
            }
            Yaml::Mapping(map) => {
                let inner = map.get(crate::values::SECRET_KEY).unwrap_or(&Yaml::Null);
                PropertyValue::secret(self.resolve(inner, resolved, used)?)
            }
            other => from_yaml(other)?,
        })
    }

    /// Waits for the outputs of every handle `map` references and resolves it; returns the
    /// property map and each top-level key's dependencies.
    async fn resolve_map(
        &self,
        map: &Mapping,
    ) -> Result<(PropertyMap, PropertyDependencies), Wait> {
        let mut handles = Vec::new();
        referenced_handles(&Yaml::Mapping(map.clone()), &mut handles);
        let mut resolved = IndexMap::new();
        for handle in handles {
            let registered = self.wait(&handle, true).await?;
            resolved.insert(handle, registered);
        }
        let mut out = PropertyMap::new();
        let mut deps = PropertyDependencies::new();
        for (k, v) in map {
            let key = k
                .as_str()
                .ok_or_else(|| Wait::Broken("object keys must be strings".into()))?;
            let mut used = Vec::new();
            let value = self
                .resolve(v, &resolved, &mut used)
                .map_err(Wait::Broken)?;
            out.insert(key.to_owned(), value);
            if !used.is_empty() {
                deps.insert(
                    key.to_owned(),
                    used.iter().map(|h| resolved[h].urn.clone()).collect(),
                );
            }
        }
        Ok((out, deps))
    }

    async fn urn_of(&self, handle: &str) -> Result<Urn, Wait> {
        Ok(self.wait(handle, false).await?.urn)
    }
}

/// Why a declaration could not proceed.
enum Wait {
    /// Something it waits for failed (under --continue-on-error: `true`, nothing fatal): it
    /// is not registered.
    Skipped(String, bool),
    /// Its registration failed or was skipped, and the deployment went on without it (the
    /// engine reported the result): its URN is known, its outputs are not.
    Continued { message: String, skipped: bool },
    /// Its registration (or the program statement) failed.
    Failed(String),
    /// The scenario is malformed.
    Broken(String),
}

fn token(text: &str) -> Result<TypeToken, String> {
    TypeToken::parse(text).map_err(|e| format!("type {text:?}: {e}"))
}

async fn run_decl(
    ctx: Arc<Ctx>,
    monitor: Monitor,
    index: usize,
) -> Result<Option<Registered>, Wait> {
    let decl = &ctx.decls[index];
    for handle in &decl.after {
        ctx.wait(handle, true).await?;
    }
    if decl.delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(decl.delay_ms)).await;
    }
    if let Some(message) = &decl.fail {
        return Err(Wait::Failed(message.clone()));
    }
    if let Some(outputs) = &decl.stack_outputs {
        let (values, _) = ctx.resolve_map(outputs).await?;
        monitor
            .register_resource_outputs(&monitor.root_urn().clone(), values)
            .map_err(|e| Wait::Failed(e.to_string()))?;
        return Ok(None);
    }
    let name = decl
        .name
        .clone()
        .ok_or_else(|| Wait::Broken("a declaration needs a name, stackOutputs or fail".into()))?;
    let resource_type = token(&decl_type(decl)).map_err(Wait::Broken)?;
    let parent = match &decl.parent {
        Some(p) => Some(ctx.urn_of(p).await?),
        None => None,
    };
    let mut depends_on = Vec::new();
    for handle in &decl.depends_on {
        depends_on.push(ctx.urn_of(handle).await?);
    }
    let provider = match &decl.provider {
        Some(handle) => {
            let p = ctx.wait(handle, false).await?;
            Some(format!("{}::{}", p.urn, p.id.unwrap_or_default()))
        }
        None => None,
    };
    let mut providers = IndexMap::new();
    for (package, handle) in &decl.providers {
        let p = ctx.wait(handle, false).await?;
        providers.insert(
            package.clone(),
            format!("{}::{}", p.urn, p.id.unwrap_or_default()),
        );
    }
    let deleted_with = match &decl.deleted_with {
        Some(handle) => Some(ctx.urn_of(handle).await?),
        None => None,
    };
    let mut aliases = Vec::new();
    for alias in &decl.aliases {
        if let Some(urn) = &alias.urn {
            aliases.push(Alias::Urn(full_urn(urn).map_err(Wait::Broken)?));
            continue;
        }
        let parent = match (&alias.parent, &alias.parent_urn) {
            (_, Some(urn)) => Some(Some(full_urn(urn).map_err(Wait::Broken)?)),
            (Some(p), None) if p == "$none" => Some(None),
            (Some(p), None) => Some(Some(ctx.urn_of(p).await?)),
            (None, None) => None,
        };
        aliases.push(Alias::Spec {
            name: alias.name.clone(),
            resource_type: alias
                .resource_type
                .as_deref()
                .map(token)
                .transpose()
                .map_err(Wait::Broken)?,
            parent,
            stack: alias.stack.clone(),
            project: alias.project.clone(),
        });
    }
    let (inputs, property_dependencies) = ctx.resolve_map(&decl.inputs).await?;

    if let Some(id) = &decl.read {
        let mut dependencies = depends_on.clone();
        for urns in property_dependencies.values() {
            for urn in urns {
                if !dependencies.contains(urn) {
                    dependencies.push(urn.clone());
                }
            }
        }
        let response = monitor
            .read_resource(ReadResourceRequest {
                resource_type,
                name,
                id: id.clone(),
                parent,
                properties: inputs,
                dependencies,
                provider,
                version: decl.version.clone(),
                additional_secret_outputs: decl.additional_secret_outputs.clone(),
            })
            .await
            .map_err(|e| Wait::Failed(e.to_string()))?;
        return Ok(Some(Registered {
            urn: response.urn,
            id: Some(id.clone()),
            outputs: response.outputs,
        }));
    }

    let options = ResourceOptions {
        protect: decl.protect,
        retain_on_delete: decl.retain_on_delete,
        deleted_with,
        depends_on,
        provider,
        providers,
        aliases,
        ignore_changes: decl.ignore_changes.clone(),
        replace_on_changes: decl.replace_on_changes.clone(),
        delete_before_replace: decl.delete_before_replace,
        additional_secret_outputs: decl.additional_secret_outputs.clone(),
        custom_timeouts: decl.custom_timeouts.map(|t| CustomTimeouts {
            create: t.create,
            update: t.update,
            delete: t.delete,
            read: 0.0,
        }),
        import_id: decl.import_id.clone(),
        version: decl.version.clone(),
        plugin_download_url: None,
        transforms: Vec::new(),
        hooks: Default::default(),
        state_migrations: Vec::new(),
    };
    let request = RegisterResourceRequest {
        resource_type,
        name,
        custom: !decl.component,
        remote: false,
        parent,
        inputs,
        property_dependencies,
        options,
    };
    let response = monitor
        .register_resource(request)
        .await
        .map_err(|e| match e.continued {
            Some(kind) => Wait::Continued {
                message: e.message,
                skipped: kind == Unregistered::Skipped,
            },
            None => Wait::Failed(e.message),
        })?;
    Ok(Some(Registered {
        urn: response.urn,
        id: response.id,
        outputs: response.outputs,
    }))
}

#[async_trait]
impl Program for ScriptedProgram {
    async fn run(&self, monitor: Monitor) -> Result<(), ProgramError> {
        let mut cells = IndexMap::new();
        for (i, decl) in self.decls.iter().enumerate() {
            let key = decl.key().map_or_else(|| format!("#{i}"), str::to_owned);
            if cells.contains_key(&key) {
                return Err(ProgramError::new(format!(
                    "scenario error: two declarations have the handle {key}; use `as`"
                )));
            }
            cells.insert(
                key,
                Cells {
                    registered: watch::channel(None).0,
                    outputs: watch::channel(None).0,
                },
            );
        }
        let ctx = Arc::new(Ctx {
            decls: self.decls.clone(),
            cells,
            preview: monitor.is_preview(),
        });
        let mut tasks = Vec::new();
        for i in 0..self.decls.len() {
            let ctx = ctx.clone();
            let monitor = monitor.clone();
            let outcomes = self.outcomes.clone();
            tasks.push(tokio::spawn(async move {
                let key = ctx
                    .cells
                    .get_index(i)
                    .map(|(k, _)| k.clone())
                    .unwrap_or_default();
                let decl = &ctx.decls[i];
                let result = run_decl(ctx.clone(), monitor.clone(), i).await;
                let failure = |message: &String, continued| Failure {
                    message: message.clone(),
                    continued,
                };
                // A registration the deployment went on without has a URN (others may depend
                // on it, and the engine skips them) but no outputs.
                let mut continued_urn = None;
                let (outcome, registered) = match result {
                    Ok(r) => (RegOutcome::Ok, Ok(r)),
                    Err(Wait::Skipped(e, continued)) => {
                        (RegOutcome::Skipped(e.clone()), Err(failure(&e, continued)))
                    }
                    Err(Wait::Failed(e)) => {
                        (RegOutcome::Failed(e.clone()), Err(failure(&e, false)))
                    }
                    Err(Wait::Continued { message, skipped }) => {
                        continued_urn = decl_urn(&ctx.decls, decl).ok();
                        let outcome = if skipped {
                            RegOutcome::Skipped(message.clone())
                        } else {
                            RegOutcome::Failed(message.clone())
                        };
                        (outcome, Err(failure(&message, true)))
                    }
                    Err(Wait::Broken(e)) => {
                        let e = format!("scenario error: {e}");
                        (RegOutcome::Failed(e.clone()), Err(failure(&e, false)))
                    }
                };
                let fatal = matches!(&registered, Err(f) if !f.continued);
                let registered = registered.map(|r| {
                    r.unwrap_or_else(|| Registered {
                        urn: monitor.root_urn().clone(),
                        id: None,
                        outputs: PropertyMap::new(),
                    })
                });
                let urn_known = match (&continued_urn, &registered) {
                    (Some(urn), Err(_)) => Ok(Registered {
                        urn: urn.clone(),
                        id: None,
                        outputs: PropertyMap::new(),
                    }),
                    _ => registered.clone(),
                };
                ctx.cells[i].registered.send_replace(Some(urn_known));
                // A component's outputs are final once it registered them.
                let outputs = match (&registered, &decl.outputs) {
                    (Ok(r), Some(outputs)) => match ctx.resolve_map(outputs).await {
                        Ok((values, _)) => {
                            match monitor.register_resource_outputs(&r.urn, values.clone()) {
                                Ok(()) => Ok(Registered {
                                    outputs: values,
                                    ..r.clone()
                                }),
                                Err(e) => Err(failure(&e.message, false)),
                            }
                        }
                        Err(Wait::Skipped(e, continued)) => Err(failure(&e, continued)),
                        Err(
                            Wait::Failed(e) | Wait::Broken(e) | Wait::Continued { message: e, .. },
                        ) => Err(failure(&e, false)),
                    },
                    _ => registered,
                };
                let (outcome, fatal) = match (&outcome, &outputs) {
                    (RegOutcome::Ok, Err(e)) => {
                        (RegOutcome::Failed(e.message.clone()), !e.continued)
                    }
                    _ => (outcome, fatal),
                };
                ctx.cells[i].outputs.send_replace(Some(outputs));
                lock(&outcomes).insert(key, outcome.clone());
                (outcome, fatal)
            }));
        }
        // The program fails with its first own failure (not a consequence of another).
        let mut failed = None;
        let mut skipped = None;
        for task in tasks {
            match task.await {
                // What the deployment went on without does not fail the program.
                Ok((_, false)) => {}
                Ok((RegOutcome::Failed(e), true)) => {
                    failed.get_or_insert(e);
                }
                Ok((RegOutcome::Skipped(e), true)) => {
                    skipped.get_or_insert(e);
                }
                Ok((RegOutcome::Ok, true)) => {}
                Err(e) => {
                    failed.get_or_insert(format!("a program task panicked: {e}"));
                }
            }
        }
        match failed.or(skipped) {
            Some(e) => Err(ProgramError::new(e)),
            None => Ok(()),
        }
    }
}
