//! Tests of stack renames, moves and tag rules, ported from Pulumi's own (each names its
//! original) plus Cairn's additions.

use serde_json::json;

use super::*;
use crate::state::{Operation, OperationKind};
use crate::value::{OutputValue, ResourceReference};

fn urn(text: &str) -> Urn {
    Urn::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

const SRC: &str = "urn:pulumi:sourceStack::test::";
const DST: &str = "urn:pulumi:destStack::test::";

fn src(rest: &str) -> String {
    format!("{SRC}{rest}")
}

fn dst(rest: &str) -> String {
    format!("{DST}{rest}")
}

const DEST: StackId<'static> = StackId {
    project: "test",
    stack: "destStack",
};

/// A resource under construction.
struct R(ResourceState);

/// A component (as Pulumi's tests make them: no ID); its type is its URN's.
fn res(text: &str) -> R {
    let urn = urn(text);
    let token = TypeToken::parse(urn.resource_type()).unwrap();
    R(Resource::new(urn, token, false))
}

fn custom(text: &str, id: &str) -> R {
    let mut r = res(text);
    r.0.custom = true;
    r.0.id = Some(id.into());
    r
}

impl R {
    fn parent(mut self, parent: &str) -> R {
        self.0.parent = Some(urn(parent));
        self
    }
    fn uses(mut self, provider: &str, id: &str) -> R {
        self.0.provider = Some(ProviderReference {
            urn: urn(provider),
            id: id.into(),
        });
        self
    }
    fn deps(mut self, targets: &[&str]) -> R {
        self.0.dependencies = targets.iter().map(|t| urn(t)).collect();
        self
    }
    fn prop_deps(mut self, key: &str, targets: &[&str]) -> R {
        self.0
            .property_dependencies
            .insert(key.into(), targets.iter().map(|t| urn(t)).collect());
        self
    }
    fn deleted_with(mut self, target: &str) -> R {
        self.0.deleted_with = Some(urn(target));
        self
    }
    fn input(mut self, key: &str, value: &str) -> R {
        self.0
            .inputs
            .insert(key.into(), PropertyValue::String(value.into()));
        self
    }
}

fn snapshot(resources: Vec<R>) -> Snapshot {
    let mut snapshot = Snapshot::empty(None);
    snapshot.resources = resources.into_iter().map(|r| r.0).collect();
    snapshot
}

fn urns(snapshot: &Snapshot) -> Vec<String> {
    snapshot
        .resources
        .iter()
        .map(|r| r.urn.to_string())
        .collect()
}

/// Each resource as `urn | parent | provider reference` (empty when absent).
fn rows(snapshot: &Snapshot) -> Vec<String> {
    snapshot
        .resources
        .iter()
        .map(|r| {
            let parent = r.parent.as_ref().map(Urn::to_string).unwrap_or_default();
            let provider = r
                .provider
                .as_ref()
                .map(|p| format!("{}::{}", p.urn, p.id))
                .unwrap_or_default();
            format!("{} | {parent} | {provider}", r.urn)
        })
        .collect()
}

fn row(urn: &str, parent: &str, provider: &str) -> String {
    format!("{urn} | {parent} | {provider}")
}

// ---------------------------------------------------------------------------------------------
// state move

struct MoveCase {
    /// The Pulumi test this case follows (pkg/cmd/pulumi/state/state_move_test.go), or what
    /// Cairn adds.
    original: &'static str,
    source: Vec<R>,
    dest: Vec<R>,
    moved: Vec<String>,
    include_parents: bool,
    /// The source's URNs and the destination's rows after the move, or a part of the error.
    expect: Result<(Vec<String>, Vec<String>), &'static str>,
}

fn provider_a() -> String {
    src("pulumi:providers:a::default_1_0_0")
}

fn dest_provider_a() -> String {
    dst("pulumi:providers:a::default_1_0_0")
}

fn dest_root() -> String {
    dst("pulumi:pulumi:Stack::test-destStack")
}

fn source_root() -> String {
    src("pulumi:pulumi:Stack::test-sourceStack")
}

