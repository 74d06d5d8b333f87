//! Resource hooks as Pulumi's engine runs them (its lifecycle tests `TestResourceHook*`): the
//! order around the provider's create, update and delete, what each hook is told, previews,
//! and what a failing before or after hook does to the step, the state and the deployment.

// Only the loader and the crypter of the shared scaffolding are used here.
#[allow(dead_code)]
mod support;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cairn_engine::deploy::events::{EngineEvent, EventSink, Severity};
use cairn_engine::deploy::hooks::{
    HookArgs, HookBinding, HookKind, RegisteredHook, ResourceHook, delete_hooks,
};
use cairn_engine::deploy::journal::{PersistError, Persister, SnapshotManager};
use cairn_engine::deploy::monitor::Monitor;
use cairn_engine::deploy::program::{Program, ProgramError, RegisterResourceRequest};
use cairn_engine::deploy::provider::{
    CheckRequest, CheckResult, CreateRequest, CreateResult, DeleteRequest, DiffChanges,
    DiffRequest, DiffResult, Provider, ProviderError, ReadRequest, ReadResult, UpdateRequest,
    UpdateResult,
};
use cairn_engine::deploy::{DeployError, Deployment, DeploymentOptions};
use cairn_engine::state::{Manifest, Snapshot, decode_deployment_json};
use cairn_engine::value::PropertyMap;
use cairn_engine::{TypeToken, props};
use support::{Loader, Plain};

/// What happened, in order: hook calls (`before_create res`) and provider calls
/// (`provider create res`).
type Log = Arc<Mutex<Vec<String>>>;

/// A provider of package `test` that logs its mutations; `value` changes update in place.
struct Logging(Log);

#[async_trait]
impl Provider for Logging {
    fn package(&self) -> &str {
        "test"
    }
    async fn configure(&self, _: PropertyMap, _: bool) -> Result<(), ProviderError> {
        Ok(())
    }
    async fn check(&self, r: CheckRequest<'_>) -> Result<CheckResult, ProviderError> {
        Ok(CheckResult {
            inputs: r.news.clone(),
            failures: vec![],
        })
    }
    async fn diff(&self, r: DiffRequest<'_>) -> Result<DiffResult, ProviderError> {
        Ok(DiffResult {
            changes: if r.old_inputs == r.news {
                DiffChanges::None
            } else {
                DiffChanges::Some
            },
            ..DiffResult::default()
        })
    }
    async fn create(&self, r: CreateRequest) -> Result<CreateResult, ProviderError> {
        self.0
            .lock()
            .unwrap()
            .push(format!("provider create {}", r.urn.name()));
        let mut outputs = r.properties.clone();
        outputs.insert("out".into(), "made".into());
        Ok(CreateResult {
            id: format!("id-{}", r.urn.name()),
            outputs,
        })
    }
    async fn read(&self, r: ReadRequest) -> Result<ReadResult, ProviderError> {
        Ok(ReadResult {
            id: r.id,
            inputs: r.inputs,
            outputs: r.state,
        })
    }
    async fn update(&self, r: UpdateRequest) -> Result<UpdateResult, ProviderError> {
        self.0
            .lock()
            .unwrap()
            .push(format!("provider update {}", r.urn.name()));
        Ok(UpdateResult { outputs: r.news })
    }
    async fn delete(&self, r: DeleteRequest) -> Result<(), ProviderError> {
        self.0
            .lock()
            .unwrap()
            .push(format!("provider delete {}", r.urn.name()));
        Ok(())
    }
}

/// A hook of the program: logs its call and what it was told; fails with `fails` if set.
struct Recorder {
    name: String,
    log: Log,
    seen: Arc<Mutex<Vec<HookArgs>>>,
    fails: Option<String>,
}

#[async_trait]
impl ResourceHook for Recorder {
    fn describe(&self) -> String {
        format!("hook {}", self.name)
    }
    async fn call(&self, _: HookKind, args: &HookArgs) -> Result<(), String> {
        self.log
            .lock()
            .unwrap()
            .push(format!("{} {}", self.name, args.urn.name()));
        self.seen.lock().unwrap().push(args.clone());
        match &self.fails {
            Some(message) => Err(message.clone()),
            None => Ok(()),
        }
    }
}

/// One hook the program registers: name, failure, `on_dry_run`, `ignore_errors`.
#[derive(Clone)]
struct HookSpec {
    name: &'static str,
    fails: Option<&'static str>,
    on_dry_run: bool,
    ignore_errors: bool,
}

