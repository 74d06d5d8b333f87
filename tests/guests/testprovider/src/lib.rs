//! `testprovider`: the resources and functions of Pulumi's Go test provider
//! (`tests/testprovider` in pulumi/pulumi), with the same tokens and behaviour, for the ported
//! integration tests (`tests/pulumi`).
//!
//! | token | behaviour |
//! | --- | --- |
//! | `Random` | inputs `length`, `prefix`; outputs `length`, `prefix` (when not empty) and `result` = prefix + random letters and digits, **secret**; the ID is the random part; a change of `length` or `prefix` replaces it, nothing else is a change; import by ID `prefix:result` or `result` |
//! | `Echo` | outputs = inputs; IDs count up from 1; a change of `echo` replaces it |
//! | `FailsOnCreate` | `create` always fails |
//! | `FailsOnDelete` | no outputs, IDs count up; `delete` always fails |
//! | `Named` | `check` fills in `name: default-name` when it is missing |
//! | `Component` | component: registers a `Random` `child-<name>` of `length` and outputs its ID as `childId` |
//! | `doEcho`, `doMultiEcho`, `returnArgs` (invoke), `Echo/doEchoMethod` (call) | return their arguments |
//!
//! As in the Go provider, no resource is ever updated in place (a change either replaces it or
//! is no change), and deletes do nothing but for `FailsOnDelete`.

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use cairn_sdk::engine::{self, RegisterResource};
use cairn_sdk::{
    CallRequest, CallResult, CheckRequest, CheckResult, ConstructRequest, ConstructResult,
    CreateRequest, CreateResult, DeleteRequest, DiffChanges, DiffRequest, DiffResult, Error,
    InvokeRequest, InvokeResult, PropertyMap, ReadRequest, ReadResult, Result, UpdateRequest,
    UpdateResult, Value, props,
};

/// The resource kinds, by type token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Random,
    Echo,
    FailsOnCreate,
    FailsOnDelete,
    Named,
}

impl Kind {
    fn of(resource_type: &str) -> Result<Kind> {
        Ok(match resource_type {
            "testprovider:index:Random" => Kind::Random,
            "testprovider:index:Echo" => Kind::Echo,
            "testprovider:index:FailsOnCreate" => Kind::FailsOnCreate,
            "testprovider:index:FailsOnDelete" => Kind::FailsOnDelete,
            "testprovider:index:Named" => Kind::Named,
            other => {
                return Err(Error::failed(format!("Unknown resource type '{other}'")));
            }
        })
    }

    /// The properties whose change replaces the resource; a change of any other is none.
    fn replace_keys(self) -> &'static [&'static str] {
        match self {
            Kind::Random => &["length", "prefix"],
            // The Go provider's Named compares `echo` too.
            Kind::Echo | Kind::Named => &["echo"],
            Kind::FailsOnCreate | Kind::FailsOnDelete => &[],
        }
    }
}

/// The provider. IDs of `Echo`, `FailsOnDelete` and `Named` count up per instance, as the Go
/// provider's do per process.
#[derive(Default)]
pub struct TestProvider {
    next_id: AtomicU64,
}

impl TestProvider {
    fn next_id(&self) -> String {
        (self.next_id.fetch_add(1, Ordering::Relaxed) + 1).to_string()
    }
}

/// `length` random letters and digits (the system's entropy, through the hasher's seed).
fn random_text(length: usize) -> String {
    const CHARSET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let state = std::collections::hash_map::RandomState::new();
    (0..length)
        .map(|i| {
            let mut hasher = state.build_hasher();
            hasher.write_usize(i);
            let pick = (hasher.finish() % CHARSET.len() as u64) as usize;
            char::from(CHARSET[pick])
        })
        .collect()
}

/// A property that is set (null and absent are the same, as the Go provider skips nulls).
fn present<'a>(map: &'a PropertyMap, key: &str) -> Option<&'a Value> {
    map.get(key).filter(|v| !v.is_null())
}

impl cairn_sdk::Provider for TestProvider {
    fn check(&self, r: CheckRequest) -> Result<CheckResult> {
        if Kind::of(r.resource_type())? != Kind::Named {
            return Ok(CheckResult::ok(r.inputs));
        }
        let mut news = r.inputs.into_map();
        if present(&news, "name").is_none() {
            news.insert("name".into(), Value::from("default-name"));
        }
        Ok(CheckResult::ok(news))
    }

    /// Old outputs against new inputs, as the Go provider compares them: only the replace
    /// keys count.
    fn diff(&self, r: DiffRequest) -> Result<DiffResult> {
        let kind = Kind::of(r.resource_type())?;
        let mut replace_keys = Vec::new();
        for key in kind.replace_keys() {
            let changed = match (present(&r.old_outputs, key), present(&r.inputs, key)) {
                (None, None) => false,
                (Some(old), Some(new)) => !old.same_as(new),
                _ => true,
            };
            if changed {
                replace_keys.push((*key).to_owned());
            }
        }
        Ok(DiffResult {
            changes: if replace_keys.is_empty() {
                DiffChanges::None
            } else {
                DiffChanges::Some
            },
            changed_keys: replace_keys.clone(),
            replace_keys,
            ..DiffResult::default()
        })
    }