fn move_cases() -> Vec<MoveCase> {
    let p = provider_a();
    let pd = dest_provider_a();
    let pd_ref = format!("{pd}::provider_id");
    let root = dest_root();
    let sroot = source_root();
    let leaf = || {
        vec![
            custom(&p, "provider_id"),
            res(&src("a:b:c::name")).uses(&p, "provider_id"),
        ]
    };
    let with_child = || {
        let mut resources = leaf();
        resources.push(
            res(&src("a:b:c$a:b:c::name2"))
                .uses(&p, "provider_id")
                .parent(&src("a:b:c::name")),
        );
        resources
    };
    let with_roots = || {
        vec![
            res(&sroot),
            custom(&p, "provider_id").parent(&sroot),
            res(&src("a:b:c::name"))
                .uses(&p, "provider_id")
                .parent(&sroot),
        ]
    };
    let moved_with_child = vec![
        row(&root, "", ""),
        row(&pd, &root, ""),
        row(&dst("a:b:c::name"), &root, &pd_ref),
        row(&dst("a:b:c$a:b:c::name2"), &dst("a:b:c::name"), &pd_ref),
    ];
    vec![
        MoveCase {
            original: "TestMoveLeafResource (and TestEmptyDestStack)",
            source: leaf(),
            dest: vec![],
            moved: vec![src("a:b:c::name")],
            include_parents: false,
            expect: Ok((
                vec![p.clone()],
                vec![
                    row(&root, "", ""),
                    row(&pd, &root, ""),
                    row(&dst("a:b:c::name"), &root, &pd_ref),
                ],
            )),
        },
        MoveCase {
            original: "TestChildrenAreBeingMoved",
            source: with_child(),
            dest: vec![],
            moved: vec![src("a:b:c::name")],
            include_parents: false,
            expect: Ok((vec![p.clone()], moved_with_child.clone())),
        },
        MoveCase {
            original: "TestParentsAreBeingMoved",
            source: with_child(),
            dest: vec![],
            moved: vec![src("a:b:c$a:b:c::name2")],
            include_parents: true,
            expect: Ok((vec![p.clone()], moved_with_child)),
        },
        MoveCase {
            original: "Cairn: without include_parents, the parent stays",
            source: with_child(),
            dest: vec![],
            moved: vec![src("a:b:c$a:b:c::name2")],
            include_parents: false,
            expect: Ok((
                vec![p.clone(), src("a:b:c::name")],
                vec![
                    row(&root, "", ""),
                    row(&pd, &root, ""),
                    row(&dst("a:b:c::name2"), &root, &pd_ref),
                ],
            )),
        },
        MoveCase {
            original: "TestMoveWithExistingProvider",
            source: vec![
                custom(&p, "provider_id").input("key", "value"),
                res("urn:pulumi:destStack::test::a:b:c::name").uses(&p, "provider_id"),
            ],
            dest: vec![custom(&pd, "other_provider_id").input("key", "different value")],
            moved: vec![dst("a:b:c::name")],
            include_parents: false,
            expect: Err(
                "provider urn:pulumi:destStack::test::pulumi:providers:a::default_1_0_0 already exists in the destination stack",
            ),
        },
        MoveCase {
            original: "TestMoveProviderWithSameInputs",
            source: vec![
                custom(&p, "provider_id").input("key", "value"),
                res(&src("a:b:c::name")).uses(&p, "provider_id"),
            ],
            dest: vec![custom(&pd, "another_provider_id").input("key", "value")],
            moved: vec![src("a:b:c::name")],
            include_parents: false,
            expect: Ok((
                vec![p.clone()],
                vec![
                    row(&root, "", ""),
                    row(&pd, "", ""),
                    row(
                        &dst("a:b:c::name"),
                        &root,
                        &format!("{pd}::another_provider_id"),
                    ),
                ],
            )),
        },
        MoveCase {
            original: "TestMoveWithExistingResource",
            source: leaf(),
            dest: vec![
                custom(
                    &dst("pulumi:providers:a::default_1_0_1"),
                    "other_provider_id",
                ),
                res(&dst("a:b:c::name")).uses(
                    &dst("pulumi:providers:a::default_1_0_1"),
                    "other_provider_id",
                ),
            ],
            moved: vec![src("a:b:c::name")],
            include_parents: false,
            expect: Err(
                "resource urn:pulumi:destStack::test::a:b:c::name already exists in the destination stack",
            ),
        },
        MoveCase {
            original: "TestMoveRewritesQualifiedTypeWhenReparentingToRoot",
            source: vec![
                custom(&src("pulumi:providers:pkgA::default_1_0_0"), "provider_id"),
                res(&src("parentComponent::parent")),
                res(&src("parentComponent$targetComponent::component"))
                    .parent(&src("parentComponent::parent")),
                custom(
                    &src("parentComponent$targetComponent$pkgA:index:typB::child"),
                    "id2",
                )
                .uses(&src("pulumi:providers:pkgA::default_1_0_0"), "provider_id")
                .parent(&src("parentComponent$targetComponent::component")),
            ],
            dest: vec![],
            moved: vec![src("parentComponent$targetComponent::component")],
            include_parents: false,
            expect: Ok((
                vec![
                    src("pulumi:providers:pkgA::default_1_0_0"),
                    src("parentComponent::parent"),
                ],
                vec![
                    row(&root, "", ""),
                    row(&dst("pulumi:providers:pkgA::default_1_0_0"), &root, ""),
                    row(&dst("targetComponent::component"), &root, ""),
                    row(
                        &dst("targetComponent$pkgA:index:typB::child"),
                        &dst("targetComponent::component"),
                        &dst("pulumi:providers:pkgA::default_1_0_0::provider_id"),
                    ),
                ],
            )),
        },
        MoveCase {
            original: "TestEmptySourceStack",
            source: vec![],
            dest: vec![],
            moved: vec![src("a:b:c::not-there")],
            include_parents: false,
            expect: Err("the source stack has no resources"),
        },
        MoveCase {
            original: "TestMoveUnknownResource",
            source: with_child(),
            dest: vec![],
            moved: vec![src("a:b:c::not-there")],
            include_parents: false,
            expect: Err("no resources to move: none of the URNs given is in the source stack"),
        },
        MoveCase {
            original: "TestProviderIsReparented",
            source: with_roots(),
            dest: vec![],
            moved: vec![src("a:b:c::name")],
            include_parents: false,
            expect: Ok((
                vec![sroot.clone(), p.clone()],
                vec![
                    row(&root, "", ""),
                    row(&pd, &root, ""),
                    row(&dst("a:b:c::name"), &root, &pd_ref),
                ],
            )),
        },
        MoveCase {
            original: "TestMoveProvider",
            source: with_child(),
            dest: vec![],
            moved: vec![p.clone()],
            include_parents: false,
            expect: Err(
                "cannot move provider urn:pulumi:sourceStack::test::pulumi:providers:a::default_1_0_0",
            ),
        },
        MoveCase {
            original: "TestMoveRootStack",
            source: with_roots(),
            dest: vec![],
            moved: vec![sroot.clone()],
            include_parents: false,
            expect: Ok((
                vec![sroot.clone(), p.clone()],
                vec![
                    row(&root, "", ""),
                    row(&pd, &root, ""),
                    row(&dst("a:b:c::name"), &root, &pd_ref),
                ],
            )),
        },
        MoveCase {
            original: "TestProviderParentsAreTreatedAsProviders",
            source: vec![
                res(&sroot),
                custom(&p, "provider_id").parent(&sroot),
                res(&src("a:b:c::name")).uses(&p, "provider_id").parent(&p),
                res(&src("pulumi:providers:a$a:b:c::name2"))
                    .uses(&p, "provider_id")
                    .parent(&p),
            ],
            dest: vec![],
            moved: vec![src("a:b:c::name")],
            include_parents: true,
            expect: Ok((
                vec![
                    sroot.clone(),
                    p.clone(),
                    src("pulumi:providers:a$a:b:c::name2"),
                ],
                vec![
                    row(&root, "", ""),
                    row(&pd, &root, ""),
                    row(&dst("a:b:c::name"), &root, &pd_ref),
                ],
            )),
        },
        MoveCase {
            original: "TestMoveBreaksCopiedProviderDependenciesToRemainingSourceResources",
            source: vec![
                res(&sroot),
                res(&src("a:b:c::remaining")).parent(&sroot),
                custom(&p, "provider_id")
                    .parent(&sroot)
                    .deps(&[&src("a:b:c::remaining")]),
                res(&src("a:b:c::moveMe"))
                    .uses(&p, "provider_id")
                    .parent(&sroot),
            ],
            dest: vec![],
            moved: vec![src("a:b:c::moveMe")],
            include_parents: false,
            expect: Ok((
                vec![sroot.clone(), src("a:b:c::remaining"), p.clone()],
                vec![
                    row(&root, "", ""),
                    row(&pd, &root, ""),
                    row(&dst("a:b:c::moveMe"), &root, &pd_ref),
                ],
            )),
        },
        MoveCase {
            original: "Cairn: a provider whose parent would move is refused",
            source: vec![
                res(&src("my:index:Group::group")),
                custom(&src("my:index:Group$pulumi:providers:a::inner"), "inner_id")
                    .parent(&src("my:index:Group::group")),
            ],
            dest: vec![],
            moved: vec![src("my:index:Group::group")],
            include_parents: false,
            expect: Err(
                "cannot move urn:pulumi:sourceStack::test::my:index:Group::group: its child urn:pulumi:sourceStack::test::my:index:Group$pulumi:providers:a::inner is a provider",
            ),
        },
        MoveCase {
            original: "Cairn: an existing destination root is used",
            source: leaf(),
            dest: vec![res(&root), res(&dst("x:y:Z::other")).parent(&root)],
            moved: vec![src("a:b:c::name")],
            include_parents: false,
            expect: Ok((
                vec![p.clone()],
                vec![
                    row(&root, "", ""),
                    row(&dst("x:y:Z::other"), &root, ""),
                    row(&pd, &root, ""),
                    row(&dst("a:b:c::name"), &root, &pd_ref),
                ],
            )),
        },
    ]
}

