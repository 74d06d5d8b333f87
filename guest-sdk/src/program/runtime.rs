//! The program's event loop and its link to the host's monitor.
//!
//! Requests go to the host at once and return handles; [`run`] runs the user's `main` (which
//! declares resources), then repeatedly asks the host for completions and runs whatever was
//! waiting on them (which may declare more), until nothing is outstanding. Then it sends the
//! stack outputs and reports the first error, if any. Waiting for everything before failing
//! leaves the state consistent: every request the engine accepted has finished.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;

use indexmap::IndexMap;

pub(crate) use super::output::when_all;
use super::output::{Known, Output, Resolved};
use super::{Context, Error};
use crate::value::{PropertyMap, Value};

/// How a host request ended.
#[cfg_attr(not(target_family = "wasm"), allow(dead_code))]
pub(crate) enum Outcome {
    /// A registration or read: the resource's URN, ID and outputs.
    Resource {
        urn: String,
        id: Option<String>,
        outputs: PropertyMap,
    },
    /// An invoke or call.
    Outputs(PropertyMap),
    Failed(String),
}

type Handler = Box<dyn FnOnce(Outcome)>;

#[derive(Default)]
struct Runtime {
    handlers: HashMap<u32, Handler>,
    /// The first error; the program fails with it.
    error: Option<String>,
    exports: IndexMap<String, Output<Value>>,
}

thread_local! {
    static RUNTIME: RefCell<Runtime> = RefCell::new(Runtime::default());
}

/// Records an error that fails the program (the first one wins).
pub(crate) fn record_error(message: &str) {
    RUNTIME.with(|rt| {
        let mut rt = rt.borrow_mut();
        if rt.error.is_none() {
            rt.error = Some(message.to_owned());
        }
    });
}

/// Runs `handler` with the outcome of the host request `handle`.
#[cfg_attr(not(target_family = "wasm"), allow(dead_code))]
pub(crate) fn on_complete(handle: u32, handler: impl FnOnce(Outcome) + 'static) {
    RUNTIME.with(|rt| rt.borrow_mut().handlers.insert(handle, Box::new(handler)));
}

/// Adds a stack output.
pub(crate) fn export(name: String, value: Output<Value>) {
    RUNTIME.with(|rt| rt.borrow_mut().exports.insert(name, value));
}

