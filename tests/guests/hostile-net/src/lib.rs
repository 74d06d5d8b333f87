//! `hostile-net`: `create` opens a TCP socket to `127.0.0.1:9` (wasi:sockets through `std::net`)
//! and resolves `localhost`, and returns what happened. Sockets are never a grantable
//! capability, so both must fail.

use std::net::{TcpStream, ToSocketAddrs};

use cairn_sdk::{
    CreateRequest, CreateResult, DeleteRequest, PropertyMapExt, Provider, Result, UpdateRequest,
    UpdateResult, Value, props,
};

/// The provider.
#[derive(Default)]
pub struct Net;

/// `{ok: true, value}` or `{ok: false, value: <error text>}`.
fn outcome(result: std::io::Result<String>) -> Value {
    match result {
        Ok(v) => props! {"ok" => true, "value" => v}.into(),
        Err(e) => props! {"ok" => false, "value" => e.to_string()}.into(),
    }
}

impl Provider for Net {
    fn create(&self, r: CreateRequest) -> Result<CreateResult> {
        let address = r.inputs.get_str("address").unwrap_or("127.0.0.1:9");
        let connect = TcpStream::connect(address).map(|s| format!("connected: {s:?}"));
        let lookup = ("localhost", 9)
            .to_socket_addrs()
            .map(|addrs| addrs.map(|a| a.to_string()).collect::<Vec<_>>().join(","));
        Ok(CreateResult {
            id: "probe".into(),
            outputs: props! {"connect" => outcome(connect), "lookup" => outcome(lookup)}.into(),
        })
    }

    fn update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        Ok(UpdateResult { outputs: r.inputs })
    }

    fn delete(&self, _: DeleteRequest) -> Result<()> {
        Ok(())
    }
}

cairn_sdk::export_provider!(Net, manifest = "cairn.json");