#[test]
fn moves_follow_pulumi() {
    for case in move_cases() {
        let name = case.original;
        let mut source = snapshot(case.source);
        let mut dest = snapshot(case.dest);
        let (source_before, dest_before) = (source.clone(), dest.clone());
        let moved: Vec<Urn> = case.moved.iter().map(|u| urn(u)).collect();
        let result = move_resources(&mut source, &mut dest, DEST, &moved, case.include_parents);
        match (result, case.expect) {
            (Ok(_), Ok((source_urns, dest_rows))) => {
                assert_eq!(urns(&source), source_urns, "{name}: the source");
                assert_eq!(rows(&dest), dest_rows, "{name}: the destination");
            }
            (Err(err), Err(expected)) => {
                assert!(
                    err.to_string().contains(expected),
                    "{name}: {err}\nexpected: {expected}"
                );
                assert_eq!(source, source_before, "{name}: the source is unchanged");
                assert_eq!(dest, dest_before, "{name}: the destination is unchanged");
            }
            (Ok(report), Err(expected)) => {
                panic!("{name}: moved ({report:?}), expected the error {expected}")
            }
            (Err(err), Ok(_)) => panic!("{name}: {err}"),
        }
    }
}

/// After TestMoveResourceWithDependencies: references across the two stacks are cut and
/// reported (Pulumi prints them before asking for confirmation).
#[test]
fn dependencies_across_stacks_are_cut_and_reported() {
    let p = provider_a();
    let to_move = src("a:b:c::resToMove");
    let remaining = src("a:b:c::remainingDep");
    let mut source = snapshot(vec![
        custom(&p, "provider_id"),
        res(&remaining).uses(&p, "provider_id"),
        res(&to_move).uses(&p, "provider_id").deps(&[&remaining]),
        res(&src("a:b:c$a:b:c::movedChildURN"))
            .uses(&p, "provider_id")
            .parent(&to_move),
        res(&src("a:b:c$a:b:c::dependsOnMovedChildURN"))
            .uses(&p, "provider_id")
            .parent(&to_move)
            .deps(&[&src("a:b:c$a:b:c::movedChildURN")]),
        res(&src("a:b:c::deps"))
            .uses(&p, "provider_id")
            .deps(&[&to_move, &remaining]),
        res(&src("a:b:c::deletedWith"))
            .uses(&p, "provider_id")
            .deleted_with(&to_move),
        res(&src("a:b:c::propDeps"))
            .uses(&p, "provider_id")
            .prop_deps("key", &[&to_move, &remaining]),
    ]);
    let mut dest = Snapshot::empty(None);
    let report = move_resources(&mut source, &mut dest, DEST, &[urn(&to_move)], false).unwrap();

    let moved: Vec<String> = report.moved.iter().map(|m| m.from.to_string()).collect();
    assert_eq!(
        moved,
        [
            to_move.clone(),
            src("a:b:c$a:b:c::movedChildURN"),
            src("a:b:c$a:b:c::dependsOnMovedChildURN")
        ]
    );
    let shown = |broken: &[BrokenDependency]| -> Vec<String> {
        broken.iter().map(ToString::to_string).collect()
    };
    assert_eq!(
        shown(&report.broken_in_source),
        [
            format!("{} depends on {to_move}", src("a:b:c::deps")),
            format!("{} is deleted with {to_move}", src("a:b:c::deletedWith")),
            format!(
                "{} (property \"key\") depends on {to_move}",
                src("a:b:c::propDeps")
            ),
        ]
    );
    assert_eq!(
        shown(&report.broken_in_dest),
        [format!("{to_move} depends on {remaining}")]
    );
    assert_eq!(report.created_root, Some(urn(&dest_root())));
    assert_eq!(
        report.providers,
        [ProviderCopy {
            from: ProviderReference {
                urn: urn(&p),
                id: "provider_id".into()
            },
            to: ProviderReference {
                urn: urn(&dest_provider_a()),
                id: "provider_id".into()
            },
            outcome: ProviderOutcome::Copied,
        }]
    );

    assert_eq!(
        urns(&source),
        [
            p.clone(),
            remaining.clone(),
            src("a:b:c::deps"),
            src("a:b:c::deletedWith"),
            src("a:b:c::propDeps")
        ]
    );
    assert_eq!(source.resources[2].dependencies, [urn(&remaining)]);
    assert_eq!(source.resources[3].deleted_with, None);
    assert_eq!(
        source.resources[4].property_dependencies["key"],
        [urn(&remaining)]
    );

    assert_eq!(
        urns(&dest),
        [
            dest_root(),
            dest_provider_a(),
            dst("a:b:c::resToMove"),
            dst("a:b:c$a:b:c::movedChildURN"),
            dst("a:b:c$a:b:c::dependsOnMovedChildURN"),
        ]
    );
    assert!(dest.resources[2].dependencies.is_empty());
    assert_eq!(
        dest.resources[4].dependencies,
        [urn(&dst("a:b:c$a:b:c::movedChildURN"))],
        "a dependency within what moves follows it"
    );
}

