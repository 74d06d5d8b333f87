//! `cairn-grpc`: the bridge between Cairn's engine and the gRPC plugin protocol (`pulumirpc`).
//!
//! The only crate that knows protobuf. Generated code lives in [`proto`]; [`convert`] maps
//! `google.protobuf.Struct` values to and from the engine's `PropertyValue`.

pub mod convert;

/// Code generated from `proto/` by tonic and prost.
pub mod proto {
    #![allow(clippy::all, clippy::pedantic, missing_docs)]

    /// The `pulumirpc` package.
    pub mod pulumirpc {
        tonic::include_proto!("pulumirpc");
    }

    /// The standard health-check service.
    pub mod health {
        tonic::include_proto!("grpc.health.v1");
    }
}