fn hook(name: &'static str) -> HookSpec {
    HookSpec {
        name,
        fails: None,
        on_dry_run: false,
        ignore_errors: false,
    }
}

/// Registers its hooks, then its resources (`test:index:Thing`, input `value`) one after the
/// other, each bound to hooks.
struct HookedProgram {
    hooks: Vec<HookSpec>,
    resources: Vec<(&'static str, i64, HookBinding)>,
    log: Log,
    seen: Arc<Mutex<Vec<HookArgs>>>,
}

#[async_trait]
impl Program for HookedProgram {
    async fn run(&self, monitor: Monitor) -> Result<(), ProgramError> {
        for spec in &self.hooks {
            let callback = Arc::new(Recorder {
                name: spec.name.to_owned(),
                log: self.log.clone(),
                seen: self.seen.clone(),
                fails: spec.fails.map(str::to_owned),
            });
            let registered = RegisteredHook {
                callback,
                on_dry_run: spec.on_dry_run,
                ignore_errors: spec.ignore_errors,
            };
            monitor.register_resource_hook(spec.name, registered)?;
        }
        let token = TypeToken::parse("test:index:Thing").unwrap();
        for (name, value, binding) in &self.resources {
            let mut request =
                RegisterResourceRequest::custom(token.clone(), *name, props! { "value" => *value });
            request.options.hooks = Some(Box::new(binding.clone()));
            monitor.register_resource(request).await?;
        }
        Ok(())
    }
}

/// Keeps the diagnostics.
#[derive(Default)]
struct Diagnostics(Mutex<Vec<(Severity, String)>>);

impl EventSink for Diagnostics {
    fn emit(&self, event: EngineEvent) {
        if let EngineEvent::Diagnostic {
            severity, message, ..
        } = event
        {
            self.0.lock().unwrap().push((severity, message));
        }
    }
}

/// Keeps the last state a deployment saved (also one that failed).
#[derive(Default)]
struct Saved(Mutex<Option<Vec<u8>>>);

impl Persister for Saved {
    fn append(&self, _: &[u8]) -> Result<(), PersistError> {
        Ok(())
    }
    fn save(&self, deployment: &[u8]) -> Result<(), PersistError> {
        *self.0.lock().unwrap() = Some(deployment.to_vec());
        Ok(())
    }
}

/// A stack whose deployments share one state, log and set of seen hook arguments.
struct Stack {
    snapshot: Snapshot,
    log: Log,
    seen: Arc<Mutex<Vec<HookArgs>>>,
    diagnostics: Arc<Diagnostics>,
}

impl Stack {
    fn new() -> Stack {
        Stack {
            snapshot: Snapshot::empty(None),
            log: Log::default(),
            seen: Arc::default(),
            diagnostics: Arc::default(),
        }
    }

    fn deployment(&self, preview: bool) -> (Deployment, Arc<Saved>) {
        let saved = Arc::new(Saved::default());
        let persister = (!preview).then(|| saved.clone() as Arc<dyn Persister>);
        let journal = Arc::new(
            SnapshotManager::new(
                self.snapshot.clone(),
                Manifest::new(),
                persister,
                Arc::new(Plain),
            )
            .unwrap(),
        );
        let mut options = DeploymentOptions::new("p", "dev");
        options.preview = preview;
        let deployment = Deployment::new(
            options,
            Arc::new(Loader(Arc::new(Logging(self.log.clone())))),
            self.diagnostics.clone(),
            journal,
        )
        .unwrap();
        (deployment, saved)
    }