/// After TestMovingProvidersWithSameID: a second move finds the provider the first copied.
#[test]
fn a_provider_copied_before_is_reused() {
    let p = provider_a();
    let sroot = source_root();
    let mut source = snapshot(vec![
        res(&sroot),
        custom(&p, "provider_id").parent(&sroot),
        res(&src("a:b:c::name"))
            .uses(&p, "provider_id")
            .parent(&sroot),
        res(&src("a:b:c::name2"))
            .uses(&p, "provider_id")
            .parent(&sroot),
    ]);
    let mut dest = Snapshot::empty(None);
    move_resources(
        &mut source,
        &mut dest,
        DEST,
        &[urn(&src("a:b:c::name"))],
        false,
    )
    .unwrap();
    assert_eq!(source.resources.len(), 3);
    assert_eq!(dest.resources.len(), 3);

    let report = move_resources(
        &mut source,
        &mut dest,
        DEST,
        &[urn(&src("a:b:c::name2"))],
        false,
    )
    .unwrap();
    assert_eq!(report.providers[0].outcome, ProviderOutcome::AlreadyThere);
    assert_eq!(report.created_root, None);
    assert_eq!(urns(&source), [sroot, p]);
    let root = dest_root();
    let pd_ref = format!("{}::provider_id", dest_provider_a());
    assert_eq!(
        rows(&dest),
        [
            row(&root, "", ""),
            row(&dest_provider_a(), &root, ""),
            row(&dst("a:b:c::name"), &root, &pd_ref),
            row(&dst("a:b:c::name2"), &root, &pd_ref),
        ]
    );
}

