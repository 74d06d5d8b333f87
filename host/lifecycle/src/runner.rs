//! Runs one scenario file: its deployments in order, each on a fresh multi-thread runtime, and
//! checks every expectation, collecting all mismatches.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn_engine::deploy::events::{EngineEvent, EventSink, Severity};
use cairn_engine::deploy::journal::{Persister, SnapshotManager};
use cairn_engine::deploy::{
    DeployError, Deployment, DeploymentOptions, Outcome, PendingCreate, UrnTargets,
};
use cairn_engine::state::{Manifest, ResourceState, Snapshot};
use cairn_engine::urn::Urn;
use indexmap::IndexMap;
use serde_json::{Map, Value as Json};
use serde_yaml_ng::{Mapping, Value as Yaml};

use crate::BackendKind;
use crate::persist::{MemPersister, TestCrypter};
use crate::program::{PROJECT, RegOutcome, STACK, ScriptedProgram, decl_urn, full_urn, short_urn};
use crate::provider::{Backend, CloudEntry, TestLoader, World, lock};
use crate::scenario::{CallsExpect, CloudSeed, Decl, DeploymentSpec, Expect, Op, Scenario};
use crate::values::{canon, canon_map, canon_yaml, map_from_yaml, show};
use crate::wasm::WasmBackend;

/// How long one deployment may take before the scenario is declared hung.
const DEPLOYMENT_TIMEOUT: Duration = Duration::from_secs(60);

/// Collects engine events in order.
#[derive(Default)]
struct Recorder {
    events: Mutex<Vec<EngineEvent>>,
}

impl EventSink for Recorder {
    fn emit(&self, event: EngineEvent) {
        lock(&self.events).push(event);
    }
}

/// How a deployment ended.
enum Ended {
    Done(Box<Result<Outcome, DeployError>>),
    Killed,
    Panicked(String),
    TimedOut,
    Setup(String),
}

/// One step as seen in the events.
#[derive(Debug, Clone)]
struct StepRec {
    op: String,
    name: String,
    urn: Urn,
    start: usize,
    end: usize,
    failed: bool,
}

impl StepRec {
    fn label(&self) -> String {
        format!("{} {}", self.op, self.name)
    }
}

fn is_root(urn: &Urn) -> bool {
    urn.resource_type() == "pulumi:pulumi:Stack"
}

fn is_default_provider(urn: &Urn) -> bool {
    urn.resource_type().starts_with("pulumi:providers:") && urn.name().starts_with("default")
}

pub fn run_file(path: &Path, kind: BackendKind) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    let scenario: Scenario =
        serde_yaml_ng::from_str(&text).map_err(|e| format!("malformed scenario: {e}"))?;
    let raw: Yaml =
        serde_yaml_ng::from_str(&text).map_err(|e| format!("malformed scenario: {e}"))?;
    let secrets = crate::secrets::plaintexts(&raw);
    let backend = match kind {
        BackendKind::InProcess => Backend::InProcess,
        BackendKind::Wasm(guest) => Backend::Wasm(Arc::new(WasmBackend::new(guest)?)),
    };
    let mut failures = Vec::new();
    run(&scenario, backend, secrets, &mut failures);
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "({})\n{}",
            scenario.description.trim(),
            failures.join("\n")
        ))
    }
}

fn seed_entry(id: &str, seed: &CloudSeed) -> Result<CloudEntry, String> {
    let inputs = match &seed.inputs {
        Some(m) => map_from_yaml(m)?,
        None => Default::default(),
    };
    let outputs = match &seed.outputs {
        Some(m) => map_from_yaml(m)?,
        None => inputs.clone(),
    };
    Ok(CloudEntry {
        name: seed.name.clone().unwrap_or_else(|| id.to_owned()),
        resource_type: seed
            .resource_type
            .clone()
            .unwrap_or_else(|| crate::program::DEFAULT_TYPE.to_owned()),
        inputs: crate::provider::to_cloud(&inputs),
        outputs: crate::provider::to_cloud(&outputs),
    })
}

/// What a scenario's deployments share: the provider backend, the cloud and the stored state.
struct Fixture {
    backend: Backend,
    world: Arc<World>,
    persister: Arc<MemPersister>,
    crypter: Arc<TestCrypter>,
    /// The plaintexts of every secret in the scenario, which nothing may show or store.
    secrets: BTreeSet<String>,
}