/// Runs a program: `main`, then the event loop, then the stack outputs.
pub fn run(main: impl FnOnce(&Context) -> Result<(), Error>) -> Result<(), String> {
    let ctx = Context::from_host();
    if let Err(e) = main(&ctx) {
        record_error(&e.to_string());
    }
    drain();
    let exports = RUNTIME.with(|rt| std::mem::take(&mut rt.borrow_mut().exports));
    if !exports.is_empty() {
        let root = ctx.root_urn().to_owned();
        when_all(exports.values().cloned().collect(), move |settled| {
            let mut outputs = PropertyMap::new();
            for (name, r) in exports.keys().zip(settled) {
                match property_value(r) {
                    Ok(v) => {
                        outputs.insert(name.clone(), v);
                    }
                    Err(e) => {
                        record_error(&format!("stack output {name}: {e}"));
                        return;
                    }
                }
            }
            if let Err(e) = host::register_outputs(&root, &outputs) {
                record_error(&format!("setting the stack outputs: {e}"));
            }
        });
        drain();
    }
    match RUNTIME.with(|rt| rt.borrow_mut().error.take()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Waits for completions and dispatches them until nothing is outstanding.
fn drain() {
    loop {
        let done = host::wait();
        if done.is_empty() {
            return;
        }
        for (handle, outcome) in done {
            let handler = RUNTIME.with(|rt| rt.borrow_mut().handlers.remove(&handle));
            if let Some(handler) = handler {
                handler(outcome);
            }
        }
    }
}

/// A resolved output as a property value for the engine: secrets wrapped, unknowns as
/// unknown; a failed output is an error.
pub(crate) fn property_value(r: Resolved<Value>) -> Result<Value, Rc<str>> {
    let value = match r.known {
        Known::Value(v) => v,
        Known::Unknown => Value::Unknown,
        Known::Failed(e) => return Err(e),
    };
    Ok(if r.secret && !matches!(value, Value::Unknown) {
        Value::secret(value)
    } else {
        value
    })
}

/// The first failure among resolved outputs.
pub(crate) fn first_failure(settled: &[Resolved<Value>]) -> Option<Rc<str>> {
    settled.iter().find_map(|r| match &r.known {
        Known::Failed(e) => Some(e.clone()),
        _ => None,
    })
}

/// The union of resolved outputs' dependencies.
pub(crate) fn dependencies(settled: &[Resolved<Value>]) -> BTreeSet<String> {
    settled
        .iter()
        .flat_map(|r| r.deps.iter().cloned())
        .collect()
}

/// The host's monitor and context, through the component's imports. Outside a component
/// (native unit tests) there is no host: requests fail and nothing is outstanding.
pub(crate) mod host {
    use super::Outcome;

    /// The deployment the program runs in.
    #[derive(Debug, Clone, Default)]
    pub struct Deployment {
        pub project: String,
        pub stack: String,
        pub organization: String,
        pub dry_run: bool,
        pub root_urn: String,
    }

    #[cfg(target_family = "wasm")]
    mod imp {
        use super::{Deployment, Outcome};
        use crate::bindings::cairn::deploy::types as wt;
        use crate::program_bindings::cairn::deploy::{context as wc, monitor as wm};
        use crate::value::{PropertyMap, Value};
        use crate::wire::{decode, decode_map, encode_map};

        pub use wm::{
            Alias, CustomTimeouts, ReadResourceRequest, RegisterResourceRequest, ResourceOptions,
        };

        pub fn deployment() -> Deployment {
            let d = wc::deployment();
            Deployment {
                project: d.project,
                stack: d.stack,
                organization: d.organization,
                dry_run: d.dry_run,
                root_urn: d.root_urn,
            }
        }

        pub fn config() -> Vec<(String, Value)> {
            wc::config()
                .into_iter()
                .filter_map(|(k, v)| decode(v).ok().map(|v| (k, v)))
                .collect()
        }

        pub fn encode(map: &PropertyMap) -> wt::Value {
            encode_map(map)
        }

        pub fn register(request: &RegisterResourceRequest) -> u32 {
            wm::register_resource(request)
        }

        pub fn read(request: &ReadResourceRequest) -> u32 {
            wm::read_resource(request)
        }

        pub fn invoke(
            token: &str,
            args: &PropertyMap,
            provider: Option<String>,
            version: Option<String>,
        ) -> u32 {
            wm::invoke(&wm::InvokeRequest {
                token: token.to_owned(),
                args: encode_map(args),
                provider,
                version,
            })
        }

        pub fn register_outputs(urn: &str, outputs: &PropertyMap) -> Result<(), String> {
            wm::register_resource_outputs(urn, &encode_map(outputs))
        }

        pub fn wait() -> Vec<(u32, Outcome)> {
            wm::wait()
                .into_iter()
                .map(|c| {
                    let outcome = match c.outcome {
                        wm::Outcome::State(s) => match decode_map(s.outputs) {
                            Ok(outputs) => Outcome::Resource {
                                urn: s.urn,
                                id: s.id,
                                outputs,
                            },
                            Err(e) => Outcome::Failed(format!("the host sent bad outputs: {e}")),
                        },
                        wm::Outcome::Outputs(o) => match decode_map(o.outputs) {
                            Ok(outputs) => Outcome::Outputs(outputs),
                            Err(e) => Outcome::Failed(format!("the host sent bad outputs: {e}")),
                        },
                        wm::Outcome::Failed(message) => Outcome::Failed(message),
                    };
                    (c.handle, outcome)
                })
                .collect()
        }
    }

    #[cfg(target_family = "wasm")]
    pub use imp::*;

    #[cfg(not(target_family = "wasm"))]
    mod imp {
        //! Native builds (unit tests) have no host.
        use super::{Deployment, Outcome};
        use crate::value::{PropertyMap, Value};

        pub fn deployment() -> Deployment {
            Deployment {
                project: "test".into(),
                stack: "test".into(),
                organization: "organization".into(),
                dry_run: false,
                root_urn: "urn:pulumi:test::test::pulumi:pulumi:Stack::test-test".into(),
            }
        }

        pub fn config() -> Vec<(String, Value)> {
            Vec::new()
        }

        pub fn register_outputs(_urn: &str, _outputs: &PropertyMap) -> Result<(), String> {
            Err("there is no host outside a component".into())
        }

        pub fn wait() -> Vec<(u32, Outcome)> {
            Vec::new()
        }
    }

    #[cfg(not(target_family = "wasm"))]
    pub use imp::*;
}
