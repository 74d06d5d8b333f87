//! What the display's tests share: a writer they can read back, a display writing to it, and
//! the steps and events they render.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn_engine::asset::{Archive, ArchiveMember, Asset};
use cairn_engine::deploy::events::{
    ChangeKind, EngineEvent, Operation, PropertyChange, Severity, StepInfo, StepOp,
};
use cairn_engine::path::PropertyPath;
use cairn_engine::urn::ROOT_STACK_TYPE;
use cairn_engine::{OutputValue, PropertyValue, Urn, props};

use super::{Display, DisplayOptions};

/// Every step op, so a test can check it covers them all.
pub(super) const ALL_OPS: [StepOp; 13] = [
    StepOp::Same,
    StepOp::Create,
    StepOp::Update,
    StepOp::Delete,
    StepOp::Replace,
    StepOp::CreateReplacement,
    StepOp::DeleteReplaced,
    StepOp::Read,
    StepOp::ReadReplacement,
    StepOp::Refresh,
    StepOp::Import,
    StepOp::ImportReplacement,
    StepOp::Discard,
];

/// A writer tests can read back.
#[derive(Clone, Default)]
pub(super) struct Buf(Arc<Mutex<Vec<u8>>>);

impl Write for Buf {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(data);
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Buf {
    pub(super) fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

/// A display in the mode the flags choose, with property diffs shown, writing to a buffer.
pub(super) fn display_with_diffs(
    json: bool,
    interactive: bool,
    show_secrets: bool,
) -> (Display, Buf) {
    let buf = Buf::default();
    let display = Display::new(DisplayOptions {
        json,
        interactive,
        show_secrets,
        show_sames: true,
        show_diff: true,
        ..DisplayOptions::plain(Box::new(buf.clone()))
    });
    (display, buf)
}

/// A display in the mode the flags choose, writing to a buffer.
pub(super) fn display(
    json: bool,
    interactive: bool,
    show_secrets: bool,
    show_sames: bool,
) -> (Display, Buf) {
    let buf = Buf::default();
    let display = Display::new(DisplayOptions {
        json,
        interactive,
        show_secrets,
        show_sames,
        ..DisplayOptions::plain(Box::new(buf.clone()))
    });
    (display, buf)
}

/// A `--json` display (the preview digest when `preview`, else the engine-event stream) with
/// these engine-event settings, writing to a buffer.
pub(super) fn json_display(
    preview: bool,
    show_sames: bool,
    events: super::engine_events::EventSettings,
) -> (Display, Buf) {
    let buf = Buf::default();
    let display = Display::new(DisplayOptions {
        json: true,
        show_sames,
        preview,
        events,
        ..DisplayOptions::plain(Box::new(buf.clone()))
    });
    (display, buf)
}

/// The recorded state of a custom resource `urn`, with these inputs and outputs.
pub(super) fn state(
    urn: &Urn,
    inputs: cairn_engine::PropertyMap,
    outputs: cairn_engine::PropertyMap,
) -> cairn_engine::deploy::events::StepState {
    let token = cairn_engine::urn::TypeToken::parse(urn.qualified_type()).unwrap();
    cairn_engine::deploy::events::StepState::new(cairn_engine::state::ResourceState {
        id: Some(format!("{}-id", urn.name())),
        inputs,
        outputs,
        ..cairn_engine::state::ResourceState::new(urn.clone(), token, true)
    })
}

/// An archive of one text asset, `a.txt`.
pub(super) fn one_member_archive() -> Archive {
    Archive::from_assets(
        [(
            "a.txt".to_owned(),
            ArchiveMember::Asset(Asset::from_text("a")),
        )]
        .into_iter()
        .collect(),
    )
}

/// A URN in stack `dev` of project `proj`.
pub(super) fn urn(ty: &str, name: &str) -> Urn {
    Urn::parse(&format!("urn:pulumi:dev::proj::{ty}::{name}")).unwrap()
}

/// A step of a custom resource, not a preview, without changes.
pub(super) fn step(op: StepOp, ty: &str, name: &str) -> StepInfo {
    StepInfo {
        op,
        urn: urn(ty, name),
        resource_type: ty.to_owned(),
        custom: true,
        parent: None,
        old: None,
        new: None,
        changes: vec![],
        replace_keys: vec![],
        preview: false,
    }
}

pub(super) fn pet(op: StepOp) -> StepInfo {
    step(op, "random:index:RandomPet", "pet")
}

pub(super) fn change(
    path: &str,
    kind: ChangeKind,
    old: Option<PropertyValue>,
    new: Option<PropertyValue>,
) -> PropertyChange {
    PropertyChange {
        path: PropertyPath::parse(path).unwrap(),
        kind,
        replace: false,
        old,
        new,
    }
}

pub(super) fn secret(v: impl Into<PropertyValue>) -> PropertyValue {
    PropertyValue::secret(v.into())
}

pub(super) fn output(value: Option<PropertyValue>, secret: bool) -> PropertyValue {
    PropertyValue::Output(Box::new(OutputValue {
        value: value.map(Box::new),
        secret,
        dependencies: vec![],
    }))
}

pub(super) fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

pub(super) fn summary_event(
    preview: bool,
    changes: &[(StepOp, usize)],
    unchanged: usize,
    succeeded: bool,
) -> EngineEvent {
    EngineEvent::Summary {
        operation: Operation::Update,
        preview,
        changes: changes.iter().copied().collect(),
        unchanged,
        duration: ms(1234),
        succeeded,
        interrupted: false,
    }
}

/// A small update: create, update with a diff, replace, delete, a diagnostic, stack outputs.
pub(super) fn update_events(preview: bool) -> Vec<EngineEvent> {
    let stack = step(StepOp::Same, ROOT_STACK_TYPE, "proj-dev");
    let create = pet(StepOp::Create);
    let mut update = step(StepOp::Update, "aws:s3:Bucket", "logs");
    update.changes = vec![
        change(
            "tags.env",
            ChangeKind::Update,
            Some("dev".into()),
            Some("prod".into()),
        ),
        change("size", ChangeKind::Add, None, Some(3i64.into())),
        change("legacy", ChangeKind::Delete, Some(true.into()), None),
        change(
            "password",
            ChangeKind::Update,
            Some(secret("hunter2")),
            Some(secret("hunter3")),
        ),
    ];
    let mut replace = step(StepOp::Replace, "aws:ec2:Instance", "web");
    replace.changes = vec![PropertyChange {
        replace: true,
        ..change(
            "ami",
            ChangeKind::Update,
            Some("ami-1".into()),
            Some(PropertyValue::Computed),
        )
    }];
    replace.replace_keys = vec!["ami".into()];
    let create_replacement = StepInfo {
        op: StepOp::CreateReplacement,
        ..replace.clone()
    };
    let delete_replaced = StepInfo {
        op: StepOp::DeleteReplaced,
        ..replace.clone()
    };
    let delete = step(StepOp::Delete, "aws:s3:Bucket", "old");
    let mut steps = vec![
        stack.clone(),
        create,
        update,
        create_replacement,
        replace,
        delete,
        delete_replaced,
    ];
    for s in &mut steps {
        s.preview = preview;
    }
    let mut events = vec![EngineEvent::Started {
        operation: Operation::Update,
        preview,
    }];
    for (i, s) in steps.into_iter().enumerate() {
        events.push(EngineEvent::StepStarted(s.clone()));
        events.push(EngineEvent::StepFinished {
            step: s,
            duration: ms(100 * (i as u64 + 1)),
        });
    }
    events.push(EngineEvent::Diagnostic {
        severity: Severity::Warning,
        urn: Some(urn("aws:s3:Bucket", "logs")),
        message: "versioning is disabled".into(),
    });
    events.push(EngineEvent::Diagnostic {
        severity: Severity::Debug,
        urn: None,
        message: "debug chatter".into(),
    });
    events.push(EngineEvent::Outputs {
        urn: urn("aws:s3:Bucket", "logs"),
        outputs: props! {"arn" => "arn:logs"},
    });
    events.push(EngineEvent::Outputs {
        urn: stack.urn.clone(),
        outputs: props! {"petName" => "brave-ant", "dbPassword" => secret("hunter2")},
    });
    events.push(summary_event(
        preview,
        &[
            (StepOp::Create, 1),
            (StepOp::Update, 1),
            (StepOp::Replace, 1),
            (StepOp::CreateReplacement, 1),
            (StepOp::DeleteReplaced, 1),
            (StepOp::Delete, 1),
        ],
        1,
        true,
    ));
    events
}