#[test]
fn urns_not_found_are_reported_when_others_move() {
    let p = provider_a();
    let mut source = snapshot(vec![
        custom(&p, "provider_id"),
        res(&src("a:b:c::name")).uses(&p, "provider_id"),
    ]);
    let mut dest = Snapshot::empty(None);
    let missing = urn(&src("a:b:c::missing"));
    let report = move_resources(
        &mut source,
        &mut dest,
        DEST,
        &[missing.clone(), urn(&src("a:b:c::name")), missing.clone()],
        false,
    )
    .unwrap();
    assert_eq!(report.not_found, std::slice::from_ref(&missing));
    assert_eq!(report.moved.len(), 1);

    let err = move_resources(
        &mut source,
        &mut dest,
        DEST,
        std::slice::from_ref(&missing),
        false,
    );
    assert_eq!(
        err,
        Err(MoveError::NothingToMove {
            not_found: vec![missing]
        })
    );
}

// ---------------------------------------------------------------------------------------------
// stack rename

const OLD: StackId<'static> = StackId {
    project: "test",
    stack: "test",
};

fn t(rest: &str) -> String {
    format!("urn:pulumi:test::test::{rest}")
}

/// After TestRenameStack (pkg/resource/edit/operations_test.go): the stack, then the stack and
/// the project.
#[test]
fn renaming_the_stack_then_the_project() {
    let p = t("pulumi:providers:a::p1");
    let mut s = snapshot(vec![
        custom(&p, "0"),
        res(&t("a:b:c::a")).uses(&p, "0"),
        res(&t("a:b:c::b")).uses(&p, "0"),
        res(&t("a:b:c::c")).uses(&p, "0"),
    ]);
    assert_eq!(rename_stack(&mut s, OLD, "new-stack", None), Ok(4));
    assert_eq!(
        rows(&s)[1],
        row(
            "urn:pulumi:new-stack::test::a:b:c::a",
            "",
            "urn:pulumi:new-stack::test::pulumi:providers:a::p1::0"
        )
    );
    let old = StackId {
        project: "test",
        stack: "new-stack",
    };
    assert_eq!(
        rename_stack(&mut s, old, "new-stack2", Some("new-project")),
        Ok(4)
    );
    assert_eq!(
        rows(&s)[3],
        row(
            "urn:pulumi:new-stack2::new-project::a:b:c::c",
            "",
            "urn:pulumi:new-stack2::new-project::pulumi:providers:a::p1::0"
        )
    );
    verify_integrity(&s).unwrap();
}

