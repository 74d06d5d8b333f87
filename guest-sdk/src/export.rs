//! The glue between the generated `provider` export and a [`Provider`]: decodes requests,
//! calls the provider, encodes results. Used by [`export_provider!`](crate::export_provider).

use std::cell::RefCell;
use std::marker::PhantomData;

use crate::bindings::cairn::deploy::types as wit;
use crate::bindings::exports::cairn::deploy::provider::Guest;
use crate::error::{CheckFailure, Error, PartialState};
use crate::manifest::Manifest;
use crate::properties::Properties;
use crate::provider::{self as p, Dependencies, Provider};
use crate::wire::{decode_map, encode_map};

/// The provider instance of a component, created by `export_provider!`.
#[doc(hidden)]
pub trait Instance: 'static {
    type Provider: Provider;
    /// The manifest section's bytes.
    fn manifest() -> &'static [u8];
    /// Runs `f` on the instance's provider.
    fn with<R>(f: impl FnOnce(&RefCell<Self::Provider>) -> R) -> R;
}

/// Implements the generated `Guest` trait for an [`Instance`].
#[doc(hidden)]
pub struct Adapter<I>(PhantomData<I>);

type WitResult<T> = Result<T, wit::ProviderError>;

fn run<I: Instance, T>(f: impl FnOnce(&I::Provider) -> crate::Result<T>) -> WitResult<T> {
    I::with(|cell| match cell.try_borrow() {
        Ok(provider) => f(&provider),
        Err(_) => Err(Error::failed("the provider is busy (a re-entrant call)")),
    })
    .map_err(error_to_wit)
}

fn run_mut<I: Instance, T>(f: impl FnOnce(&mut I::Provider) -> crate::Result<T>) -> WitResult<T> {
    I::with(|cell| match cell.try_borrow_mut() {
        Ok(mut provider) => f(&mut provider),
        Err(_) => Err(Error::failed("the provider is busy (a re-entrant call)")),
    })
    .map_err(error_to_wit)
}

impl<I: Instance> Guest for Adapter<I> {
    fn get_schema() -> WitResult<String> {
        run::<I, _>(|provider| match provider.get_schema()? {
            Some(schema) => Ok(schema),
            None => Manifest::parse(I::manifest())
                .map_err(Error::failed)?
                .schema_json()
                .ok_or_else(|| Error::unimplemented("get-schema")),
        })
    }

    fn check_config(request: wit::CheckRequest) -> WitResult<wit::CheckResult> {
        let request = check_request(request);
        run::<I, _>(|provider| provider.check_config(request)).map(check_result)
    }

    fn diff_config(request: wit::DiffRequest) -> WitResult<wit::DiffResult> {
        let request = diff_request(request);
        run::<I, _>(|provider| provider.diff_config(request)).map(diff_result)
    }

    fn configure(inputs: wit::Value, preview: bool) -> WitResult<()> {
        let inputs = decode_map(inputs).map_err(|e| error_to_wit(e.into()))?;
        run_mut::<I, _>(|provider| provider.configure(inputs, preview))
    }

    fn check(request: wit::CheckRequest) -> WitResult<wit::CheckResult> {
        let request = check_request(request);
        run::<I, _>(|provider| provider.check(request)).map(check_result)
    }

    fn diff(request: wit::DiffRequest) -> WitResult<wit::DiffResult> {
        let request = diff_request(request);
        run::<I, _>(|provider| provider.diff(request)).map(diff_result)
    }

    /// A preview never reaches `Provider::create`: it goes to `preview_create`.
    fn create(r: wit::CreateRequest) -> WitResult<wit::CreateResult> {
        let preview = r.preview;
        let request = create_request(r);
        run::<I, _>(|provider| {
            if preview {
                provider.preview_create(request)
            } else {
                provider.create(request)
            }
        })
        .map(|result| wit::CreateResult {
            id: if preview { String::new() } else { result.id },
            outputs: result.outputs.into_wire(),
        })
    }

    fn read(r: wit::ReadRequest) -> WitResult<wit::ReadResult> {
        let request = read_request(r);
        run::<I, _>(|provider| provider.read(request)).map(|result| wit::ReadResult {
            id: result.id,
            inputs: result.inputs.into_wire(),
            outputs: result.outputs.into_wire(),
        })
    }