    fn create(&self, r: CreateRequest) -> Result<CreateResult> {
        match Kind::of(r.resource_type())? {
            Kind::Random => {
                let inputs = r.inputs.into_map();
                let length = match present(&inputs, "length").map(Value::reveal) {
                    Some(Value::Number(n)) if *n >= 0.0 => *n as usize,
                    other => {
                        return Err(Error::failed(format!(
                            "expected input property 'length' of type 'number' but got '{}'",
                            other.map_or("null", Value::kind)
                        )));
                    }
                };
                let prefix = match present(&inputs, "prefix").map(Value::reveal) {
                    None => String::new(),
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => {
                        return Err(Error::failed(format!(
                            "expected input property 'prefix' of type 'string' but got '{}'",
                            other.kind()
                        )));
                    }
                };
                let result = random_text(length);
                let mut outputs = props! {
                    "length" => length as f64,
                    "result" => Value::secret(format!("{prefix}{result}")),
                };
                if !prefix.is_empty() {
                    outputs.insert("prefix".into(), Value::from(prefix));
                }
                Ok(CreateResult {
                    id: result,
                    outputs: outputs.into(),
                })
            }
            Kind::Echo | Kind::Named => Ok(CreateResult {
                id: self.next_id(),
                outputs: r.inputs,
            }),
            Kind::FailsOnDelete => Ok(CreateResult {
                id: self.next_id(),
                outputs: PropertyMap::new().into(),
            }),
            Kind::FailsOnCreate => Err(Error::failed(
                "Create always fails for the FailsOnCreate resource",
            )),
        }
    }

    /// An import of a `Random` (no state) makes its state from the ID, `prefix:result` or
    /// `result`; otherwise the recorded state.
    fn read(&self, r: ReadRequest) -> Result<ReadResult> {
        let kind = Kind::of(r.resource_type())?;
        if kind == Kind::Random && r.old_outputs.is_empty() && r.old_inputs.is_empty() {
            let (prefix, result) = r.id.split_once(':').unwrap_or(("", r.id.as_str()));
            let length = result.chars().count() as f64;
            return Ok(ReadResult {
                id: r.id.clone(),
                inputs: props! {"length" => length, "prefix" => prefix}.into(),
                outputs: props! {"prefix" => prefix, "length" => length, "result" => result}.into(),
            });
        }
        // (The Go provider returns no inputs but for Random; the engine then keeps the
        // recorded ones, which is what returning them does.)
        Ok(ReadResult {
            id: r.id,
            inputs: r.old_inputs,
            outputs: r.old_outputs,
        })
    }

    fn update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        Err(Error::failed(format!(
            "Update not implemented for {}",
            r.resource_type()
        )))
    }

    fn delete(&self, r: DeleteRequest) -> Result<()> {
        match Kind::of(r.resource_type())? {
            Kind::FailsOnDelete => Err(Error::failed(
                "Delete always fails for the FailsOnDelete resource",
            )),
            _ => Ok(()),
        }
    }

    fn invoke(&self, r: InvokeRequest) -> Result<InvokeResult> {
        match r.token.as_str() {
            "testprovider:index:doEcho"
            | "testprovider:index:doMultiEcho"
            | "testprovider:index:returnArgs"
            | "testprovider:index:Echo/doEchoMethod" => Ok(InvokeResult {
                outputs: r.args,
                failures: Vec::new(),
            }),
            other => Err(Error::failed(format!("Unknown Invoke token '{other}'"))),
        }
    }

    fn call(&self, r: CallRequest) -> Result<CallResult> {
        match r.token.as_str() {
            "testprovider:index:Echo/doEchoMethod"
            | "testprovider:index:doEcho"
            | "testprovider:index:doMultiEcho" => Ok(CallResult {
                outputs: r.args,
                ..CallResult::default()
            }),
            other => Err(Error::failed(format!("Unknown Call token '{other}'"))),
        }
    }

    /// `testprovider:index:Component`: the component, its `Random` child and `childId`.
    fn construct(&self, r: ConstructRequest) -> Result<ConstructResult> {
        if r.resource_type != "testprovider:index:Component" {
            return Err(Error::failed(format!(
                "unknown resource type {}",
                r.resource_type
            )));
        }
        let inputs = r.inputs.into_map();
        let length = present(&inputs, "length")
            .cloned()
            .unwrap_or(Value::Number(0.0));
        let component = engine::register_resource(&RegisterResource {
            resource_type: r.resource_type.clone(),
            name: r.name.clone(),
            custom: false,
            parent: r.parent.clone(),
            dependencies: r.dependencies.clone(),
            protect: r.protect,
            ..RegisterResource::default()
        })?;
        let child = engine::register_resource(&RegisterResource {
            resource_type: "testprovider:index:Random".into(),
            name: format!("child-{}", r.name),
            custom: true,
            parent: Some(component.urn.clone()),
            inputs: props! {"length" => length},
            provider: r.providers.get("testprovider").cloned(),
            ..RegisterResource::default()
        })?;
        let child_id = child.id.map_or(Value::Unknown, Value::from);
        let outputs = props! {"childId" => child_id};
        engine::register_resource_outputs(&component.urn, &outputs)?;
        Ok(ConstructResult {
            urn: Some(component.urn),
            state: outputs.into(),
            ..ConstructResult::default()
        })
    }
}

cairn_sdk::export_provider!(TestProvider, manifest = "cairn.json");