/// After TestRenameStack_RewritesProviderReferenceAndAuxiliaryFields: every reference of the
/// stack is renamed, references to another project are not.
#[test]
fn renaming_rewrites_every_reference() {
    let renamed = |rest: &str| format!("urn:pulumi:renamed::renamed-proj::{rest}");
    let provider = t("pulumi:providers:pkg::default");
    let foreign = "urn:pulumi:test::foreign::pkg:index:Foreign::foreign";
    let reference = |text: &str| {
        PropertyValue::ResourceReference(Box::new(ResourceReference {
            urn: urn(text),
            id: None,
            package_version: None,
        }))
    };
    let mut mine = res(&t("pkg:index:Mine::mine"))
        .uses(&provider, "provider-id")
        .deps(&[&t("pkg:index:Dep::dep"), foreign])
        .prop_deps("prop", &[&t("pkg:index:PropDep::prop-dep"), foreign])
        .deleted_with(&t("pkg:index:DeletedWith::deleted-with"))
        .0;
    mine.aliases = vec![urn(&t("pkg:index:Mine::old-name")), urn(foreign)];
    mine.inputs
        .insert("ref".into(), reference(&t("pkg:index:Ref::ref")));
    mine.inputs.insert(
        "secretRef".into(),
        PropertyValue::secret(reference(&t("pkg:index:Ref::ref"))),
    );
    mine.outputs.insert(
        "outputRef".into(),
        PropertyValue::Output(Box::new(OutputValue {
            value: Some(Box::new(reference(&t("pkg:index:Ref::ref")))),
            secret: false,
            dependencies: vec![urn(&t("pkg:index:Ref::ref")), urn(foreign)],
        })),
    );
    mine.extra.insert(
        REPLACE_WITH.into(),
        json!([t("pkg:index:Replacement::replacement")]),
    );
    mine.extra
        .insert(VIEW_OF.into(), json!(t("pkg:index:View::view")));
    let plaintext = json!({SIG_KEY: RESOURCE_REFERENCE_SIG, "urn": t("pkg:index:Ref::ref")});
    mine.extra.insert(
        REPLACEMENT_TRIGGER.into(),
        json!([
            {SIG_KEY: RESOURCE_REFERENCE_SIG, "urn": t("pkg:index:Ref::ref")},
            {SIG_KEY: SECRET_SIG, "plaintext": plaintext.to_string()},
            {SIG_KEY: SECRET_SIG, "plaintext": "not-json"},
        ]),
    );
    let mut s = Snapshot::empty(None);
    s.resources = vec![custom(&provider, "provider-id").0, mine];

    rename_stack(&mut s, OLD, "renamed", Some("renamed-proj")).unwrap();
    let mine = &s.resources[1];
    assert_eq!(mine.urn, urn(&renamed("pkg:index:Mine::mine")));
    assert_eq!(
        mine.provider,
        Some(ProviderReference {
            urn: urn(&renamed("pulumi:providers:pkg::default")),
            id: "provider-id".into()
        })
    );
    assert_eq!(
        mine.dependencies,
        [urn(&renamed("pkg:index:Dep::dep")), urn(foreign)]
    );
    assert_eq!(
        mine.property_dependencies["prop"],
        [urn(&renamed("pkg:index:PropDep::prop-dep")), urn(foreign)]
    );
    assert_eq!(
        mine.deleted_with,
        Some(urn(&renamed("pkg:index:DeletedWith::deleted-with")))
    );
    assert_eq!(
        mine.aliases,
        [urn(&renamed("pkg:index:Mine::old-name")), urn(foreign)]
    );
    let new_ref = renamed("pkg:index:Ref::ref");
    assert_eq!(mine.inputs["ref"], reference(&new_ref));
    assert_eq!(
        mine.inputs["secretRef"],
        PropertyValue::secret(reference(&new_ref))
    );
    assert_eq!(
        mine.outputs["outputRef"],
        PropertyValue::Output(Box::new(OutputValue {
            value: Some(Box::new(reference(&new_ref))),
            secret: false,
            dependencies: vec![urn(&new_ref), urn(foreign)],
        }))
    );
    assert_eq!(
        mine.extra[REPLACE_WITH],
        json!([renamed("pkg:index:Replacement::replacement")])
    );
    assert_eq!(mine.extra[VIEW_OF], json!(renamed("pkg:index:View::view")));
    let new_plaintext = json!({SIG_KEY: RESOURCE_REFERENCE_SIG, "urn": new_ref});
    assert_eq!(
        mine.extra[REPLACEMENT_TRIGGER],
        json!([
            {SIG_KEY: RESOURCE_REFERENCE_SIG, "urn": new_ref},
            {SIG_KEY: SECRET_SIG, "plaintext": new_plaintext.to_string()},
            {SIG_KEY: SECRET_SIG, "plaintext": "not-json"},
        ])
    );
}