    /// A preview never reaches `Provider::update`: it goes to `preview_update`.
    fn update(r: wit::UpdateRequest) -> WitResult<wit::UpdateResult> {
        let preview = r.preview;
        let request = update_request(r);
        run::<I, _>(|provider| {
            if preview {
                provider.preview_update(request)
            } else {
                provider.update(request)
            }
        })
        .map(|result| wit::UpdateResult {
            outputs: result.outputs.into_wire(),
        })
    }

    fn delete(r: wit::DeleteRequest) -> WitResult<()> {
        let request = delete_request(r);
        run::<I, _>(|provider| provider.delete(request))
    }

    fn construct(r: wit::ConstructRequest) -> WitResult<wit::ConstructResult> {
        let request = construct_request(r);
        run::<I, _>(|provider| provider.construct(request)).map(|result| wit::ConstructResult {
            urn: result.urn,
            state: result.state.into_wire(),
            state_dependencies: dependencies_to_wit(&result.state_dependencies),
        })
    }

    fn invoke(r: wit::InvokeRequest) -> WitResult<wit::InvokeResult> {
        let args = Properties::from_wire(r.args);
        let request = p::InvokeRequest {
            token: r.token,
            args,
        };
        run::<I, _>(|provider| provider.invoke(request)).map(|result| wit::InvokeResult {
            outputs: result.outputs.into_wire(),
            failures: failures_to_wit(result.failures),
        })
    }

    fn call(r: wit::CallRequest) -> WitResult<wit::CallResult> {
        let args = Properties::from_wire(r.args);
        let request = p::CallRequest {
            token: r.token,
            args,
            arg_dependencies: dependencies_from_wit(r.arg_dependencies),
            project: r.project,
            stack: r.stack,
            dry_run: r.dry_run,
        };
        run::<I, _>(|provider| provider.call(request)).map(|result| wit::CallResult {
            outputs: result.outputs.into_wire(),
            output_dependencies: dependencies_to_wit(&result.output_dependencies),
            failures: failures_to_wit(result.failures),
        })
    }

    fn cancel() {
        // Advisory: if the provider is busy there is nothing running to interrupt anyway
        // (calls into an instance are never concurrent).
        I::with(|cell| {
            if let Ok(provider) = cell.try_borrow() {
                provider.cancel();
            }
        });
    }
}

fn check_request(r: wit::CheckRequest) -> p::CheckRequest {
    p::CheckRequest {
        urn: r.urn,
        old_inputs: Properties::from_wire(r.olds),
        inputs: Properties::from_wire(r.news),
        random_seed: r.random_seed,
    }
}

fn diff_request(r: wit::DiffRequest) -> p::DiffRequest {
    p::DiffRequest {
        urn: r.urn,
        id: r.id,
        old_inputs: Properties::from_wire(r.old_inputs),
        old_outputs: Properties::from_wire(r.old_outputs),
        inputs: Properties::from_wire(r.news),
        ignore_changes: r.ignore_changes,
    }
}

fn create_request(r: wit::CreateRequest) -> p::CreateRequest {
    p::CreateRequest {
        urn: r.urn,
        inputs: Properties::from_wire(r.properties),
        timeout: r.timeout,
    }
}

fn read_request(r: wit::ReadRequest) -> p::ReadRequest {
    p::ReadRequest {
        urn: r.urn,
        id: r.id,
        old_inputs: Properties::from_wire(r.inputs),
        old_outputs: Properties::from_wire(r.state),
    }
}

fn update_request(r: wit::UpdateRequest) -> p::UpdateRequest {
    p::UpdateRequest {
        urn: r.urn,
        id: r.id,
        old_inputs: Properties::from_wire(r.old_inputs),
        old_outputs: Properties::from_wire(r.old_outputs),
        inputs: Properties::from_wire(r.news),
        timeout: r.timeout,
        ignore_changes: r.ignore_changes,
    }
}

fn delete_request(r: wit::DeleteRequest) -> p::DeleteRequest {
    p::DeleteRequest {
        urn: r.urn,
        id: r.id,
        old_inputs: Properties::from_wire(r.inputs),
        old_outputs: Properties::from_wire(r.outputs),
        timeout: r.timeout,
    }
}

fn construct_request(r: wit::ConstructRequest) -> p::ConstructRequest {
    p::ConstructRequest {
        project: r.project,
        stack: r.stack,
        resource_type: r.resource_type,
        name: r.name,
        parent: r.parent,
        inputs: Properties::from_wire(r.inputs),
        input_dependencies: dependencies_from_wit(r.input_dependencies),
        dependencies: r.dependencies,
        protect: r.protect,
        providers: r.providers.into_iter().collect(),
        dry_run: r.dry_run,
    }
}