fn run(
    scenario: &Scenario,
    backend: Backend,
    secrets: BTreeSet<String>,
    failures: &mut Vec<String>,
) {
    let crypter = Arc::new(TestCrypter);
    let fixture = Fixture {
        backend,
        world: Arc::new(World::default()),
        persister: Arc::new(MemPersister::new(crypter.clone())),
        crypter,
        secrets,
    };
    for (id, seed) in &scenario.cloud {
        match seed_entry(id, seed) {
            Ok(entry) => {
                lock(&fixture.world.cloud).insert(id.clone(), entry);
            }
            Err(e) => failures.push(format!("cloud {id}: {e}")),
        }
    }
    let mut program: Vec<Decl> = Vec::new();
    for (index, spec) in scenario.deployments.iter().enumerate() {
        let label = format!(
            "deployment #{} ({:?}{})",
            index + 1,
            spec.op,
            spec.name
                .as_deref()
                .map(|n| format!(" {n:?}"))
                .unwrap_or_default()
        );
        let mut problems = Vec::new();
        if let Some(p) = &spec.program {
            program = p.clone();
        }
        run_deployment(scenario, spec, &program, &fixture, &mut problems);
        for problem in problems {
            failures.push(format!("{label}: {problem}"));
        }
        // A later deployment cannot mean much once the state is broken.
        if !lock(&fixture.persister.violations).is_empty() {
            break;
        }
    }
}