/// After TestRenameStack_RewritesRootPendingParentAndNestedValues: the root stack resource
/// takes the new `<project>-<stack>` name, parents and pending operations follow, nested
/// references are found, and strings that look like URNs are left alone.
#[test]
fn renaming_the_root_parents_pending_operations_and_nested_values() {
    let renamed = |rest: &str| format!("urn:pulumi:renamed::renamed-proj::{rest}");
    let other_stack = "urn:pulumi:other::test::pkg:index:Other::other";
    let reference = |text: &str| {
        PropertyValue::ResourceReference(Box::new(ResourceReference {
            urn: urn(text),
            id: Some(Box::new(PropertyValue::String("id".into()))),
            package_version: None,
        }))
    };
    let mut child = res(&t("pkg:index:Parent$pkg:index:Child::child"))
        .parent(&t("pkg:index:Parent::parent"))
        .0;
    child.inputs.insert(
        "array".into(),
        PropertyValue::Array(vec![
            reference(&t("pkg:index:Ref::ref")),
            PropertyValue::String(other_stack.into()),
            PropertyValue::String(t("pkg:index:Ref::ref")),
        ]),
    );
    child.inputs.insert(
        "nested".into(),
        PropertyValue::Object(Box::new(PropertyMap::from([(
            "ref".to_owned(),
            reference(&t("pkg:index:Ref::ref")),
        )]))),
    );
    let mut s = Snapshot::empty(None);
    s.resources = vec![
        res(&t("pulumi:pulumi:Stack::test-test")).0,
        res(&t("pkg:index:Parent::parent")).0,
        child,
    ];
    s.pending_operations = vec![Operation {
        resource: res(&t("pkg:index:Ref::ref")).0,
        kind: OperationKind::Creating,
    }];

    assert_eq!(
        rename_stack(&mut s, OLD, "renamed", Some("renamed-proj")),
        Ok(4)
    );
    assert_eq!(
        urns(&s),
        [
            renamed("pulumi:pulumi:Stack::renamed-proj-renamed"),
            renamed("pkg:index:Parent::parent"),
            renamed("pkg:index:Parent$pkg:index:Child::child"),
        ]
    );
    let child = &s.resources[2];
    assert_eq!(
        child.parent,
        Some(urn(&renamed("pkg:index:Parent::parent")))
    );
    assert_eq!(
        child.inputs["array"],
        PropertyValue::Array(vec![
            reference(&renamed("pkg:index:Ref::ref")),
            PropertyValue::String(other_stack.into()),
            PropertyValue::String(t("pkg:index:Ref::ref")),
        ])
    );
    assert_eq!(
        child.inputs["nested"],
        PropertyValue::Object(Box::new(PropertyMap::from([(
            "ref".to_owned(),
            reference(&renamed("pkg:index:Ref::ref")),
        )])))
    );
    assert_eq!(
        s.pending_operations[0].resource.urn,
        urn(&renamed("pkg:index:Ref::ref"))
    );
}