fn check_result(r: p::CheckResult) -> wit::CheckResult {
    wit::CheckResult {
        inputs: r.inputs.into_wire(),
        failures: failures_to_wit(r.failures),
    }
}

fn failures_to_wit(failures: Vec<CheckFailure>) -> Vec<wit::CheckFailure> {
    failures.into_iter().map(Into::into).collect()
}

fn diff_result(r: p::DiffResult) -> wit::DiffResult {
    wit::DiffResult {
        changes: r.changes.into(),
        replace_keys: r.replace_keys,
        stable_keys: r.stable_keys,
        changed_keys: r.changed_keys,
        detailed_diff: r.detailed_diff.map(|entries| {
            entries
                .into_iter()
                .map(|d| wit::PropertyDiff {
                    path: d.path,
                    kind: d.kind.into(),
                    input_diff: d.input_diff,
                })
                .collect()
        }),
        delete_before_replace: r.delete_before_replace,
    }
}

pub(crate) fn dependencies_to_wit(deps: &Dependencies) -> Vec<wit::PropertyDependencies> {
    deps.iter()
        .map(|(property, urns)| wit::PropertyDependencies {
            property: property.clone(),
            urns: urns.clone(),
        })
        .collect()
}

fn dependencies_from_wit(deps: Vec<wit::PropertyDependencies>) -> Dependencies {
    let mut map = Dependencies::new();
    for d in deps {
        // A property listed twice gets the union of its URNs.
        map.entry(d.property).or_default().extend(d.urns);
    }
    map
}

/// The WIT form of an SDK error.
pub(crate) fn error_to_wit(e: Error) -> wit::ProviderError {
    match e {
        Error::Failed { message, partial } => wit::ProviderError::Failed(wit::Failure {
            message,
            partial: partial.map(|state| {
                let PartialState {
                    id,
                    inputs,
                    outputs,
                } = *state;
                wit::PartialState {
                    id,
                    inputs: encode_map(&inputs),
                    outputs: encode_map(&outputs),
                }
            }),
        }),
        Error::Unimplemented(method) => wit::ProviderError::Unimplemented(method),
        Error::Cancelled => wit::ProviderError::Cancelled,
        Error::Timeout(seconds) => wit::ProviderError::Timeout(seconds),
    }
}

#[cfg(test)]
mod tests {
    //! Drives the adapter exactly as the generated export code does, natively.
    use super::*;
    use crate::provider::*;
    use crate::{PropertyMap, Value, props, wire};

    #[derive(Default)]
    struct Echo {
        configured: Option<PropertyMap>,
    }

    impl Provider for Echo {
        fn configure(&mut self, inputs: PropertyMap, _preview: bool) -> crate::Result<()> {
            self.configured = Some(inputs);
            Ok(())
        }
        fn create(&self, r: CreateRequest) -> crate::Result<CreateResult> {
            if r.inputs.contains_key("fail") {
                return Err(Error::partial(
                    "half done",
                    PartialState {
                        id: "half".into(),
                        ..PartialState::default()
                    },
                ));
            }
            let mut outputs = r.inputs;
            outputs.insert(
                "configured".into(),
                Value::from(self.configured.clone().unwrap_or_default()),
            );
            Ok(CreateResult {
                id: "id-1".into(),
                outputs,
            })
        }
        fn update(&self, _: UpdateRequest) -> crate::Result<UpdateResult> {
            Err(Error::Timeout(2.0))
        }
        fn delete(&self, _: DeleteRequest) -> crate::Result<()> {
            Err(Error::Cancelled)
        }
        fn replace_on_change(&self, _: &str) -> &[&str] {
            &["*"]
        }
    }

