//! `probe`: the wasm host's test provider. `create` of `probe:index:Thing` echoes its inputs
//! plus `configured` (the last `configure` inputs, or null) and `instance` (a random number
//! fixed per instance), after acting on optional inputs: `sleepMs` (sleep), `spinMs` (busy
//! loop), `log` (host log), `print` / `eprint` (stdout / stderr), `panic` (panic with the
//! text), `fail` (return an error; `failDelete`: `delete` does), `env` (read a variable into `envValue`), `http` (GET a URL
//! through wasi:http into `httpStatus` / `httpError`), `leakKiB` (allocate and never free, as a
//! leaking language runtime would). `construct` of `probe:index:Widget`
//! registers a `probe:index:Thing` child named `<name>-child` and sets outputs; `invoke` of
//! `probe:index:whoami` returns the identity and configuration.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use cairn_sdk::{
    ConstructRequest, ConstructResult, CreateRequest, CreateResult, DeleteRequest, Error,
    InvokeRequest, InvokeResult, PropertyMap, PropertyMapExt, Provider, Result, UpdateRequest,
    UpdateResult, Value, engine, log, props,
};

/// The provider: what `configure` received.
#[derive(Default)]
pub struct Probe {
    configured: Option<PropertyMap>,
}

/// A random number fixed for this instance (each instance has its own memory).
fn instance() -> i64 {
    static ID: OnceLock<i64> = OnceLock::new();
    *ID.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(1);
        // 52 bits: exact as a double.
        (h.finish() >> 12) as i64
    })
}

fn http_get(url: &str) -> std::result::Result<u16, String> {
    use wasip2::http::outgoing_handler;
    use wasip2::http::types::{Fields, Method, OutgoingRequest, Scheme};
    let (scheme, rest) = url.split_once("://").ok_or("no scheme")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let request = OutgoingRequest::new(Fields::new());
    let scheme = if scheme == "http" {
        Scheme::Http
    } else {
        Scheme::Https
    };
    let _ = request.set_method(&Method::Get);
    let _ = request.set_scheme(Some(&scheme));
    let _ = request.set_authority(Some(authority));
    let _ = request.set_path_with_query(Some(path));
    let future = outgoing_handler::handle(request, None).map_err(|e| format!("{e:?}"))?;
    future.subscribe().block();
    match future.get() {
        Some(Ok(Ok(response))) => Ok(response.status()),
        Some(Ok(Err(e))) => Err(format!("{e:?}")),
        _ => Err("no response".into()),
    }
}

impl Provider for Probe {
    fn configure(&mut self, inputs: PropertyMap, _preview: bool) -> Result<()> {
        if inputs.get_bool("reject") == Some(true) {
            return Err(Error::failed("configuration rejected"));
        }
        self.configured = Some(inputs);
        Ok(())
    }

    fn create(&self, r: CreateRequest) -> Result<CreateResult> {
        let p = &r.inputs;
        if let Some(kib) = p.get_i64("leakKiB") {
            // Touched, so the pages are really the guest's.
            let leaked: &'static mut [u8] = vec![1u8; kib.max(0) as usize * 1024].leak();
            std::hint::black_box(leaked);
        }
        if let Some(ms) = p.get_i64("sleepMs") {
            std::thread::sleep(Duration::from_millis(ms.max(0) as u64));
        }
        if let Some(ms) = p.get_i64("spinMs") {
            let until = Instant::now() + Duration::from_millis(ms.max(0) as u64);
            while Instant::now() < until {
                std::hint::spin_loop();
            }
        }
        if let Some(text) = p.get_str("log") {
            log::info(&r.urn, text);
        }
        if let Some(text) = p.get_str("print") {
            println!("{text}");
        }
        if let Some(text) = p.get_str("eprint") {
            eprintln!("{text}");
        }
        if let Some(text) = p.get_str("panic") {
            panic!("{text}");
        }
        if let Some(text) = p.get_str("fail") {
            return Err(Error::failed(text.to_owned()));
        }
        let mut outputs = p.clone();
        if let Some(name) = p.get_str("env") {
            let v = std::env::var(name).map(Value::from).unwrap_or(Value::Null);
            outputs.insert("envValue".into(), v);
        }
        if let Some(url) = p.get_str("http") {
            match http_get(url) {
                Ok(status) => outputs.insert("httpStatus".into(), Value::from(i64::from(status))),
                Err(e) => outputs.insert("httpError".into(), Value::from(e)),
            };
        }
        outputs.insert(
            "configured".into(),
            self.configured
                .clone()
                .map(Value::from)
                .unwrap_or(Value::Null),
        );
        outputs.insert("instance".into(), Value::from(instance()));
        Ok(CreateResult {
            id: format!("thing-{}", r.name()),
            outputs,
        })
    }

    fn update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        Ok(UpdateResult { outputs: r.inputs })
    }

    fn delete(&self, r: DeleteRequest) -> Result<()> {
        match r.old_inputs.get_str("failDelete") {
            Some(text) => Err(Error::failed(text.to_owned())),
            None => Ok(()),
        }
    }

    fn construct(&self, r: ConstructRequest) -> Result<ConstructResult> {
        let me = engine::register_resource(&engine::RegisterResource {
            resource_type: r.resource_type.clone(),
            name: r.name.clone(),
            custom: false,
            parent: r.parent.clone(),
            ..Default::default()
        })?;
        let child = engine::register_resource(&engine::RegisterResource {
            resource_type: "probe:index:Thing".into(),
            name: format!("{}-child", r.name),
            custom: true,
            parent: Some(me.urn.clone()),
            inputs: r.inputs.clone().into_map(),
            ..Default::default()
        })?;
        let outputs = props! {
            "childId" => child.id.clone().unwrap_or_default(),
            "childUrn" => child.urn.clone(),
        };
        engine::register_resource_outputs(&me.urn, &outputs)?;
        Ok(ConstructResult {
            urn: Some(me.urn),
            state: outputs.into(),
            ..Default::default()
        })
    }

    fn invoke(&self, r: InvokeRequest) -> Result<InvokeResult> {
        if r.token != "probe:index:whoami" {
            return Err(Error::failed(format!("unknown function {:?}", r.token)));
        }
        Ok(InvokeResult {
            outputs: props! {
                "instance" => instance(),
                "configured" => self.configured.clone().map(Value::from).unwrap_or(Value::Null),
            }
            .into(),
            failures: vec![],
        })
    }
}

cairn_sdk::export_provider!(Probe, manifest = "cairn.json");
