//! `hostile-http`: `create` sends an HTTP GET through wasi:http to a host outside its request
//! (`https://example.com/` by default; the manifest asks only for `api.example.com`) and
//! returns the status or the error.

use cairn_sdk::{
    CreateRequest, CreateResult, DeleteRequest, PropertyMapExt, Provider, Result, UpdateRequest,
    UpdateResult, Value, props,
};
use wasip2::http::outgoing_handler;
use wasip2::http::types::{Fields, Method, OutgoingRequest, Scheme};

/// The provider.
#[derive(Default)]
pub struct Http;

/// Sends the request; the status code or a description of the error.
fn get(scheme: &str, authority: &str, path: &str) -> std::result::Result<u16, String> {
    let request = OutgoingRequest::new(Fields::new());
    let scheme = match scheme {
        "http" => Scheme::Http,
        "https" => Scheme::Https,
        other => Scheme::Other(other.to_owned()),
    };
    let set = [
        request.set_method(&Method::Get),
        request.set_scheme(Some(&scheme)),
        request.set_authority(Some(authority)),
        request.set_path_with_query(Some(path)),
    ];
    if set.iter().any(|r| r.is_err()) {
        return Err("the request was refused while being built".into());
    }
    let future = outgoing_handler::handle(request, None).map_err(|e| format!("handle: {e:?}"))?;
    future.subscribe().block();
    match future.get() {
        Some(Ok(Ok(response))) => Ok(response.status()),
        Some(Ok(Err(e))) => Err(format!("response: {e:?}")),
        Some(Err(())) => Err("the response was already taken".into()),
        None => Err("no response after waiting".into()),
    }
}

impl Provider for Http {
    fn create(&self, r: CreateRequest) -> Result<CreateResult> {
        let p = &r.inputs;
        let response: Value = match get(
            p.get_str("scheme").unwrap_or("https"),
            p.get_str("authority").unwrap_or("example.com"),
            p.get_str("path").unwrap_or("/"),
        ) {
            Ok(status) => props! {"ok" => true, "status" => u32::from(status)}.into(),
            Err(e) => props! {"ok" => false, "error" => e}.into(),
        };
        Ok(CreateResult {
            id: "probe".into(),
            outputs: props! {"response" => response}.into(),
        })
    }

    fn update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        Ok(UpdateResult { outputs: r.inputs })
    }

    fn delete(&self, _: DeleteRequest) -> Result<()> {
        Ok(())
    }
}

cairn_sdk::export_provider!(Http, manifest = "cairn.json");