    struct EchoInstance;
    thread_local! {
        static ECHO: RefCell<Echo> = RefCell::new(Echo::default());
    }
    impl Instance for EchoInstance {
        type Provider = Echo;
        fn manifest() -> &'static [u8] {
            br#"{"name": "echo", "version": "0.2.0", "wit": "0.3.0", "schema": {"resources": {}}}"#
        }
        fn with<R>(f: impl FnOnce(&RefCell<Echo>) -> R) -> R {
            ECHO.with(f)
        }
    }
    type A = Adapter<EchoInstance>;

    fn empty() -> wit::Value {
        wit::Value {
            nodes: vec![],
            strings: vec![],
            extras: vec![],
        }
    }

    #[test]
    fn unread_inputs_go_back_as_they_came() {
        // The default check returns the inputs: the host's table, not a re-encoding.
        let mut news = wire::encode_map(&props! {"b" => 1, "a" => "x"});
        news.strings.extend_from_slice(b"unused bytes");
        let checked = A::check(wit::CheckRequest {
            urn: "urn:pulumi:s::p::echo:index:E::e".into(),
            olds: empty(),
            news: news.clone(),
            random_seed: vec![],
        })
        .unwrap();
        assert_eq!(checked.inputs, news);
    }

    #[test]
    fn requests_and_results_cross_the_adapter() {
        A::configure(wire::encode_map(&props! {"region" => "north"}), false).unwrap();
        let created = A::create(wit::CreateRequest {
            urn: "urn:pulumi:s::p::echo:index:E::e".into(),
            properties: wire::encode_map(&props! {"a" => 1}),
            timeout: 0.0,
            preview: false,
        })
        .unwrap();
        assert_eq!(created.id, "id-1");
        assert_eq!(
            wire::decode_map(created.outputs).unwrap(),
            props! {"a" => 1, "configured" => props! {"region" => "north"}}
        );

        let diff = A::diff(wit::DiffRequest {
            urn: "urn:pulumi:s::p::echo:index:E::e".into(),
            id: "id-1".into(),
            old_inputs: wire::encode_map(&props! {"a" => 1}),
            old_outputs: empty(),
            news: wire::encode_map(&props! {"a" => 2}),
            ignore_changes: vec![],
        })
        .unwrap();
        assert_eq!(diff.changes, wit::DiffChanges::Some);
        assert_eq!(diff.replace_keys, ["a"]);
    }

    #[test]
    fn a_preview_never_runs_create_or_update() {
        // Echo's create adds `configured` and fails on `fail`; its update always fails: the
        // defaults answer the preview from the inputs without reaching either.
        let inputs = props! {"a" => 1, "fail" => true, "later" => Value::Unknown};
        let created = A::create(wit::CreateRequest {
            urn: "urn:pulumi:s::p::echo:index:E::e".into(),
            properties: wire::encode_map(&inputs),
            timeout: 0.0,
            preview: true,
        })
        .unwrap();
        assert_eq!(created.id, "");
        assert_eq!(wire::decode_map(created.outputs).unwrap(), inputs);
        let news = props! {"a" => 2};
        let updated = A::update(wit::UpdateRequest {
            urn: "urn:pulumi:s::p::echo:index:E::e".into(),
            id: "id-1".into(),
            old_inputs: wire::encode_map(&props! {"a" => 1}),
            old_outputs: wire::encode_map(&props! {"a" => 1, "configured" => 0}),
            news: wire::encode_map(&news),
            timeout: 0.0,
            ignore_changes: vec![],
            preview: true,
        })
        .unwrap();
        assert_eq!(wire::decode_map(updated.outputs).unwrap(), news);
        // The same requests outside a preview reach the bodies.
        assert!(matches!(
            A::update(wit::UpdateRequest {
                urn: "urn:pulumi:s::p::echo:index:E::e".into(),
                id: "id-1".into(),
                old_inputs: empty(),
                old_outputs: empty(),
                news: wire::encode_map(&news),
                timeout: 0.0,
                ignore_changes: vec![],
                preview: false,
            }),
            Err(wit::ProviderError::Timeout(_))
        ));
    }

    /// A table naming where it came from, to follow a WIT field to the SDK's.
    fn tagged(field: &str) -> wit::Value {
        wire::encode_map(&props! {"from" => field})
    }

    fn from(p: &Properties) -> &str {
        p.get("from").and_then(Value::as_str).unwrap_or("(empty)")
    }

    #[test]
    fn wit_fields_reach_the_sdk_names() {
        // The provider module's naming table, checked: `inputs` are the new inputs,
        // `old_inputs` / `old_outputs` the recorded ones, whatever the WIT calls them.
        let c = check_request(wit::CheckRequest {
            urn: String::new(),
            olds: tagged("olds"),
            news: tagged("news"),
            random_seed: vec![],
        });
        assert_eq!((from(&c.inputs), from(&c.old_inputs)), ("news", "olds"));
        let d = diff_request(wit::DiffRequest {
            urn: String::new(),
            id: String::new(),
            old_inputs: tagged("old-inputs"),
            old_outputs: tagged("old-outputs"),
            news: tagged("news"),
            ignore_changes: vec![],
        });
        assert_eq!(
            (from(&d.inputs), from(&d.old_inputs), from(&d.old_outputs)),
            ("news", "old-inputs", "old-outputs")
        );
        let c = create_request(wit::CreateRequest {
            urn: String::new(),
            properties: tagged("properties"),
            timeout: 0.0,
            preview: false,
        });
        assert_eq!(from(&c.inputs), "properties");
        let r = read_request(wit::ReadRequest {
            urn: String::new(),
            id: String::new(),
            inputs: tagged("inputs"),
            state: tagged("state"),
        });
        assert_eq!(
            (from(&r.old_inputs), from(&r.old_outputs)),
            ("inputs", "state")
        );
        let u = update_request(wit::UpdateRequest {
            urn: String::new(),
            id: String::new(),
            old_inputs: tagged("old-inputs"),
            old_outputs: tagged("old-outputs"),
            news: tagged("news"),
            timeout: 0.0,
            ignore_changes: vec![],
            preview: false,
        });
        assert_eq!(
            (from(&u.inputs), from(&u.old_inputs), from(&u.old_outputs)),
            ("news", "old-inputs", "old-outputs")
        );
        let d = delete_request(wit::DeleteRequest {
            urn: String::new(),
            id: String::new(),
            inputs: tagged("inputs"),
            outputs: tagged("outputs"),
            timeout: 0.0,
        });
        assert_eq!(
            (from(&d.old_inputs), from(&d.old_outputs)),
            ("inputs", "outputs")
        );
    }

    /// A malformed table: an array that contains itself.
    fn self_containing_array() -> wit::Value {
        wit::Value {
            nodes: vec![wire::kind::ARRAY, 0, 1, 0, 0],
            strings: vec![],
            extras: vec![],
        }
    }

    #[test]
    #[should_panic(
        expected = "malformed property table: node 0 refers to node 0, which is not after it"
    )]
    fn reading_a_malformed_table_stops_the_provider() {
        let _ = A::diff(wit::DiffRequest {
            urn: "u".into(),
            id: "i".into(),
            old_inputs: empty(),
            old_outputs: empty(),
            news: self_containing_array(),
            ignore_changes: vec![],
        });
    }

    #[test]
    fn errors_cross_the_adapter() {
        let err = A::create(wit::CreateRequest {
            urn: "u".into(),
            properties: wire::encode_map(&props! {"fail" => true}),
            timeout: 0.0,
            preview: false,
        })
        .unwrap_err();
        match err {
            wit::ProviderError::Failed(f) => {
                assert_eq!(f.message, "half done");
                assert_eq!(f.partial.unwrap().id, "half");
            }
            other => panic!("{other:?}"),
        }
        // What a provider does not read goes back as it came, unvalidated: the default
        // check returns the inputs untouched (the host validates what comes back).
        let check = A::check(wit::CheckRequest {
            urn: "u".into(),
            olds: empty(),
            news: self_containing_array(),
            random_seed: vec![],
        })
        .unwrap();
        assert_eq!(check.inputs, self_containing_array());
        assert!(matches!(
            A::invoke(wit::InvokeRequest {
                token: "echo:index:f".into(),
                args: empty(),
            }),
            Err(wit::ProviderError::Unimplemented(m)) if m == "invoke"
        ));
        assert!(matches!(
            A::delete(wit::DeleteRequest {
                urn: "u".into(),
                id: "i".into(),
                inputs: empty(),
                outputs: empty(),
                timeout: 0.0,
            }),
            Err(wit::ProviderError::Cancelled)
        ));
    }

    #[test]
    fn schema_defaults_to_the_manifest() {
        let schema: serde_json::Value = serde_json::from_str(&A::get_schema().unwrap()).unwrap();
        assert_eq!(schema["name"], "echo");
        assert_eq!(schema["version"], "0.2.0");
    }

    #[test]
    fn a_busy_provider_is_an_error_not_a_panic() {
        ECHO.with(|cell| {
            let _held = cell.borrow_mut();
            assert!(matches!(
                A::get_schema(),
                Err(wit::ProviderError::Failed(_))
            ));
        });
    }
}