fn resolve_names(
    names: &[String],
    program: &[Decl],
    snapshot: &Snapshot,
) -> Result<Vec<Urn>, String> {
    names
        .iter()
        .map(|name| {
            if name.contains("::") {
                return full_urn(name);
            }
            if name.contains('*') {
                return Err(format!("{name:?}: a glob names no one URN"));
            }
            if let Some(decl) = program
                .iter()
                .find(|d| d.key() == Some(name.as_str()) && d.name.is_some())
            {
                return decl_urn(program, decl);
            }
            let found: Vec<&ResourceState> = snapshot
                .resources
                .iter()
                .filter(|r| r.urn.name() == name && !r.delete)
                .collect();
            match found.as_slice() {
                [one] => Ok(one.urn.clone()),
                _ => Err(format!("cannot resolve {name:?} to one URN")),
            }
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn run_deployment(
    scenario: &Scenario,
    spec: &DeploymentSpec,
    program: &[Decl],
    fixture: &Fixture,
    problems: &mut Vec<String>,
) {
    let Fixture {
        backend,
        world,
        persister,
        crypter,
        secrets,
    } = fixture;
    // Out-of-band changes.
    if let Some(changes) = &spec.cloud_before {
        let mut cloud = lock(&world.cloud);
        for (id, seed) in &changes.set {
            match seed_entry(id, seed) {
                Ok(entry) => {
                    cloud.insert(id.clone(), entry);
                }
                Err(e) => problems.push(format!("cloudBefore.set {id}: {e}")),
            }
        }
        for (id, patch) in &changes.patch {
            let Some(entry) = cloud.get_mut(id) else {
                problems.push(format!("cloudBefore.patch: no cloud resource {id}"));
                continue;
            };
            match map_from_yaml(patch) {
                Ok(values) => {
                    for (k, v) in values {
                        entry.inputs.insert(k.clone(), v.clone());
                        entry.outputs.insert(k, v);
                    }
                }
                Err(e) => problems.push(format!("cloudBefore.patch {id}: {e}")),
            }
        }
        for id in &changes.delete {
            if cloud.shift_remove(id).is_none() {
                problems.push(format!("cloudBefore.delete: no cloud resource {id}"));
            }
        }
    }
    let behaviour = match &spec.provider {
        Some(p) => scenario.provider.merged(p),
        None => scenario.provider.clone(),
    };
    world.start_deployment(behaviour);
    if let Backend::Wasm(wasm) = backend
        && let Err(e) = wasm.push(world)
    {
        problems.push(format!("preparing the wasm provider's cloud: {e}"));
        return;
    }

    let base = match persister.snapshot() {
        Ok(s) => s,
        Err(e) => {
            problems.push(format!("the stored state is unusable: {e}"));
            return;
        }
    };
    let preview = spec.op == Op::Preview || spec.preview;
    let mut options = DeploymentOptions::new(PROJECT, STACK);
    options.preview = preview;
    if let Some(parallel) = spec.parallel {
        options.parallel = parallel;
    }
    // A value with `*` is a glob over full URNs, given to the engine as it is.
    let mut resolve = |names: &[String], what: &str| -> UrnTargets {
        let (globs, names): (Vec<String>, Vec<String>) =
            names.iter().cloned().partition(|n| n.contains('*'));
        let mut targets = match UrnTargets::parse(&globs) {
            Ok(targets) => targets,
            Err(e) => {
                problems.push(format!("{what}: {e}"));
                UrnTargets::default()
            }
        };
        match resolve_names(&names, program, &base) {
            Ok(urns) => urns.into_iter().for_each(|urn| targets.add(urn)),
            Err(e) => problems.push(format!("{what}: {e}")),
        }
        targets
    };
    options.targets = resolve(&spec.targets, "targets");
    options.target_replaces = resolve(&spec.target_replaces, "targetReplaces");
    options.replaces = resolve(&spec.replaces, "replaces");
    options.excludes = resolve(&spec.excludes, "excludes");
    options.target_dependents = spec.target_dependents;
    options.continue_on_error = spec.continue_on_error;
    for (name, decision) in &spec.pending_creates {
        let urn = match resolve_names(std::slice::from_ref(name), program, &base) {
            Ok(mut urns) => urns.pop(),
            Err(e) => {
                problems.push(format!("pendingCreates: {e}"));
                None
            }
        };
        let Some(urn) = urn else {
            continue;
        };
        let decision = match decision {
            crate::scenario::PendingCreateSpec::Word(word) if word == "clear" => {
                PendingCreate::Clear
            }
            crate::scenario::PendingCreateSpec::Word(word) => {
                problems.push(format!(
                    "pendingCreates.{name}: {word:?} is not `clear` or {{import: ID}}"
                ));
                continue;
            }
            crate::scenario::PendingCreateSpec::Import { import } => {
                PendingCreate::Import(import.clone())
            }
        };
        options.pending_creates.insert(urn, decision);
    }
    if !spec.analyzers.is_empty() {
        options.analyzers = cairn_engine::deploy::analyzer::Analyzers(vec![Arc::new(
            crate::provider::PolicyPack::new(spec.analyzers.clone()),
        )]);
    }
    for (key, value) in &spec.config {
        match crate::values::from_yaml(value) {
            Ok(v) => {
                options.config.insert(key.clone(), v);
            }
            Err(e) => problems.push(format!("config {key}: {e}")),
        }
    }

    let checkpoint_before = serde_json::to_string(&lock(&persister.store).checkpoint).ok();
    let cloud_before = lock(&world.cloud).clone();
    let saves_before = lock(&persister.store).saves;

    let recorder = Arc::new(Recorder::default());
    let scripted = Arc::new(ScriptedProgram::new(program.to_vec()));
    let mut manifest = Manifest::new();
    while manifest == base.manifest {
        std::thread::sleep(Duration::from_millis(2));
        manifest = Manifest::new();
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            problems.push(format!("cannot start a runtime: {e}"));
            return;
        }
    };
    let ended = {
        let persister_arg: Option<Arc<dyn Persister>> = if preview {
            None
        } else {
            Some(persister.clone() as Arc<dyn Persister>)
        };
        let loader = Arc::new(TestLoader {
            world: world.clone(),
            backend: backend.clone(),
        });
        let op = spec.op;
        let kill = spec.kill;
        let interrupt = spec.interrupt;
        let world = world.clone();
        let recorder = recorder.clone();
        let scripted = scripted.clone();
        let crypter = crypter.clone();
        let base = base.clone();
        runtime.block_on(async move {
            let journal = match SnapshotManager::new(base, manifest, persister_arg, crypter) {
                Ok(j) => Arc::new(j),
                Err(e) => return Ended::Setup(format!("SnapshotManager::new failed: {e}")),
            };
            let deployment = match Deployment::new(options, loader, recorder, journal) {
                Ok(d) => d,
                Err(e) => return Ended::Setup(format!("Deployment::new failed: {e}")),
            };
            let interrupter = deployment.interrupter();
            let mut handle = tokio::spawn(async move {
                match op {
                    Op::Up | Op::Preview => deployment.update(scripted).await,
                    Op::Refresh => deployment.refresh().await,
                    Op::Destroy => deployment.destroy().await,
                }
            });
            let finished = async {
                match tokio::time::timeout(DEPLOYMENT_TIMEOUT, &mut handle).await {
                    Ok(Ok(result)) => Ended::Done(Box::new(result)),
                    Ok(Err(e)) => Ended::Panicked(panic_text(e)),
                    Err(_) => Ended::TimedOut,
                }
            };
            if kill {
                tokio::select! {
                    _ = world.blocked.notified() => Ended::Killed,
                    ended = finished => ended,
                }
            } else if interrupt {
                let started = world.started.notified();
                tokio::pin!(finished);
                tokio::select! {
                    _ = started => {
                        interrupter.interrupt().await;
                        finished.await
                    }
                    ended = &mut finished => ended,
                }
            } else {
                finished.await
            }
        })
    };
    // Shutting the runtime down drops every task mid-flight: a crash, as far as the state goes.
    // Its threads are joined, so nothing of this deployment runs on into the next one.
    runtime.shutdown_timeout(Duration::from_secs(10));
    if let Backend::Wasm(wasm) = backend
        && let Err(e) = wasm.pull(world)
    {
        problems.push(format!("reading the wasm provider's cloud: {e}"));
        return;
    }

    let violations: Vec<String> = std::mem::take(&mut *lock(&persister.violations));
    for v in &violations {
        problems.push(format!("STATE INTEGRITY VIOLATION: {v}"));
    }
    scan_for_secrets(persister, &recorder, secrets, problems);

    let result = match ended {
        Ended::Done(result) => Some(*result),
        Ended::Killed => {
            if !spec.kill {
                problems.push("killed without `kill`".into());
            }
            if let Err(e) = persister.recover() {
                problems.push(format!("recovery after the kill: {e}"));
            }
            None
        }
        Ended::Panicked(message) => {
            if violations.is_empty() {
                problems.push(format!("the deployment panicked: {message}"));
            }
            return;
        }
        Ended::TimedOut => {
            problems.push(format!(
                "the deployment did not finish within {DEPLOYMENT_TIMEOUT:?} (hang)"
            ));
            return;
        }
        Ended::Setup(message) => {
            problems.push(message);
            return;
        }
    };
    if spec.kill && result.is_some() {
        problems.push("expected the deployment to block and be killed, but it finished".into());
    }

    // Universal invariants.
    if preview {
        let after = serde_json::to_string(&lock(&persister.store).checkpoint).ok();
        if after != checkpoint_before {
            problems.push("a preview changed the stored state".into());
        }
        if *lock(&world.cloud) != cloud_before {
            problems.push("a preview changed the cloud".into());
        }
    } else if result.is_some() {
        let store = lock(&persister.store);
        if store.saves != saves_before + 1 {
            problems.push(format!(
                "expected one checkpoint save, saw {}",
                store.saves - saves_before
            ));
        }
        let unsaved = !store.journal.is_empty();
        drop(store);
        if unsaved {
            problems.push("the journal was not emptied after the deployment".into());
            // As a backend would when it next opens the stack: replay what the journal holds.
            if let Err(e) = persister.recover() {
                problems.push(format!("recovering from the journal: {e}"));
            }
        }
    }

    let stored = match persister.snapshot() {
        Ok(s) => s,
        Err(e) => {
            problems.push(format!("the stored state is unusable: {e}"));
            return;
        }
    };
    let events = lock(&recorder.events).clone();
    let outcomes = lock(&scripted.outcomes).clone();
    check(
        &spec.expect,
        result.as_ref(),
        &events,
        world,
        &stored,
        &outcomes,
        problems,
    );
}

/// The secret-scan invariant, after every deployment: the stored checkpoint, the journal lines
/// this deployment wrote and its rendered events hold no secret's plaintext.
fn scan_for_secrets(
    persister: &MemPersister,
    recorder: &Recorder,
    secrets: &BTreeSet<String>,
    problems: &mut Vec<String>,
) {
    use crate::secrets::{rendered_events, scan};
    let (checkpoint, written) = {
        let mut store = lock(&persister.store);
        let checkpoint = serde_json::to_string(&store.checkpoint).unwrap_or_default();
        (checkpoint, std::mem::take(&mut store.written))
    };
    problems.extend(scan("the stored checkpoint", &checkpoint, secrets));
    problems.extend(scan(
        "the journal lines written",
        &String::from_utf8_lossy(&written),
        secrets,
    ));
    let events = rendered_events(&lock(&recorder.events));
    problems.extend(scan("the events (secrets masked)", &events, secrets));
}

fn panic_text(e: tokio::task::JoinError) -> String {
    if e.is_panic() {
        let payload = e.into_panic();
        if let Some(s) = payload.downcast_ref::<String>() {
            return s.clone();
        }
        if let Some(s) = payload.downcast_ref::<&str>() {
            return (*s).to_owned();
        }
        return "(non-string panic)".into();
    }
    e.to_string()
}

fn steps_of(events: &[EngineEvent]) -> Vec<StepRec> {
    let mut open: Vec<(String, Urn, usize)> = Vec::new();
    let mut out = Vec::new();
    for (seq, event) in events.iter().enumerate() {
        match event {
            EngineEvent::StepStarted(info) => {
                open.push((info.op.label().to_owned(), info.urn.clone(), seq));
            }
            EngineEvent::StepFinished { step, .. } | EngineEvent::StepFailed { step, .. } => {
                let op = step.op.label().to_owned();
                let start = open
                    .iter()
                    .position(|(o, u, _)| *o == op && *u == step.urn)
                    .map(|i| open.remove(i).2)
                    .unwrap_or(seq);
                out.push(StepRec {
                    op,
                    name: step.urn.name().to_owned(),
                    urn: step.urn.clone(),
                    start,
                    end: seq,
                    failed: matches!(event, EngineEvent::StepFailed { .. }),
                });
            }
            _ => {}
        }
    }
    // Started but never finished (the deployment was killed).
    for (op, urn, seq) in open {
        out.push(StepRec {
            op,
            name: urn.name().to_owned(),
            urn,
            start: seq,
            end: usize::MAX,
            failed: false,
        });
    }
    out
}

/// Whether `pattern` (`op|op name`) matches the label `op name`.
fn matches(pattern: &str, label: &str) -> bool {
    let (ops, name) = pattern.split_once(' ').unwrap_or((pattern, ""));
    let (op, actual_name) = label.split_once(' ').unwrap_or((label, ""));
    name == actual_name && ops.split('|').any(|o| o == op)
}

/// Compares multisets of labels; patterns may have alternatives.
fn compare_multiset(
    what: &str,
    expected: &[String],
    actual: &[String],
    problems: &mut Vec<String>,
) {
    let mut left: Vec<Option<&String>> = actual.iter().map(Some).collect();
    let mut missing = Vec::new();
    // Exact patterns first, so alternatives take what is left.
    let mut ordered: Vec<&String> = expected.iter().filter(|p| !p.contains('|')).collect();
    ordered.extend(expected.iter().filter(|p| p.contains('|')));
    for pattern in ordered {
        match left
            .iter_mut()
            .find(|slot| slot.is_some_and(|label| matches(pattern, label)))
        {
            Some(slot) => *slot = None,
            None => missing.push(pattern.clone()),
        }
    }
    let unexpected: Vec<&String> = left.into_iter().flatten().collect();
    if !missing.is_empty() || !unexpected.is_empty() {
        let mut sorted_actual = actual.to_vec();
        sorted_actual.sort();
        problems.push(format!(
            "{what}: missing {missing:?}, unexpected {unexpected:?} (actual: {sorted_actual:?})"
        ));
    }
}

fn json_of_yaml(value: &Yaml) -> Result<Json, String> {
    canon_yaml(value)
}

fn name_or_root(urn: &Urn) -> String {
    if is_root(urn) {
        "$stack".into()
    } else {
        urn.name().to_owned()
    }
}

/// A resource's fields, with URNs shortened to names.
fn resource_view(r: &ResourceState) -> Map<String, Json> {
    let mut m = Map::new();
    let names =
        |urns: &[Urn]| Json::Array(urns.iter().map(|u| Json::String(name_or_root(u))).collect());
    m.insert("urn".into(), Json::String(short_urn(&r.urn)));
    m.insert("type".into(), Json::String(r.resource_type.to_string()));
    m.insert("custom".into(), Json::Bool(r.custom));
    m.insert("id".into(), r.id.clone().map_or(Json::Null, Json::String));
    m.insert("inputs".into(), canon_map(&r.inputs));
    m.insert("outputs".into(), canon_map(&r.outputs));
    m.insert(
        "parent".into(),
        r.parent
            .as_ref()
            .map_or(Json::Null, |p| Json::String(name_or_root(p))),
    );
    m.insert("protect".into(), Json::Bool(r.protect));
    m.insert("delete".into(), Json::Bool(r.delete));
    m.insert(
        "pendingReplacement".into(),
        Json::Bool(r.pending_replacement),
    );
    m.insert("external".into(), Json::Bool(r.external));
    m.insert("dependencies".into(), names(&r.dependencies));
    m.insert(
        "propertyDependencies".into(),
        Json::Object(
            r.property_dependencies
                .iter()
                .map(|(k, v)| (k.clone(), names(v)))
                .collect(),
        ),
    );
    m.insert(
        "provider".into(),
        r.provider
            .as_ref()
            .map_or(Json::Null, |p| Json::String(p.urn.name().to_owned())),
    );
    m.insert(
        "providerId".into(),
        r.provider
            .as_ref()
            .map_or(Json::Null, |p| Json::String(p.id.clone())),
    );
    m.insert("retainOnDelete".into(), Json::Bool(r.retain_on_delete));
    m.insert(
        "deletedWith".into(),
        r.deleted_with
            .as_ref()
            .map_or(Json::Null, |u| Json::String(name_or_root(u))),
    );
    m.insert(
        "initErrors".into(),
        Json::Array(r.init_errors.iter().cloned().map(Json::String).collect()),
    );
    m.insert(
        "aliases".into(),
        Json::Array(
            r.aliases
                .iter()
                .map(|u| Json::String(short_urn(u)))
                .collect(),
        ),
    );
    m.insert(
        "importId".into(),
        r.import_id.clone().map_or(Json::Null, Json::String),
    );
    m.insert(
        "additionalSecretOutputs".into(),
        Json::Array(
            r.additional_secret_outputs
                .iter()
                .cloned()
                .map(Json::String)
                .collect(),
        ),
    );
    m.insert(
        "customTimeouts".into(),
        r.custom_timeouts.as_deref().map_or(Json::Null, |t| {
            let mut o = Map::new();
            for (k, v) in [
                ("create", t.create),
                ("update", t.update),
                ("delete", t.delete),
            ] {
                if v != 0.0 {
                    o.insert(
                        k.into(),
                        canon(&cairn_engine::value::PropertyValue::Number(v)),
                    );
                }
            }
            Json::Object(o)
        }),
    );
    m.insert(
        "ignoreChanges".into(),
        Json::Array(r.ignore_changes.iter().cloned().map(Json::String).collect()),
    );
    m.insert(
        "replaceOnChanges".into(),
        Json::Array(
            r.replace_on_changes
                .iter()
                .cloned()
                .map(Json::String)
                .collect(),
        ),
    );
    m
}

/// Resources keyed by name (`#delete` for delete-marked copies, `#2` for further copies).
fn keyed(snapshot: &Snapshot) -> IndexMap<String, &ResourceState> {
    let mut out = IndexMap::new();
    for r in &snapshot.resources {
        let mut key = name_or_root(&r.urn);
        if r.delete {
            key.push_str("#delete");
        }
        let mut candidate = key.clone();
        let mut n = 1;
        while out.contains_key(&candidate) {
            n += 1;
            candidate = format!("{key}#{n}");
        }
        out.insert(candidate, r);
    }
    out
}

fn as_set(value: &Json) -> BTreeSet<String> {
    match value {
        Json::Array(items) => items
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .collect(),
        _ => BTreeSet::new(),
    }
}

fn check_fields(
    what: &str,
    expected: &Mapping,
    actual: &Map<String, Json>,
    problems: &mut Vec<String>,
) {
    for (field, want) in expected {
        let Some(field) = field.as_str() else {
            problems.push(format!("{what}: field names must be strings"));
            continue;
        };
        let (base_field, subset) = match field {
            "inputsInclude" => ("inputs", true),
            "outputsInclude" => ("outputs", true),
            other => (other, false),
        };
        let Some(have) = actual.get(base_field) else {
            problems.push(format!("{what}: unknown field {field}"));
            continue;
        };
        let want_json = match json_of_yaml(want) {
            Ok(j) => j,
            Err(e) => {
                problems.push(format!("{what}.{field}: {e}"));
                continue;
            }
        };
        let ok = match base_field {
            _ if subset => match (&want_json, have) {
                (Json::Object(w), Json::Object(h)) => w.iter().all(|(k, v)| h.get(k) == Some(v)),
                _ => false,
            },
            "dependencies" => as_set(&want_json) == as_set(have),
            "propertyDependencies" => match (&want_json, have) {
                (Json::Object(w), Json::Object(h)) => {
                    w.len() == h.len()
                        && w.iter()
                            .all(|(k, v)| h.get(k).is_some_and(|hv| as_set(v) == as_set(hv)))
                }
                _ => false,
            },
            "initErrors" => match (&want_json, have) {
                (Json::Array(w), Json::Array(h)) => {
                    w.len() == h.len()
                        && w.iter().all(|want| {
                            let want = want.as_str().unwrap_or_default();
                            h.iter()
                                .any(|e| e.as_str().is_some_and(|e| e.contains(want)))
                        })
                }
                _ => false,
            },
            _ => &want_json == have,
        };
        if !ok {
            problems.push(format!(
                "{what}.{field}: expected {}, actual {}",
                show(&want_json),
                show(have)
            ));
        }
    }
}

fn check_resources(
    what: &str,
    expected: &IndexMap<String, Mapping>,
    snapshot: &Snapshot,
    exact: bool,
    problems: &mut Vec<String>,
) {
    let actual = keyed(snapshot);
    for (key, fields) in expected {
        match actual.get(key) {
            Some(r) => check_fields(
                &format!("{what} {key}"),
                fields,
                &resource_view(r),
                problems,
            ),
            None => problems.push(format!(
                "{what}: no resource {key} (have {:?})",
                actual.keys().collect::<Vec<_>>()
            )),
        }
    }
    if exact {
        let extra: Vec<&String> = actual
            .iter()
            .filter(|(k, r)| {
                !is_root(&r.urn) && !is_default_provider(&r.urn) && !expected.contains_key(*k)
            })
            .map(|(k, _)| k)
            .collect();
        if !extra.is_empty() {
            problems.push(format!("{what}: unexpected resources {extra:?}"));
        }
    }
}

fn check(
    expect: &Expect,
    result: Option<&Result<Outcome, DeployError>>,
    events: &[EngineEvent],
    world: &World,
    stored: &Snapshot,
    outcomes: &IndexMap<String, RegOutcome>,
    problems: &mut Vec<String>,
) {
    // The result.
    match (result, &expect.error) {
        (Some(Ok(_)), Some(want)) => problems.push(format!(
            "expected an error containing {want:?}, but it succeeded"
        )),
        (Some(Err(e)), None) => problems.push(format!("unexpected error: {e}")),
        (Some(Err(e)), Some(want)) => {
            let text = e.to_string();
            for want in std::iter::once(want).chain(&expect.error_contains) {
                if !text.contains(want.as_str()) {
                    problems.push(format!("the error does not contain {want:?}: {text}"));
                }
            }
        }
        _ => {}
    }
    let outcome = result.and_then(|r| r.as_ref().ok());

    // Steps.
    let steps = steps_of(events);
    let user_steps: Vec<&StepRec> = steps
        .iter()
        .filter(|s| !is_root(&s.urn) && !is_default_provider(&s.urn))
        .collect();
    let labels: Vec<String> = user_steps.iter().map(|s| s.label()).collect();
    if let Some(want) = &expect.steps {
        compare_multiset("steps", want, &labels, problems);
    }
    for want in &expect.steps_include {
        if !labels.iter().any(|l| matches(want, l)) {
            problems.push(format!("steps: no {want:?} (actual: {labels:?})"));
        }
    }
    for unwanted in &expect.steps_exclude {
        if labels.iter().any(|l| matches(unwanted, l)) {
            problems.push(format!(
                "steps: unexpected {unwanted:?} (actual: {labels:?})"
            ));
        }
    }
    if let Some(want) = &expect.provider_steps {
        let provider_labels: Vec<String> = steps
            .iter()
            .filter(|s| is_default_provider(&s.urn))
            .map(StepRec::label)
            .collect();
        compare_multiset("default provider steps", want, &provider_labels, problems);
    }
    if let Some(want) = &expect.failed_steps {
        let failed: Vec<String> = steps
            .iter()
            .filter(|s| s.failed)
            .map(StepRec::label)
            .collect();
        compare_multiset("failed steps", want, &failed, problems);
    }
    for [first, second] in &expect.order {
        let a: Vec<&StepRec> = steps
            .iter()
            .filter(|s| matches(first, &s.label()))
            .collect();
        let b: Vec<&StepRec> = steps
            .iter()
            .filter(|s| matches(second, &s.label()))
            .collect();
        if a.is_empty() || b.is_empty() {
            problems.push(format!(
                "order {first:?} before {second:?}: {} did not happen",
                if a.is_empty() { first } else { second }
            ));
            continue;
        }
        let a_end = a.iter().map(|s| s.end).max().unwrap_or_default();
        let b_start = b.iter().map(|s| s.start).min().unwrap_or_default();
        if a_end >= b_start {
            problems.push(format!(
                "order: {first:?} must finish before {second:?} starts (events {a_end} vs {b_start}; steps in order: {:?})",
                steps.iter().map(|s| format!("{}@{}..{}", s.label(), s.start, s.end)).collect::<Vec<_>>()
            ));
        }
    }

    // Provider calls.
    let calls = lock(&world.calls).clone();
    let call_labels: Vec<String> = calls.iter().map(|c| c.label()).collect();
    if let Some(want) = &expect.calls {
        let (methods, want): (Vec<String>, &Vec<String>) = match want {
            CallsExpect::List(list) => (
                ["create", "read", "update", "delete"]
                    .map(String::from)
                    .to_vec(),
                list,
            ),
            CallsExpect::Of { methods, expect } => (methods.clone(), expect),
        };
        let chosen: Vec<String> = calls
            .iter()
            .filter(|c| methods.iter().any(|m| m == c.method))
            .map(|c| c.label())
            .collect();
        compare_multiset(&format!("calls of {methods:?}"), want, &chosen, problems);
    }
    for want in &expect.calls_include {
        if !call_labels.iter().any(|l| matches(want, l)) {
            problems.push(format!("calls: no {want:?} (actual: {call_labels:?})"));
        }
    }
    for unwanted in &expect.calls_exclude {
        if call_labels.iter().any(|l| matches(unwanted, l)) {
            problems.push(format!(
                "calls: unexpected {unwanted:?} (actual: {call_labels:?})"
            ));
        }
    }
    for [first, second] in &expect.call_order {
        let a: Vec<usize> = (0..calls.len())
            .filter(|&i| matches(first, &call_labels[i]))
            .collect();
        let b: Vec<usize> = (0..calls.len())
            .filter(|&i| matches(second, &call_labels[i]))
            .collect();
        match (a.iter().max(), b.iter().min()) {
            (Some(a), Some(b)) if a < b => {}
            (Some(_), Some(_)) => problems.push(format!(
                "call order: every {first:?} must come before any {second:?} (calls: {call_labels:?})"
            )),
            _ => problems.push(format!(
                "call order {first:?} before {second:?}: a call did not happen (calls: {call_labels:?})"
            )),
        }
    }
    for detail in &expect.call_details {
        let Some(call) = calls.iter().find(|c| matches(&detail.call, &c.label())) else {
            problems.push(format!(
                "call details: no call {:?} (calls: {call_labels:?})",
                detail.call
            ));
            continue;
        };
        let what = format!("call {:?}", detail.call);
        if let Some(p) = detail.preview
            && p != call.preview
        {
            problems.push(format!("{what}: preview {} (expected {p})", call.preview));
        }
        if let Some(t) = detail.timeout
            && t != call.timeout
        {
            problems.push(format!("{what}: timeout {} (expected {t})", call.timeout));
        }
        for (field, want, have) in [
            ("config", &detail.config, &call.config),
            ("news", &detail.news, &call.news),
            ("olds", &detail.olds, &call.olds),
        ] {
            let Some(want) = want else { continue };
            let mut view = Map::new();
            view.insert("inputs".to_owned(), canon_map(have));
            let mut fields = Mapping::new();
            fields.insert(
                Yaml::String("inputsInclude".into()),
                Yaml::Mapping(want.clone()),
            );
            check_fields(&format!("{what} {field}"), &fields, &view, problems);
        }
    }

    // State.
    if let Some(want) = &expect.state {
        check_resources("state", want, stored, true, problems);
    }
    if let Some(want) = &expect.state_include {
        check_resources("state", want, stored, false, problems);
    }
    if !expect.state_exclude.is_empty() {
        let actual = keyed(stored);
        for key in &expect.state_exclude {
            if actual.contains_key(key) {
                problems.push(format!("state: {key} should not be there"));
            }
        }
    }
    if let Some(want) = &expect.planned {
        match outcome {
            Some(o) => check_resources("planned", want, &o.snapshot, false, problems),
            None => problems.push("planned: the deployment returned no snapshot".into()),
        }
    }
    if let Some(want) = &expect.pending {
        let actual: Vec<String> = stored
            .pending_operations
            .iter()
            .map(|op| {
                let kind = serde_json::to_value(op.kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                format!("{kind} {}", op.resource.urn.name())
            })
            .collect();
        compare_multiset("pending operations", want, &actual, problems);
    }

    // Cloud.
    if let Some(want) = &expect.cloud {
        let cloud = lock(&world.cloud).clone();
        let have: BTreeSet<&String> = cloud.keys().collect();
        let wanted: BTreeSet<&String> = want.keys().collect();
        if have != wanted {
            problems.push(format!("cloud: expected IDs {wanted:?}, actual {have:?}"));
        }
        for (id, fields) in want {
            let (Some(fields), Some(entry)) = (fields, cloud.get(id)) else {
                continue;
            };
            let mut view = Map::new();
            view.insert("outputs".into(), canon_map(&entry.outputs));
            let mut check = Mapping::new();
            check.insert(
                Yaml::String("outputsInclude".into()),
                Yaml::Mapping(fields.clone()),
            );
            check_fields(&format!("cloud {id}"), &check, &view, problems);
        }
    }

    // Stack outputs.
    if let Some(want) = &expect.outputs {
        match json_of_yaml(&Yaml::Mapping(want.clone())) {
            Ok(want) => {
                let root = stored.resources.iter().find(|r| is_root(&r.urn));
                let stored_outputs = root.map(|r| canon_map(&r.outputs)).unwrap_or(Json::Null);
                if stored_outputs != want {
                    problems.push(format!(
                        "stored stack outputs: expected {}, actual {}",
                        show(&want),
                        show(&stored_outputs)
                    ));
                }
                if let Some(o) = outcome {
                    let returned = canon_map(&o.outputs);
                    if returned != want {
                        problems.push(format!(
                            "returned stack outputs: expected {}, actual {}",
                            show(&want),
                            show(&returned)
                        ));
                    }
                }
            }
            Err(e) => problems.push(format!("outputs: {e}")),
        }
    }

    // Registrations.
    for (handle, want) in &expect.registrations {
        let Some(have) = outcomes.get(handle) else {
            problems.push(format!("registration {handle}: no outcome recorded"));
            continue;
        };
        let ok = match (want.as_str(), have) {
            ("ok", RegOutcome::Ok) => true,
            ("skipped", RegOutcome::Skipped(_)) => true,
            (text, RegOutcome::Failed(e)) if text != "ok" && text != "skipped" => e.contains(text),
            _ => false,
        };
        if !ok {
            problems.push(format!(
                "registration {handle}: expected {want:?}, actual {have:?}"
            ));
        }
    }

    // Diagnostics.
    let diagnostics = |severity: Severity| -> Vec<String> {
        events
            .iter()
            .filter_map(|e| match e {
                EngineEvent::Diagnostic {
                    severity: s,
                    message,
                    ..
                } if *s == severity => Some(message.clone()),
                // Policy violations: advisory ones warn, mandatory ones are errors.
                EngineEvent::PolicyViolation {
                    pack, violation, ..
                } if (violation.enforcement
                    == cairn_engine::deploy::analyzer::Enforcement::Mandatory)
                    == (severity == Severity::Error) =>
                {
                    Some(format!(
                        "{}/{}: {}",
                        pack.name, violation.policy, violation.message
                    ))
                }
                _ => None,
            })
            .collect()
    };
    let warnings = diagnostics(Severity::Warning);
    for want in &expect.warnings {
        if !warnings.iter().any(|w| w.contains(want.as_str())) {
            problems.push(format!(
                "no warning containing {want:?} (warnings: {warnings:?})"
            ));
        }
    }
    let errors = diagnostics(Severity::Error);
    for want in &expect.error_diagnostics {
        if !errors.iter().any(|w| w.contains(want.as_str())) {
            problems.push(format!(
                "no error diagnostic containing {want:?} (errors: {errors:?})"
            ));
        }
    }

    if let Some(want) = expect.max_concurrent {
        let have = world
            .max_in_flight
            .load(std::sync::atomic::Ordering::SeqCst);
        if have != want {
            problems.push(format!(
                "at most {want} provider operations should have run at once, saw {have}"
            ));
        }
    }

    if let Some(want) = &expect.changes {
        match outcome {
            Some(o) => {
                for (op, count) in want {
                    let have = if op == "same" {
                        o.unchanged
                    } else {
                        o.changes
                            .iter()
                            .find(|(k, _)| k.label() == op)
                            .map_or(0, |(_, v)| *v)
                    };
                    if have != *count {
                        problems.push(format!("summary: {op} = {have}, expected {count}"));
                    }
                }
            }
            None => problems.push("changes: the deployment returned no outcome".into()),
        }
    }
}
