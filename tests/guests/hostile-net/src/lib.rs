//! `hostile-net`: `create` tries the network through wasi:sockets (`std::net`) in the way its
//! `mode` input says, and returns what happened instead of failing, so a test sees both what
//! the guest got and what the host recorded:
//!
//! * `connect`: connect to `address` (default `127.0.0.1:9`), send `send` if given and read
//!   the reply to the end. Without a `mode`: that, and resolve `localhost`.
//! * `lookup`: resolve `name`.
//! * `listen`: listen on `0.0.0.0:0` (and accept one connection if that worked).
//! * `bind`: bind a socket to `address` (a TcpListener: bind, then listen).
//! * `udp`: bind a UDP socket and send a DNS-sized datagram to `address`.
//! * `many`: open up to `count` connections to `address` at once, keeping them all open;
//!   returns how many opened and the first error.
//! * `silent`: connect to `address`, send a line, and wait for a reply that never comes.
//!
//! The manifest requests `*:*`; the user's grant decides.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs, UdpSocket};

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

fn lookup(name: &str) -> std::io::Result<String> {
    (name, 9).to_socket_addrs().map(|addrs| {
        addrs
            .map(|a| a.ip().to_string())
            .collect::<Vec<_>>()
            .join(",")
    })
}

fn exchange(address: &str, send: Option<&str>) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(address)?;
    if let Some(send) = send {
        stream.write_all(send.as_bytes())?;
        stream.shutdown(std::net::Shutdown::Write)?;
    }
    let mut reply = String::new();
    stream.read_to_string(&mut reply)?;
    Ok(format!("connected; reply {reply:?}"))
}

fn many(address: &str, count: usize) -> Value {
    let mut open = Vec::new();
    let mut first_error = String::new();
    for _ in 0..count {
        match TcpStream::connect(address) {
            Ok(stream) => open.push(stream),
            Err(e) => {
                first_error = e.to_string();
                break;
            }
        }
    }
    props! {"opened" => open.len() as f64, "error" => first_error}.into()
}

impl Provider for Net {
    fn create(&self, r: CreateRequest) -> Result<CreateResult> {
        let address = r.inputs.get_str("address").unwrap_or("127.0.0.1:9");
        let outputs = match r.inputs.get_str("mode").unwrap_or_default() {
            "connect" => props! {"connect" => outcome(exchange(address, r.inputs.get_str("send")))},
            "lookup" => {
                props! {"lookup" => outcome(lookup(r.inputs.get_str("name").unwrap_or("localhost")))}
            }
            "listen" => {
                let listen = TcpListener::bind("0.0.0.0:0").and_then(|l| {
                    let local = l.local_addr()?;
                    l.set_nonblocking(true)?;
                    Ok(format!(
                        "listening on {local}; accept: {:?}",
                        l.accept().map(|(_, a)| a)
                    ))
                });
                props! {"listen" => outcome(listen)}
            }
            "bind" => {
                let bind =
                    TcpListener::bind(address).map(|l| format!("bound {:?}", l.local_addr()));
                props! {"bind" => outcome(bind)}
            }
            "udp" => {
                let udp = UdpSocket::bind("0.0.0.0:0")
                    .and_then(|s| s.send_to(&[0u8; 32], address))
                    .map(|n| format!("sent {n} bytes"));
                props! {"udp" => outcome(udp)}
            }
            "many" => {
                let count = r.inputs.get_f64("count").unwrap_or(1000.0) as usize;
                props! {"many" => many(address, count)}
            }
            "silent" => {
                let silent = TcpStream::connect(address).and_then(|mut s| {
                    s.write_all(b"hello\n")?;
                    let mut buf = [0u8; 16];
                    let n = s.read(&mut buf)?;
                    Ok(format!("read {n} bytes"))
                });
                props! {"silent" => outcome(silent)}
            }
            _ => props! {
                "connect" => outcome(exchange(address, r.inputs.get_str("send"))),
                "lookup" => outcome(lookup("localhost")),
            },
        };
        Ok(CreateResult {
            id: "probe".into(),
            outputs: outputs.into(),
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
