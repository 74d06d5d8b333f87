//! `Engine.Log` from a hostile plugin or program: messages capped one by one and per served
//! engine, with one note for what was dropped; a root URN that is not one is refused.

use std::sync::Arc;

use cairn_engine::deploy::events::{EngineEvent, Severity};
use cairn_engine::limits::MAX_MESSAGE_BYTES;
use cairn_grpc::proto::pulumirpc as rpc;
use cairn_grpc::proto::pulumirpc::engine_client::EngineClient;
use tonic::transport::Channel;

use crate::support::Events;

/// An engine served for `events`, and a client of it that may send messages of any size.
async fn serve(events: Arc<Events>) -> (cairn_grpc::Served, EngineClient<Channel>) {
    let served = cairn_grpc::serve_engine(events, None).await.unwrap();
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{}", served.target()))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let engine = EngineClient::new(channel).max_encoding_message_size(usize::MAX);
    (served, engine)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_messages_are_capped_per_call_and_per_engine() {
    let events = Arc::new(Events::default());
    let (_served, mut engine) = serve(events.clone()).await;
    let log = |message: String, urn: &str| rpc::LogRequest {
        severity: rpc::LogSeverity::Info as i32,
        message,
        urn: urn.to_owned(),
        stream_id: 0,
        ephemeral: false,
    };

    // A URN that is not one is quoted with its control characters made visible.
    engine
        .log(log("hello".into(), "not a urn\x1b]0;title\x07"))
        .await
        .unwrap();
    // One message over the limit is cut.
    let big = "m".repeat(MAX_MESSAGE_BYTES * 4);
    engine.log(log(big, "")).await.unwrap();
    // A flood: 200 messages of 64 KiB, far over the 8 MiB a served engine shows.
    for _ in 0..200 {
        engine
            .log(log("f".repeat(MAX_MESSAGE_BYTES), ""))
            .await
            .unwrap();
    }
    // The engine still answers.
    let root = engine
        .get_root_resource(rpc::GetRootResourceRequest {})
        .await
        .unwrap();
    assert_eq!(root.into_inner().urn, "");

    let events = events.0.lock().unwrap();
    let diagnostics: Vec<(&Severity, &String)> = events
        .iter()
        .filter_map(|e| match e {
            EngineEvent::Diagnostic {
                severity, message, ..
            } => Some((severity, message)),
            _ => None,
        })
        .collect();
    assert_eq!(
        diagnostics[0].1, "[not a urn\\x1b]0;title\\x07] hello",
        "{:?}",
        diagnostics[0]
    );
    assert_eq!(
        diagnostics[1].1,
        &format!(
            "{}… [{} more bytes dropped]",
            "m".repeat(MAX_MESSAGE_BYTES),
            MAX_MESSAGE_BYTES * 3
        )
    );
    let shown: usize = diagnostics.iter().map(|(_, m)| m.len()).sum();
    let limit = cairn_grpc::wire::log_bytes() as usize;
    assert!(shown <= limit + 1024, "{shown} bytes shown");
    let notes: Vec<_> = diagnostics
        .iter()
        .filter(|(_, m)| m.contains("the log limit"))
        .collect();
    assert_eq!(
        notes,
        [&(
            &Severity::Warning,
            &"log messages sent to the engine exceeded 8 MiB (the log limit; CAIRN_GRPC_LOG_MB raises it): further lines are dropped".to_owned()
        )]
    );
    assert_eq!(
        diagnostics.last().unwrap().1,
        notes[0].1,
        "nothing is shown after the note"
    );
}

/// Pulumi's Python SDK sends a debug message or two per registration: a large program's
/// debug chatter (shown by no display) must not use up the budget that its warnings and errors
/// are shown within.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debug_messages_do_not_use_up_the_log_budget() {
    let events = Arc::new(Events::default());
    let (_served, mut engine) = serve(events.clone()).await;
    let log = |severity: rpc::LogSeverity, message: String| rpc::LogRequest {
        severity: severity as i32,
        message,
        urn: "urn:pulumi:dev::proj::bench:index:Comp::c1".to_owned(),
        stream_id: 0,
        ephemeral: false,
    };
    // More than the 8 MiB a served engine shows, all of it debug.
    for _ in 0..200 {
        engine
            .log(log(rpc::LogSeverity::Debug, "d".repeat(MAX_MESSAGE_BYTES)))
            .await
            .unwrap();
    }
    engine
        .log(log(rpc::LogSeverity::Warning, "the warning".into()))
        .await
        .unwrap();
    // Answered in order on one connection: the warning has been handled.
    engine
        .get_root_resource(rpc::GetRootResourceRequest {})
        .await
        .unwrap();

    let events = events.0.lock().unwrap();
    let diagnostics: Vec<(&Severity, &String)> = events
        .iter()
        .filter_map(|e| match e {
            EngineEvent::Diagnostic {
                severity, message, ..
            } => Some((severity, message)),
            _ => None,
        })
        .collect();
    let shown: Vec<(&Severity, &str)> = diagnostics
        .iter()
        .map(|(severity, message)| (*severity, &message[..message.len().min(100)]))
        .collect();
    assert_eq!(
        shown,
        [(&Severity::Warning, "the warning")],
        "only the warning, and no note of a limit"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_root_resource_that_is_not_a_urn_is_refused() {
    let (_served, mut engine) = serve(Arc::new(Events::default())).await;
    let status = engine
        .set_root_resource(rpc::SetRootResourceRequest {
            urn: "urn:pulumi:dev::proj::pulumi:pulumi:Stack::x\x1b[2J".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert!(
        status.message().starts_with("urn: invalid URN"),
        "{}",
        status.message()
    );
    let root = "urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev";
    engine
        .set_root_resource(rpc::SetRootResourceRequest { urn: root.into() })
        .await
        .unwrap();
    assert_eq!(
        engine
            .get_root_resource(rpc::GetRootResourceRequest {})
            .await
            .unwrap()
            .into_inner()
            .urn,
        root
    );
}
