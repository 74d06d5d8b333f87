//! A plugin that answers with raw bytes of its choosing, which no well-typed server can send:
//! strings that are not UTF-8, messages that are not protobuf at all. Each is refused naming
//! the plugin and the method, and the next call works.

use std::collections::HashMap;
use std::sync::Arc;
use std::task::{Context, Poll};

use cairn_engine::deploy::provider::{CheckRequest, DiffRequest, Provider, ProviderError};
use cairn_engine::urn::Urn;
use cairn_engine::value::PropertyMap;
use cairn_grpc::proto::pulumirpc as rpc;
use prost::Message;
use prost::bytes::{Buf, BufMut};
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::codegen::http;

use crate::support::*;

/// Passes bytes through unchanged.
#[derive(Default)]
struct RawCodec;

struct Raw;

impl Codec for RawCodec {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = Raw;
    type Decoder = Raw;

    fn encoder(&mut self) -> Raw {
        Raw
    }

    fn decoder(&mut self) -> Raw {
        Raw
    }
}

impl Encoder for Raw {
    type Item = Vec<u8>;
    type Error = Status;

    fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for Raw {
    type Item = Vec<u8>;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, Status> {
        Ok(Some(src.copy_to_bytes(src.remaining()).to_vec()))
    }
}

/// Answers each method (by its gRPC path's last part) with fixed bytes; the bytes for a method
/// can be replaced once by `once`.
#[derive(Clone)]
struct RawPlugin {
    replies: Arc<HashMap<&'static str, Vec<u8>>>,
    once: Arc<std::sync::Mutex<HashMap<&'static str, Vec<u8>>>>,
}

impl tonic::server::NamedService for RawPlugin {
    const NAME: &'static str = "pulumirpc.ResourceProvider";
}

struct Reply(Option<Vec<u8>>);

impl tonic::server::UnaryService<Vec<u8>> for Reply {
    type Response = Vec<u8>;
    type Future = std::future::Ready<Result<tonic::Response<Vec<u8>>, Status>>;

    fn call(&mut self, _request: tonic::Request<Vec<u8>>) -> Self::Future {
        std::future::ready(match self.0.take() {
            Some(bytes) => Ok(tonic::Response::new(bytes)),
            None => Err(Status::unimplemented("not here")),
        })
    }
}

impl tonic::codegen::Service<http::Request<tonic::body::Body>> for RawPlugin {
    type Response = http::Response<tonic::body::Body>;
    type Error = std::convert::Infallible;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Self::Response, Self::Error>> + Send>,
    >;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<tonic::body::Body>) -> Self::Future {
        let method = request.uri().path().rsplit('/').next().unwrap_or_default();
        let once = self
            .once
            .lock()
            .unwrap()
            .iter()
            .find(|(k, _)| **k == method)
            .map(|(k, _)| *k);
        let bytes = match once {
            Some(k) => self.once.lock().unwrap().remove(k),
            None => self
                .replies
                .iter()
                .find(|(k, _)| **k == method)
                .map(|(_, v)| v.clone()),
        };
        Box::pin(async move {
            let mut grpc = tonic::server::Grpc::new(RawCodec);
            Ok(grpc.unary(Reply(bytes), request).await)
        })
    }
}

/// Bytes of a protobuf message whose field `tag` is a length-delimited `value` (a string field
/// given bytes that are not UTF-8, say).
fn field(tag: u32, value: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    prost::encoding::bytes::encode(tag, &value.to_vec(), &mut out);
    out
}

fn urn() -> Urn {
    Urn::parse("urn:pulumi:dev::proj::hostile:index:Thing::thing").unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_garbage_is_refused_naming_the_method() {
    let honest: HashMap<&'static str, Vec<u8>> = [
        (
            "GetPluginInfo",
            rpc::PluginInfo {
                version: "1.0.0".into(),
            }
            .encode_to_vec(),
        ),
        (
            "Configure",
            rpc::ConfigureResponse {
                accept_secrets: true,
                ..Default::default()
            }
            .encode_to_vec(),
        ),
        (
            "Check",
            rpc::CheckResponse {
                inputs: Some(fields(vec![("size", num(1.0))])),
                failures: vec![],
            }
            .encode_to_vec(),
        ),
        ("Diff", rpc::DiffResponse::default().encode_to_vec()),
    ]
    .into_iter()
    .collect();
    let plugin = RawPlugin {
        replies: Arc::new(honest),
        once: Arc::default(),
    };
    let running = serve(tonic::transport::Server::builder().add_service(plugin.clone())).await;
    let provider = provider_at(running.port).await;

    // Configure answered with bytes that are not a protobuf message.
    plugin
        .once
        .lock()
        .unwrap()
        .insert("Configure", b"\xff\xff\xff\xff garbage".to_vec());
    let err = provider
        .configure(PropertyMap::new(), false)
        .await
        .unwrap_err();
    let ProviderError::Failed { message, partial } = err else {
        panic!("{err:?}")
    };
    assert!(partial.is_none());
    assert!(
        message.starts_with(
            "hostile plugin Configure: the plugin's reply is not a valid Configure response: failed to decode Protobuf message: "
        ),
        "{message}"
    );
    provider.configure(PropertyMap::new(), false).await.unwrap();

    // A Diff whose replace keys (a string field, tag 1) are not UTF-8.
    plugin
        .once
        .lock()
        .unwrap()
        .insert("Diff", field(1, b"tags\xc3\x28"));
    let inputs = PropertyMap::new();
    let request = DiffRequest {
        urn: &urn(),
        id: "thing-1",
        old_inputs: &inputs,
        old_outputs: &inputs,
        news: &inputs,
        ignore_changes: &[],
    };
    let err = provider.diff(request).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "hostile plugin Diff: the plugin's reply is not a valid Diff response: failed to decode Protobuf message: DiffResponse.replaces: invalid string value: data is not UTF-8 encoded"
    );
    provider.diff(request).await.unwrap();

    // A Check whose inputs hold a key that is not UTF-8 (Struct.fields is a map<string, Value>).
    let entry = [field(1, b"k\xff"), field(2, &num(1.0).encode_to_vec())].concat();
    let inputs_struct = field(1, &entry);
    plugin
        .once
        .lock()
        .unwrap()
        .insert("Check", field(1, &inputs_struct));
    let (urn, nothing) = (urn(), PropertyMap::new());
    let check = CheckRequest {
        urn: &urn,
        olds: &nothing,
        news: &nothing,
        random_seed: &[],
    };
    let err = provider.check(check).await.unwrap_err().to_string();
    assert!(
        err.starts_with(
            "hostile plugin Check: the plugin's reply is not a valid Check response: failed to decode Protobuf message: "
        ) && err.ends_with("invalid string value: data is not UTF-8 encoded"),
        "{err}"
    );
    assert_eq!(
        provider.check(check).await.unwrap().inputs["size"],
        cairn_engine::PropertyValue::Number(1.0)
    );
}