    /// Runs `up` (or its preview) with `hooks` registered and `resources` declared; the log
    /// and seen arguments start empty. The state is kept, also after a failure.
    async fn up(
        &mut self,
        preview: bool,
        hooks: &[HookSpec],
        resources: Vec<(&'static str, i64, HookBinding)>,
    ) -> Result<(), DeployError> {
        self.log.lock().unwrap().clear();
        self.seen.lock().unwrap().clear();
        let program = Arc::new(HookedProgram {
            hooks: hooks.to_vec(),
            resources,
            log: self.log.clone(),
            seen: self.seen.clone(),
        });
        let (deployment, saved) = self.deployment(preview);
        let result = deployment.update(program).await.map(|_| ());
        if let Some(saved) = saved.0.lock().unwrap().take() {
            self.snapshot = decode_deployment_json(&saved, Some(&Plain)).unwrap();
        }
        result
    }

    fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    fn names(&self) -> Vec<String> {
        self.snapshot
            .resources
            .iter()
            .filter(|r| r.resource_type.as_str() == "test:index:Thing")
            .map(|r| r.urn.name().to_owned())
            .collect()
    }
}

fn all_six() -> (Vec<HookSpec>, HookBinding) {
    let names = [
        "before_create",
        "after_create",
        "before_update",
        "after_update",
        "before_delete",
        "after_delete",
    ];
    let binding = HookBinding {
        before_create: vec!["before_create".into()],
        after_create: vec!["after_create".into()],
        before_update: vec!["before_update".into()],
        after_update: vec!["after_update".into()],
        before_delete: vec!["before_delete".into()],
        after_delete: vec!["after_delete".into()],
    };
    (names.into_iter().map(hook).collect(), binding)
}

#[tokio::test]
async fn hooks_run_around_the_provider_s_create_update_and_delete() {
    let (hooks, binding) = all_six();
    let mut stack = Stack::new();

    stack
        .up(false, &hooks, vec![("res", 1, binding.clone())])
        .await
        .unwrap();
    assert_eq!(
        stack.log(),
        [
            "before_create res",
            "provider create res",
            "after_create res"
        ]
    );
    let seen = stack.seen.lock().unwrap().clone();
    assert_eq!(seen[0].id, None, "before a create there is no ID yet");
    assert_eq!(seen[0].new_inputs, Some(props! { "value" => 1i64 }));
    assert_eq!(seen[0].new_outputs, None);
    assert_eq!(seen[1].id.as_deref(), Some("id-res"));
    assert_eq!(
        seen[1].new_outputs,
        Some(props! { "value" => 1i64, "out" => "made" })
    );
    assert_eq!(seen[1].old_inputs, None);
    // The binding is recorded as Pulumi records it, for the deletes of later deployments.
    let res = stack
        .snapshot
        .resources
        .iter()
        .find(|r| r.urn.name() == "res")
        .unwrap();
    assert_eq!(HookBinding::of(res), binding);
    assert_eq!(
        res.extra["resourceHooks"]["BeforeDelete"],
        serde_json::json!(["before_delete"])
    );

    stack
        .up(false, &hooks, vec![("res", 2, binding.clone())])
        .await
        .unwrap();
    assert_eq!(
        stack.log(),
        [
            "before_update res",
            "provider update res",
            "after_update res"
        ]
    );
    let seen = stack.seen.lock().unwrap().clone();
    assert_eq!(seen[0].old_inputs, Some(props! { "value" => 1i64 }));
    assert_eq!(seen[0].new_inputs, Some(props! { "value" => 2i64 }));
    assert_eq!(
        seen[0].new_outputs, None,
        "before the update: no new outputs"
    );
    assert_eq!(seen[1].new_outputs, Some(props! { "value" => 2i64 }));

    // No change: no step, no hook.
    stack
        .up(false, &hooks, vec![("res", 2, binding.clone())])
        .await
        .unwrap();
    assert!(stack.log().is_empty(), "{:?}", stack.log());

    // The program no longer declares it, but still registers the hooks its state names.
    stack.up(false, &hooks, vec![]).await.unwrap();
    assert_eq!(
        stack.log(),
        [
            "before_delete res",
            "provider delete res",
            "after_delete res"
        ]
    );
    let seen = stack.seen.lock().unwrap().clone();
    assert_eq!(seen[0].old_inputs, Some(props! { "value" => 2i64 }));
    assert_eq!(seen[0].new_inputs, None);
    assert_eq!(seen[0].id.as_deref(), Some("id-res"));
    assert!(stack.names().is_empty());
}

#[tokio::test]
async fn a_preview_runs_only_hooks_marked_on_dry_run() {
    let mut dry = hook("dry");
    dry.on_dry_run = true;
    let hooks = [hook("wet"), dry];
    let binding = HookBinding {
        before_create: vec!["wet".into(), "dry".into()],
        after_create: vec!["wet".into(), "dry".into()],
        ..Default::default()
    };
    let mut stack = Stack::new();
    stack
        .up(true, &hooks, vec![("res", 1, binding.clone())])
        .await
        .unwrap();
    assert_eq!(stack.log(), ["dry res", "provider create res", "dry res"]);
    stack
        .up(false, &hooks, vec![("res", 1, binding)])
        .await
        .unwrap();
    assert_eq!(
        stack.log(),
        [
            "wet res",
            "dry res",
            "provider create res",
            "wet res",
            "dry res"
        ]
    );
}

#[tokio::test]
async fn a_failing_before_hook_fails_its_step_before_the_provider_is_called() {
    let mut failing = hook("check");
    failing.fails = Some("Oh no");
    let binding = HookBinding {
        before_create: vec!["check".into()],
        ..Default::default()
    };
    let mut stack = Stack::new();
    let error = stack
        .up(false, &[failing], vec![("res", 1, binding)])
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("before hook \"check\" failed: Oh no"),
        "{error}"
    );
    assert_eq!(stack.log(), ["check res"], "the provider was not called");
    assert!(stack.names().is_empty(), "nothing was created");
}

#[tokio::test]
async fn a_failing_after_hook_keeps_the_resource_but_fails_the_deployment() {
    let mut failing = hook("notify");
    failing.fails = Some("Oh no");
    let binding = HookBinding {
        after_create: vec!["notify".into()],
        ..Default::default()
    };
    let mut stack = Stack::new();
    let error = stack
        .up(
            false,
            &[failing],
            vec![("res", 1, binding), ("later", 1, HookBinding::default())],
        )
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("after hook \"notify\" failed: Oh no"),
        "{error}"
    );
    assert_eq!(
        stack.names(),
        ["res"],
        "the create stands; nothing new started"
    );
    let diagnostics = stack.diagnostics.0.lock().unwrap().clone();
    assert!(
        diagnostics
            .iter()
            .any(|(severity, message)| *severity == Severity::Error
                && message == "after hook \"notify\" failed: Oh no"),
        "{diagnostics:?}"
    );
}