/// After TestRenameStack_PreservesUnchangedProviderReferenceBytes: a reference to another
/// project's provider stays as it was. (Pulumi's tests of unparsable provider references have
/// no counterpart: a decoded snapshot holds only parsed references.)
#[test]
fn renaming_leaves_other_projects_alone() {
    let foreign = "urn:pulumi:dev::foreign::pulumi:providers:pkg::default";
    let mut s = snapshot(vec![
        res("urn:pulumi:dev::proj::pkg:index:Mine::mine").uses(foreign, ""),
    ]);
    let old = StackId {
        project: "proj",
        stack: "dev",
    };
    assert_eq!(rename_stack(&mut s, old, "dev-renamed", None), Ok(1));
    assert_eq!(
        rows(&s),
        [row(
            "urn:pulumi:dev-renamed::proj::pkg:index:Mine::mine",
            "",
            &format!("{foreign}::")
        )]
    );
}

#[test]
fn a_new_name_urns_cannot_hold_is_refused() {
    let mut s = snapshot(vec![res(&t("pkg:index:Mine::mine"))]);
    let before = s.clone();
    let err = rename_stack(&mut s, OLD, "bad::name", None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot rename urn:pulumi:test::test::pkg:index:Mine::mine for the new stack name: invalid URN part: the stack \"bad::name\" contains \"::\""
    );
    assert_eq!(s, before);
}

// ---------------------------------------------------------------------------------------------
// stack tags

/// After TestValidateStackTag (pkg/util/validation/stack_test.go).
#[test]
fn stack_tags_follow_pulumi_cloud_rules() {
    for name in [
        "tag-name",
        "-",
        "..",
        "foo:bar:baz",
        "__underscores__",
        "AaBb123",
    ] {
        assert_eq!(check_stack_tag(name, "tag-value"), Ok(()), "{name}");
    }
    for name in [
        "tag!",
        "something with spaces",
        "escape\nsequences\there",
        "😄",
        "foo***bar",
    ] {
        assert_eq!(
            check_stack_tag(name, "tag-value"),
            Err(TagError::NameCharacters { name: name.into() }),
            "{name}"
        );
    }
    let long = "v".repeat(41);
    assert_eq!(
        check_stack_tag(&long, "tag-value").unwrap_err().to_string(),
        format!("stack tag name {long:?} is 41 bytes long; names may be at most 40")
    );
    assert_eq!(check_stack_tag(&"v".repeat(40), &"v".repeat(256)), Ok(()));
    assert_eq!(
        check_stack_tag("tag-name", &"v".repeat(257))
            .unwrap_err()
            .to_string(),
        "the value of stack tag \"tag-name\" is 257 bytes long; values may be at most 256"
    );
    assert_eq!(check_stack_tag("", "v"), Err(TagError::EmptyName));
    assert_eq!(
        check_stack_tag("tag\u{1b}[2J", "v")
            .unwrap_err()
            .to_string(),
        "stack tag name \"tag\\u{1b}[2J\" is invalid: names may contain only ASCII letters, digits, '-', '_', '.' and ':'",
        "control characters are shown escaped"
    );
    for (name, _) in AUTOMATIC_TAGS {
        assert_eq!(check_stack_tag(name, ""), Ok(()), "{name}");
    }
}