#[tokio::test]
async fn a_hook_that_ignores_errors_warns_and_the_step_goes_on() {
    let mut failing = hook("lenient");
    failing.fails = Some("Oh no");
    failing.ignore_errors = true;
    let binding = HookBinding {
        before_create: vec!["lenient".into()],
        ..Default::default()
    };
    let mut stack = Stack::new();
    stack
        .up(false, &[failing], vec![("res", 1, binding)])
        .await
        .unwrap();
    assert_eq!(stack.names(), ["res"]);
    let diagnostics = stack.diagnostics.0.lock().unwrap().clone();
    assert!(
        diagnostics
            .iter()
            .any(|(severity, message)| *severity == Severity::Warning
                && message == "BeforeCreate hook \"lenient\" failed: Oh no"),
        "{diagnostics:?}"
    );
}

#[tokio::test]
async fn a_failing_before_delete_hook_keeps_the_resource() {
    let (hooks, binding) = all_six();
    let mut stack = Stack::new();
    stack
        .up(false, &hooks, vec![("res", 1, binding)])
        .await
        .unwrap();
    let mut failing = hook("before_delete");
    failing.fails = Some("not yet");
    let error = stack.up(false, &[failing], vec![]).await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("before hook \"before_delete\" failed: not yet"),
        "{error}"
    );
    assert_eq!(stack.names(), ["res"]);
}

#[tokio::test]
async fn a_hook_the_program_did_not_register_fails_the_step() {
    let (hooks, binding) = all_six();
    let mut stack = Stack::new();
    stack
        .up(false, &hooks, vec![("res", 1, binding)])
        .await
        .unwrap();
    let error = stack.up(false, &[], vec![]).await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("hook \"before_delete\" was not registered"),
        "{error}"
    );
    assert_eq!(stack.names(), ["res"]);
}

#[tokio::test]
async fn a_destroy_without_the_program_is_refused_when_the_state_has_delete_hooks() {
    let (hooks, binding) = all_six();
    let mut stack = Stack::new();
    stack
        .up(false, &hooks, vec![("res", 1, binding)])
        .await
        .unwrap();
    assert_eq!(delete_hooks(&stack.snapshot).len(), 1);
    let (deployment, _) = stack.deployment(false);
    let error = deployment.destroy().await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "You must run with the `--run-program` flag to use delete hooks during destroy."
    );
    let diagnostics = stack.diagnostics.0.lock().unwrap().clone();
    assert!(
        diagnostics.iter().any(|(_, m)| m
            == "Resource has delete hooks registered, but the program is not running. Hooks: before_delete, after_delete"),
        "{diagnostics:?}"
    );
}

#[tokio::test]
async fn a_hook_name_is_registered_once() {
    let mut stack = Stack::new();
    let error = stack
        .up(false, &[hook("twice"), hook("twice")], vec![])
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("resource hook already registered for name \"twice\""),
        "{error}"
    );
}
