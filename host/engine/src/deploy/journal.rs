//! The snapshot journal: durable begin/end records of provider operations, replayed onto the
//! snapshot a deployment started from.
//!
//! A deployment starts from a *base* snapshot (the stored checkpoint). Instead of rewriting the
//! whole checkpoint after every step, the [`SnapshotManager`] appends one JSON line per event to a
//! journal, through a [`Persister`]:
//!
//! ```text
//! {"journal":1,"base":{"time":"…","resources":12,"hash":"…"},"manifest":{…}}
//! {"seq":1,"begin":"creating","resource":{…Resource V3…}}
//! {"seq":2,"end":1,"mutations":[{"append":{…}},{"removeBase":3},{"replaceBase":[4,{…}]}]}
//! {"seq":3,"mutations":[{"append":{…}}]}
//! {"seq":4,"dropBasePending":true}
//! ```
//!
//! The first line (the header) names the base it applies to, so a journal is never replayed onto
//! the wrong checkpoint, and carries this deployment's manifest. A `begin` line is durable before
//! the provider operation starts; its `end` line lists the operation's effects ([`Mutation`]s).
//! Lines without `begin` or `end` are effects that needed no provider call. Resources are written
//! in their stored form (secrets as ciphertext), so each line costs O(size of its step), never
//! O(size of the stack). At the end of the deployment the snapshot is written whole and the
//! journal emptied (compaction).
//!
//! [`replay`] rebuilds the snapshot from a stored checkpoint and a journal after a crash; it and
//! the manager apply mutations with the same code ([`Overlay`]), so they cannot disagree.
//!
//! # A deployment is used once
//!
//! `Deployment::update` / `refresh` / `destroy` / `import` consume it; at the end the engine goes
//! first, so the journal usually has one owner and moves the base into the final snapshot rather
//! than copying it (at 100,000 resources that copy was the largest part of finishing, and a second
//! copy of the state in memory). An `Interrupter` and every `Monitor` hold the engine weakly (a
//! monitor keeps only the options and root URN it reports): a gRPC program's server that shuts down
//! a moment late, or a program that kept its monitor, cannot keep the journal shared, and a request
//! sent after the end is refused.
//!
//! # `--parallel` bounds provider operations, not durability waits
//!
//! A permit is held for the provider call only: with it held across the journal waits, at most
//! `--parallel` records could share a write, and the file backend took 3.5× as long as memory for
//! 10,000 creates.
//!
//! # The snapshot is always valid
//!
//! Every state the journal can replay to (after any line, or a torn last line) passes the integrity
//! check; the lifecycle harness asserts this on every write. The snapshot is assembled
//! dependencies-first by a stable topological sort, so a step that appends a state out of order (an
//! untargeted resource, say) cannot break ordering.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::secrets::Crypter;
use crate::state::{
    DeploymentV3, IntegrityError, JsonMap, Manifest, Operation, OperationKind, Resource,
    ResourceState, ResourceV3, SecretsMode, Snapshot, StateError, encode_deployment_json,
    encode_resource, follow_renames, sort_dependencies_first, verify_integrity,
};
use crate::text::error_chain;
use crate::urn::Urn;
use crate::value::PropertyMap;

/// The journal format version written in the header.
pub const JOURNAL_VERSION: u32 = 1;

/// Identifies a resource of the base snapshot (the one the deployment started from) by index.
pub type BaseIndex = usize;

/// One effect of a finished step on the snapshot.
///
/// In a journal line: `{"append": R}`, `{"removeBase": 3}`, `{"replaceBase": [3, R]}`,
/// `{"replaceAppended": ["urn:…", R]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Mutation<R = ResourceState> {
    /// A new state, placed after every state this deployment has written so far.
    Append(R),
    /// The base resource is gone (deleted, or superseded by an appended state).
    RemoveBase(BaseIndex),
    /// The base resource keeps its place with new contents (marked `delete`, `pendingReplacement`, ...).
    ReplaceBase(BaseIndex, R),
    /// The state this deployment last appended for the URN keeps its place with new contents
    /// (e.g. a component's outputs, registered after the component).
    ReplaceAppended(Urn, R),
}

/// Why the journal could not be written.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct PersistError {
    pub message: String,
    #[source]
    pub source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl PersistError {
    pub fn new(message: impl Into<String>) -> PersistError {
        PersistError {
            message: message.into(),
            source: None,
        }
    }

    pub fn with_source(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> PersistError {
        PersistError {
            message: message.into(),
            source: Some(Box::new(source)),
        }
    }
}

/// Where a deployment's journal and checkpoint go (the backend, for one locked stack).
pub trait Persister: Send + Sync {
    /// Appends one or more complete, `\n`-terminated journal lines; durable when it returns.
    fn append(&self, lines: &[u8]) -> Result<(), PersistError>;
    /// Atomically replaces the checkpoint with `deployment` and empties the journal.
    ///
    /// `deployment` is the deployment's JSON text (a [`DeploymentV3`] document, secrets
    /// encrypted), written by the engine straight from its snapshot: a whole state is never
    /// held as JSON values on the way to the disk.
    fn save(&self, deployment: &[u8]) -> Result<(), PersistError>;
}

/// Why a journal could not be written, read or applied.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// A mutation that does not fit the base (an engine bug, or a corrupt journal).
    #[error("invalid mutation: {0}")]
    InvalidMutation(String),
    #[error("no operation {0} is pending (it never began, or it ended already)")]
    UnknownOperation(u64),
    /// Its message includes the causes: callers often print only the top-level error.
    #[error("cannot write the snapshot journal: {}", error_chain(.0))]
    Persist(PersistError),
    /// An earlier write failed, so the journal ends there; nothing more is written.
    #[error("the snapshot journal is broken by an earlier write failure: {0}")]
    Broken(String),
    #[error("the deployment's snapshot was already finished")]
    Finished,
    #[error(transparent)]
    Encode(Box<StateError>),
    #[error("cannot encode a journal line: {0}")]
    Json(#[from] serde_json::Error),
    /// The snapshot about to be saved is inconsistent: an engine bug.
    #[error("refusing to save the deployment's snapshot: {0}")]
    Integrity(#[from] IntegrityError),
    #[error("a deployment must have its own manifest: this one equals its base's (started {time})")]
    SameManifest { time: String },
    #[error(
        "the journal was written for another checkpoint: it applies to the {journal}, \
         but the stored one is the {base}"
    )]
    HeaderMismatch {
        journal: Box<BaseId>,
        base: Box<BaseId>,
    },
    /// The checkpoint was written by the journaled deployment itself (it finished, or was
    /// recovered, but the journal was not emptied): the journal has nothing left to add.
    #[error("the journal of the deployment started {time} is already part of the checkpoint")]
    AlreadyCompacted { time: String },
    #[error("unsupported journal version {0} (this version of Cairn reads version 1)")]
    UnsupportedVersion(u32),
    #[error("journal line {line}: {reason}")]
    Corrupt { line: usize, reason: String },
}

impl From<StateError> for JournalError {
    fn from(e: StateError) -> JournalError {
        JournalError::Encode(Box::new(e))
    }
}

/// Identifies a checkpoint: its manifest time, resource count, and a hash of its resources'
/// identities (URN, ID and `delete` flag, in order), which is what base indices point at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseId {
    pub time: String,
    pub resources: usize,
    pub hash: String,
}

impl BaseId {
    /// The identity of a snapshot with this manifest and these resources (either form).
    pub fn of<P>(manifest: &Manifest, resources: &[Resource<P>]) -> BaseId {
        let mut hasher = Sha256::new();
        hasher.update(manifest.time.as_bytes());
        hasher.update(b"\n");
        for resource in resources {
            hasher.update(resource.urn.as_str().as_bytes());
            hasher.update(b"\t");
            hasher.update(resource.id.as_deref().unwrap_or("").as_bytes());
            hasher.update(if resource.delete { b"\t1\n" } else { b"\t0\n" });
        }
        BaseId {
            time: manifest.time.clone(),
            resources: resources.len(),
            hash: hex::encode(hasher.finalize()),
        }
    }
}

impl fmt::Display for BaseId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "checkpoint of {} with {} resource{} (hash {})",
            self.time,
            self.resources,
            if self.resources == 1 { "" } else { "s" },
            self.hash.get(..12).unwrap_or(&self.hash)
        )
    }
}

/// A journal's first line: the checkpoint it applies to and the manifest of the deployment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalHeader {
    /// The format version, [`JOURNAL_VERSION`].
    pub journal: u32,
    pub base: BaseId,
    pub manifest: Manifest,
}

impl JournalHeader {
    /// The header of a journal of the deployment with `manifest`, starting from `base`.
    pub fn new(base: &DeploymentV3, manifest: Manifest) -> JournalHeader {
        JournalHeader {
            journal: JOURNAL_VERSION,
            base: BaseId::of(&base.manifest, &base.resources),
            manifest,
        }
    }

    /// The header as a `\n`-terminated journal line.
    pub fn to_line(&self) -> Result<Vec<u8>, JournalError> {
        let mut line = serde_json::to_vec(self)?;
        line.push(b'\n');
        Ok(line)
    }
}

/// A journal line after the header, as stored. Which fields are present tells its kind.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireRecord {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seq: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    begin: Option<OperationKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    resource: Option<ResourceV3>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    end: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mutations: Option<Vec<Mutation<ResourceV3>>>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    drop_base_pending: bool,
}

/// A journal record, by kind.
enum Record<P> {
    Begin(OperationKind, Box<Resource<P>>),
    End(u64, Vec<Mutation<Resource<P>>>),
    Apply(Vec<Mutation<Resource<P>>>),
    DropBasePending,
}

impl WireRecord {
    fn into_record(self) -> Result<(u64, Record<JsonMap>), String> {
        let seq = self.seq.ok_or("the record has no \"seq\"")?;
        let record = match self {
            WireRecord {
                begin: Some(kind),
                resource: Some(resource),
                end: None,
                mutations: None,
                drop_base_pending: false,
                ..
            } => Record::Begin(kind, Box::new(resource)),
            WireRecord {
                begin: None,
                resource: None,
                end: Some(id),
                mutations,
                drop_base_pending: false,
                ..
            } => Record::End(id, mutations.unwrap_or_default()),
            WireRecord {
                begin: None,
                resource: None,
                end: None,
                mutations: Some(mutations),
                drop_base_pending: false,
                ..
            } => Record::Apply(mutations),
            WireRecord {
                begin: None,
                resource: None,
                end: None,
                mutations: None,
                drop_base_pending: true,
                ..
            } => Record::DropBasePending,
            _ => {
                return Err(
                    "the record is not a begin, end, mutation or dropBasePending record".into(),
                );
            }
        };
        Ok((seq, record))
    }
}

/// What a deployment has done to its base so far, generic over how property maps are held: the
/// manager keeps decoded resources, [`replay`] keeps stored JSON. Both apply mutations here.
#[derive(Debug, Clone)]
struct Overlay<P> {
    /// States written by this deployment, in order.
    appended: Vec<Resource<P>>,
    /// The position in `appended` of the last state of each URN.
    appended_at: foldhash::HashMap<Urn, usize>,
    /// Base resources removed (`None`) or replaced (`Some`). Boxed: an update removes every
    /// base entry it rewrites, and an entry of 16 bytes instead of 720 keeps that table small.
    changed: foldhash::HashMap<BaseIndex, Option<Box<Resource<P>>>>,
    /// Operations begun and not ended, by the sequence number of their begin record (which
    /// orders them; thousands may be pending at once, so ending one must not shift the rest).
    /// Boxed: a tree node moves its entries on every insert and removal, and a resource's state
    /// is large.
    pending: BTreeMap<u64, Box<Operation<P>>>,
    /// Whether the base's own pending operations were dropped.
    base_pending_dropped: bool,
}

impl<P: Clone> Overlay<P> {
    /// An empty overlay whose indexes are sized for `expected` states (the base's size: an
    /// update rewrites about as many), so they are allocated once instead of rehashed while the
    /// deployment runs. The states themselves grow as they come: reserved at the start, they
    /// would add to the moment the program's requests peak.
    fn new(expected: usize) -> Overlay<P> {
        Overlay {
            appended: Vec::new(),
            appended_at: foldhash::HashMap::with_capacity_and_hasher(expected, Default::default()),
            changed: foldhash::HashMap::with_capacity_and_hasher(expected, Default::default()),
            pending: BTreeMap::new(),
            base_pending_dropped: false,
        }
    }

    /// Checks that every mutation fits `base` and what came before (including earlier mutations
    /// of the same batch), without changing anything.
    fn check(
        &self,
        base: &[Resource<P>],
        mutations: &[Mutation<Resource<P>>],
    ) -> Result<(), JournalError> {
        let mut removed_now = HashSet::new();
        let mut appended_now = HashSet::new();
        for mutation in mutations {
            let (index, removing) = match mutation {
                Mutation::Append(resource) => {
                    appended_now.insert(&resource.urn);
                    continue;
                }
                Mutation::ReplaceAppended(urn, _) => {
                    if !self.appended_at.contains_key(urn) && !appended_now.contains(urn) {
                        return Err(JournalError::InvalidMutation(format!(
                            "cannot replace the state of {urn}: this deployment has not recorded it"
                        )));
                    }
                    continue;
                }
                Mutation::RemoveBase(index) => (*index, true),
                Mutation::ReplaceBase(index, _) => (*index, false),
            };
            let verb = if removing { "remove" } else { "replace" };
            let Some(resource) = base.get(index) else {
                return Err(JournalError::InvalidMutation(format!(
                    "cannot {verb} base resource {index}: the base has {} resources",
                    base.len()
                )));
            };
            if matches!(self.changed.get(&index), Some(None)) || removed_now.contains(&index) {
                return Err(JournalError::InvalidMutation(format!(
                    "cannot {verb} base resource {index} ({}): it was already removed",
                    resource.urn
                )));
            }
            if removing {
                removed_now.insert(index);
            }
        }
        Ok(())
    }

    /// Applies a batch of mutations: all of them, or (on error) none.
    fn apply(
        &mut self,
        base: &[Resource<P>],
        mutations: Vec<Mutation<Resource<P>>>,
    ) -> Result<(), JournalError> {
        self.check(base, &mutations)?;
        for mutation in mutations {
            match mutation {
                Mutation::Append(resource) => {
                    self.appended_at
                        .insert(resource.urn.clone(), self.appended.len());
                    self.appended.push(resource);
                }
                Mutation::ReplaceAppended(urn, resource) => {
                    // Checked above: the URN was appended.
                    if let Some(&at) = self.appended_at.get(&urn) {
                        self.appended[at] = resource;
                    }
                }
                Mutation::RemoveBase(index) => {
                    self.changed.insert(index, None);
                }
                Mutation::ReplaceBase(index, resource) => {
                    self.changed.insert(index, Some(Box::new(resource)));
                }
            }
        }
        Ok(())
    }

    fn begin(&mut self, seq: u64, kind: OperationKind, resource: Resource<P>) {
        self.pending
            .insert(seq, Box::new(Operation { resource, kind }));
    }

    /// Ends the operation begun at `id` with its effects (checked first: on error nothing changes).
    fn end(
        &mut self,
        base: &[Resource<P>],
        id: u64,
        mutations: Vec<Mutation<Resource<P>>>,
    ) -> Result<(), JournalError> {
        if !self.pending.contains_key(&id) {
            return Err(JournalError::UnknownOperation(id));
        }
        self.apply(base, mutations)?;
        self.pending.remove(&id);
        Ok(())
    }

    /// The resulting resources: appended states in order, then what is left of the base.
    fn resources(&self, base: &[Resource<P>]) -> Vec<Resource<P>> {
        self.with_base(self.appended.clone(), base)
    }

    /// Like [`Overlay::resources`], moving the appended states out instead of copying them (the
    /// final snapshot of a large deployment is built once).
    fn take_resources(&mut self, base: &[Resource<P>]) -> Vec<Resource<P>> {
        let appended = std::mem::take(&mut self.appended);
        self.with_base(appended, base)
    }

    fn with_base(&self, mut resources: Vec<Resource<P>>, base: &[Resource<P>]) -> Vec<Resource<P>> {
        resources.reserve(base.len());
        for (index, resource) in base.iter().enumerate() {
            match self.changed.get(&index) {
                None => resources.push(resource.clone()),
                Some(None) => {}
                Some(Some(replaced)) => resources.push(Resource::clone(replaced)),
            }
        }
        in_final_order(resources)
    }

    /// Like [`Overlay::take_resources`], consuming the base too: what the deployment left as it
    /// was stays where it is instead of being copied (most of a large stack, most times). The
    /// larger of the two vectors becomes the result, so a large stack's vector is never held
    /// twice (at 100,000 resources, a second one was 70 MB at the end of every deployment).
    fn take_resources_and_base(&mut self, mut base: Vec<Resource<P>>) -> Vec<Resource<P>> {
        let mut appended = std::mem::take(&mut self.appended);
        let mut changed = std::mem::take(&mut self.changed);
        if !changed.is_empty() {
            let mut index = 0;
            base.retain_mut(|resource| {
                let kept = match changed.remove(&index) {
                    None => true,
                    Some(None) => false,
                    Some(Some(replaced)) => {
                        *resource = *replaced;
                        true
                    }
                };
                index += 1;
                kept
            });
        }
        // Appended states first, then what is left of the base.
        let resources = if appended.len() >= base.len() {
            appended.append(&mut base);
            appended
        } else {
            base.splice(0..0, appended);
            base
        };
        in_final_order(resources)
    }

    /// The base's pending operations (unless dropped), then those begun and not ended.
    fn pending_operations(&self, base: &[Operation<P>]) -> Vec<Operation<P>> {
        let base = if self.base_pending_dropped {
            &[][..]
        } else {
            base
        };
        base.iter()
            .chain(self.pending.values().map(|operation| &**operation))
            .cloned()
            .collect()
    }
}

/// The snapshot's order for `resources` (appended states first, then the base's): references
/// to resources taken over under new URNs (aliases) followed, dependencies first.
fn in_final_order<P>(mut resources: Vec<Resource<P>>) -> Vec<Resource<P>> {
    // What the base still holds refers to resources by the URNs they had.
    follow_renames(&mut resources);
    // Where an appended state depends on a resource still in the base (an untargeted one,
    // say), the stable sort moves just enough to keep dependencies first.
    sort_dependencies_first(&mut resources);
    resources
}

/// Rebuilds a deployment from the checkpoint it started from and its journal, on the stored form
/// (no secret is decrypted).
///
/// Every complete line is applied; an unterminated or unparsable *last* line is ignored (a crash
/// while writing it). Operations begun and not ended become `pending_operations`. A journal whose
/// header names another checkpoint is refused ([`JournalError::HeaderMismatch`]), and one already
/// contained in the checkpoint too ([`JournalError::AlreadyCompacted`]): the caller drops it.
pub fn replay(base: &DeploymentV3, journal: &[u8]) -> Result<DeploymentV3, JournalError> {
    let mut lines: Vec<&[u8]> = journal.split_inclusive(|b| *b == b'\n').collect();
    // An unterminated last line was torn by a crash: its writer never saw it durable.
    if lines.last().is_some_and(|line| !line.ends_with(b"\n")) {
        lines.pop();
    }
    let count = lines.len();
    // An unparsable line is a torn write if it is the last one, else corruption.
    let torn_or_corrupt = |number: usize, reason: String| {
        if number == count {
            Ok(())
        } else {
            Err(JournalError::Corrupt {
                line: number,
                reason,
            })
        }
    };

    let Some(first) = lines.first() else {
        return Ok(base.clone());
    };
    let header: JournalHeader = match serde_json::from_slice(first) {
        Ok(header) => header,
        Err(e) => {
            torn_or_corrupt(1, format!("not a journal header: {e}"))?;
            return Ok(base.clone());
        }
    };
    if header.journal != JOURNAL_VERSION {
        return Err(JournalError::UnsupportedVersion(header.journal));
    }
    let base_id = BaseId::of(&base.manifest, &base.resources);
    if header.base != base_id {
        if header.manifest == base.manifest {
            return Err(JournalError::AlreadyCompacted {
                time: header.manifest.time,
            });
        }
        return Err(JournalError::HeaderMismatch {
            journal: Box::new(header.base),
            base: Box::new(base_id),
        });
    }

    // Sized for the replay of a crash, which rarely gets far: it grows as it needs to.
    let mut overlay = Overlay::<JsonMap>::new(0);
    for (expected_seq, (offset, line)) in (1..).zip(lines.iter().enumerate().skip(1)) {
        let number = offset + 1;
        let parsed = serde_json::from_slice::<WireRecord>(line)
            .map_err(|e| e.to_string())
            .and_then(WireRecord::into_record);
        let (seq, record) = match parsed {
            Ok(parsed) => parsed,
            Err(reason) => {
                torn_or_corrupt(number, reason)?;
                break;
            }
        };
        let corrupt = |reason: String| JournalError::Corrupt {
            line: number,
            reason,
        };
        if seq != expected_seq {
            return Err(corrupt(format!(
                "expected record {expected_seq}, found record {seq}"
            )));
        }
        let applied = match record {
            Record::Begin(kind, resource) => {
                overlay.begin(seq, kind, *resource);
                Ok(())
            }
            Record::End(id, mutations) => overlay.end(&base.resources, id, mutations),
            Record::Apply(mutations) => overlay.apply(&base.resources, mutations),
            Record::DropBasePending => {
                overlay.base_pending_dropped = true;
                Ok(())
            }
        };
        applied.map_err(|e| corrupt(e.to_string()))?;
    }

    Ok(DeploymentV3 {
        manifest: header.manifest,
        secrets_providers: base.secrets_providers.clone(),
        resources: overlay.resources(&base.resources),
        pending_operations: overlay.pending_operations(&base.pending_operations),
        extra: base.extra.clone(),
    })
}

/// Reads a journal's header, if its first line is complete.
pub fn read_header(journal: &[u8]) -> Option<JournalHeader> {
    let end = journal.iter().position(|b| *b == b'\n')?;
    serde_json::from_slice(&journal[..end]).ok()
}

/// Names an operation begun with [`SnapshotManager::begin`] (the sequence number of its record).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PendingId(u64);

impl PendingId {
    pub fn seq(self) -> u64 {
        self.0
    }
}

/// The journaled snapshot of one deployment: the base it started from plus everything it did.
///
/// Safe to share between tasks; its lock is held only to update memory, never while writing.
/// Writes keep the order in which their records were made and are made by a thread of their own
/// ([`Writer`]), which groups every record waiting when the previous write finished into one
/// append: steps that finish together share one fdatasync (or one commit). `begin`, `end` and
/// `finish` return once their record is durable; the executor awaits that
/// ([`SnapshotManager::begin_async`], [`SnapshotManager::end_or_strip_async`]) instead of
/// blocking a thread.
pub struct SnapshotManager {
    base: Snapshot,
    manifest: Manifest,
    crypter: Arc<dyn Crypter>,
    state: Mutex<ManagerState>,
    /// `None` in a preview: nothing is written.
    writer: Option<Writer>,
}

struct ManagerState {
    overlay: Overlay<PropertyMap>,
    /// The sequence number of the next record.
    next_seq: u64,
    /// Records of [`SnapshotManager::apply`] not yet handed to the persister.
    buffered: Vec<u8>,
    finished: bool,
}

impl SnapshotManager {
    /// Starts the journal of a deployment with `manifest` from `base`, writing its header.
    /// With no persister (a preview) nothing is ever written.
    pub fn new(
        base: Snapshot,
        manifest: Manifest,
        persister: Option<Arc<dyn Persister>>,
        crypter: Arc<dyn Crypter>,
    ) -> Result<SnapshotManager, JournalError> {
        let writer = match persister {
            None => None,
            Some(persister) => {
                if manifest == base.manifest {
                    return Err(JournalError::SameManifest {
                        time: manifest.time,
                    });
                }
                let header = JournalHeader {
                    journal: JOURNAL_VERSION,
                    base: BaseId::of(&base.manifest, &base.resources),
                    manifest: manifest.clone(),
                };
                persister
                    .append(&header.to_line()?)
                    .map_err(JournalError::Persist)?;
                Some(Writer::new(persister)?)
            }
        };
        let expected = base.resources.len();
        Ok(SnapshotManager {
            base,
            manifest,
            crypter,
            state: Mutex::new(ManagerState {
                overlay: Overlay::new(expected),
                next_seq: 1,
                buffered: Vec::new(),
                finished: false,
            }),
            writer,
        })
    }

    /// The snapshot the deployment started from; [`BaseIndex`]es index its resources.
    pub fn base(&self) -> &Snapshot {
        &self.base
    }

    fn lock(&self) -> Result<MutexGuard<'_, ManagerState>, JournalError> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.finished {
            return Err(JournalError::Finished);
        }
        Ok(state)
    }

    /// A record's JSON without its `seq` (which is assigned under the lock), or `None` in a
    /// preview. Encoding (and encrypting) happens here, outside the lock.
    fn body(
        &self,
        record: impl FnOnce() -> Result<WireRecord, JournalError>,
    ) -> Result<Option<Vec<u8>>, JournalError> {
        if self.writer.is_none() {
            return Ok(None);
        }
        Ok(Some(serde_json::to_vec(&record()?)?))
    }

    fn encode(&self, resource: &ResourceState) -> Result<ResourceV3, JournalError> {
        Ok(encode_resource(
            resource,
            SecretsMode::Encrypt(&*self.crypter),
        )?)
    }

    fn encode_mutations(
        &self,
        mutations: &[Mutation],
    ) -> Result<Vec<Mutation<ResourceV3>>, JournalError> {
        mutations
            .iter()
            .map(|mutation| {
                Ok(match mutation {
                    Mutation::Append(r) => Mutation::Append(self.encode(r)?),
                    Mutation::RemoveBase(i) => Mutation::RemoveBase(*i),
                    Mutation::ReplaceBase(i, r) => Mutation::ReplaceBase(*i, self.encode(r)?),
                    Mutation::ReplaceAppended(urn, r) => {
                        Mutation::ReplaceAppended(urn.clone(), self.encode(r)?)
                    }
                })
            })
            .collect()
    }

    /// Records that a provider operation on `resource` is about to start; durable on return.
    /// Until [`SnapshotManager::end`], the snapshot lists it as a pending operation.
    pub fn begin(
        &self,
        kind: OperationKind,
        resource: &ResourceState,
    ) -> Result<PendingId, JournalError> {
        let (id, durable) = self.begin_queued(kind, resource)?;
        self.settle_begin(id, durable.wait())
    }

    /// [`SnapshotManager::begin`] without blocking a thread: durable when the future returns.
    pub async fn begin_async(
        &self,
        kind: OperationKind,
        resource: &ResourceState,
    ) -> Result<PendingId, JournalError> {
        let (id, durable) = self.begin_queued(kind, resource)?;
        self.settle_begin(id, durable.wait_async().await)
    }

    /// Records a begin and queues its write; the provider must not be called before the
    /// returned [`Durable`] says the record is durable.
    fn begin_queued(
        &self,
        kind: OperationKind,
        resource: &ResourceState,
    ) -> Result<(PendingId, Durable), JournalError> {
        let body = self.body(|| {
            Ok(WireRecord {
                begin: Some(kind),
                resource: Some(self.encode(resource)?),
                ..WireRecord::default()
            })
        })?;
        let mut state = self.lock()?;
        let seq = state.take_seq();
        state.overlay.begin(seq, kind, resource.clone());
        let durable = self.submit(&mut state, seq, body);
        Ok((PendingId(seq), durable))
    }

    fn settle_begin(
        &self,
        id: PendingId,
        written: Result<(), JournalError>,
    ) -> Result<PendingId, JournalError> {
        if let Err(e) = written {
            // The provider must not be called: the operation is not pending after all.
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.overlay.pending.remove(&id.0);
            return Err(e);
        }
        Ok(id)
    }

    /// Queues `body` (with the buffered records before it) for writing, under the manager's
    /// lock so that writes keep the order of their sequence numbers. Nothing to wait for in a
    /// preview.
    fn submit(&self, state: &mut ManagerState, seq: u64, body: Option<Vec<u8>>) -> Durable {
        match (&self.writer, body) {
            (Some(writer), Some(body)) => {
                let bytes = state.queue_write(seq, &body);
                Durable(Some(writer.submit(bytes)))
            }
            _ => Durable(None),
        }
    }

    /// Records that the operation `id` finished, with its effects on the snapshot; durable on
    /// return. With no mutations, the operation changed nothing (e.g. it failed cleanly).
    pub fn end(&self, id: PendingId, mutations: Vec<Mutation>) -> Result<(), JournalError> {
        let body = self.body(|| {
            Ok(WireRecord {
                end: Some(id.0),
                mutations: Some(self.encode_mutations(&mutations)?),
                ..WireRecord::default()
            })
        })?;
        self.end_queued(id, mutations, body)?.wait()
    }

    /// Like [`SnapshotManager::end`] (without blocking a thread), but when the states cannot
    /// be encoded (a secret that cannot be encrypted, say), `strip` is applied to every
    /// appended or replaced state and encoding is tried once more, so the resources are still
    /// recorded. Returns the first encoding error if `strip` had to be used.
    pub async fn end_or_strip_async(
        &self,
        id: PendingId,
        mutations: Vec<Mutation>,
        strip: impl Fn(&mut ResourceState),
    ) -> Result<Option<JournalError>, JournalError> {
        let (stripped, durable) = self.end_or_strip_queued(id, mutations, strip)?;
        durable.wait_async().await.map(|()| stripped)
    }

    fn end_or_strip_queued(
        &self,
        id: PendingId,
        mut mutations: Vec<Mutation>,
        strip: impl Fn(&mut ResourceState),
    ) -> Result<(Option<JournalError>, Durable), JournalError> {
        let encode = |mutations: &[Mutation]| {
            self.body(|| {
                Ok(WireRecord {
                    end: Some(id.0),
                    mutations: Some(self.encode_mutations(mutations)?),
                    ..WireRecord::default()
                })
            })
        };
        match encode(&mutations) {
            Ok(body) => self
                .end_queued(id, mutations, body)
                .map(|durable| (None, durable)),
            Err(first) => {
                for mutation in &mut mutations {
                    match mutation {
                        Mutation::Append(state)
                        | Mutation::ReplaceBase(_, state)
                        | Mutation::ReplaceAppended(_, state) => strip(state),
                        Mutation::RemoveBase(_) => {}
                    }
                }
                let body = encode(&mutations)?;
                self.end_queued(id, mutations, body)
                    .map(|durable| (Some(first), durable))
            }
        }
    }

    fn end_queued(
        &self,
        id: PendingId,
        mutations: Vec<Mutation>,
        body: Option<Vec<u8>>,
    ) -> Result<Durable, JournalError> {
        let mut state = self.lock()?;
        state.overlay.end(&self.base.resources, id.0, mutations)?;
        let seq = state.take_seq();
        Ok(self.submit(&mut state, seq, body))
    }

    /// Records effects that needed no provider call (a `same` step, a refresh without drift,
    /// a component). They are written with the next `begin`, `end`, [`SnapshotManager::flush`]
    /// or `finish`, so a crash may lose them but never reorders them.
    pub fn apply(&self, mutations: Vec<Mutation>) -> Result<(), JournalError> {
        let body = self.body(|| {
            Ok(WireRecord {
                mutations: Some(self.encode_mutations(&mutations)?),
                ..WireRecord::default()
            })
        })?;
        let mut state = self.lock()?;
        state.overlay.apply(&self.base.resources, mutations)?;
        state.buffer(body);
        Ok(())
    }

    /// Forgets the pending operations the base snapshot recorded (once the deployment has
    /// reconciled them); written like [`SnapshotManager::apply`].
    pub fn drop_base_pending(&self) -> Result<(), JournalError> {
        let body = self.body(|| {
            Ok(WireRecord {
                drop_base_pending: true,
                ..WireRecord::default()
            })
        })?;
        let mut state = self.lock()?;
        state.overlay.base_pending_dropped = true;
        state.buffer(body);
        Ok(())
    }

    /// Makes every record so far durable.
    pub fn flush(&self) -> Result<(), JournalError> {
        let durable = {
            let mut state = self.lock()?;
            match &self.writer {
                Some(writer) if !state.buffered.is_empty() => {
                    Durable(Some(writer.submit(std::mem::take(&mut state.buffered))))
                }
                _ => Durable(None),
            }
        };
        durable.wait()
    }

    /// The live state of `urn` as of now: the last state this deployment recorded for it, else
    /// its base entry `base` (as replaced, unless removed). O(1): no snapshot is built.
    pub fn live_state(&self, urn: &Urn, base: Option<BaseIndex>) -> Option<ResourceState> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let overlay = &state.overlay;
        if let Some(&at) = overlay.appended_at.get(urn) {
            return overlay.appended.get(at).filter(|r| !r.delete).cloned();
        }
        let index = base?;
        let entry = match overlay.changed.get(&index) {
            None => self.base.resources.get(index),
            Some(replaced) => replaced.as_deref(),
        };
        entry.filter(|r| &r.urn == urn && !r.delete).cloned()
    }

    /// The snapshot as of now: this deployment's states in the order written, then what is
    /// left of the base in base order, plus the pending operations.
    pub fn current(&self) -> Snapshot {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        self.snapshot_of(&state.overlay)
    }

    fn snapshot_of(&self, overlay: &Overlay<PropertyMap>) -> Snapshot {
        Snapshot {
            manifest: self.manifest.clone(),
            secrets_providers: self.base.secrets_providers.clone(),
            resources: overlay.resources(&self.base.resources),
            pending_operations: overlay.pending_operations(&self.base.pending_operations),
            extra: self.base.extra.clone(),
        }
    }

    /// Checks the final snapshot, saves it whole and empties the journal (compaction); in a
    /// preview, only returns it. Nothing can be recorded afterwards. The base is copied: see
    /// [`SnapshotManager::into_finished`] for the owner's cheaper way.
    pub fn finish(&self) -> Result<Snapshot, JournalError> {
        let snapshot = {
            let mut state = self.lock()?;
            let appended = state.overlay.appended.len();
            // The appended states move into the snapshot: nothing is recorded after `finish`.
            let snapshot = Snapshot {
                manifest: self.manifest.clone(),
                secrets_providers: self.base.secrets_providers.clone(),
                pending_operations: state
                    .overlay
                    .pending_operations(&self.base.pending_operations),
                resources: state.overlay.take_resources(&self.base.resources),
                extra: self.base.extra.clone(),
            };
            if let Err(e) = verify_integrity(&snapshot) {
                // Keep everything recorded, so the journal can still be flushed and replayed.
                state.overlay.appended = snapshot.resources[..appended].to_vec();
                return Err(e.into());
            }
            state.finished = true;
            state.buffered.clear();
            snapshot
        };
        save_checkpoint(self.writer.as_ref(), &*self.crypter, &snapshot)?;
        Ok(snapshot)
    }

    /// [`SnapshotManager::finish`] by the journal's last owner: the base's resources move into
    /// the final snapshot instead of being copied, which for a large stack is most of the cost
    /// of finishing (and, at its peak, a second copy of the state in memory). When the snapshot
    /// is refused, the records not yet written are written before the journal closes.
    pub fn into_finished(self) -> Result<Snapshot, JournalError> {
        let SnapshotManager {
            base,
            manifest,
            crypter,
            state,
            writer,
        } = self;
        let mut state = state.into_inner().unwrap_or_else(PoisonError::into_inner);
        let snapshot = Snapshot {
            manifest,
            pending_operations: state.overlay.pending_operations(&base.pending_operations),
            resources: state.overlay.take_resources_and_base(base.resources),
            secrets_providers: base.secrets_providers,
            extra: base.extra,
        };
        if let Err(e) = verify_integrity(&snapshot) {
            if let Some(writer) = &writer
                && !state.buffered.is_empty()
            {
                Durable(Some(writer.submit(std::mem::take(&mut state.buffered)))).wait()?;
            }
            return Err(e.into());
        }
        save_checkpoint(writer.as_ref(), &*crypter, &snapshot)?;
        Ok(snapshot)
    }
}

/// Saves `snapshot` whole through `writer` (none in a preview), after every earlier record,
/// even if one failed: the snapshot in memory is the best knowledge of what happened.
fn save_checkpoint(
    writer: Option<&Writer>,
    crypter: &dyn Crypter,
    snapshot: &Snapshot,
) -> Result<(), JournalError> {
    if let Some(writer) = writer {
        let deployment = encode_deployment_json(snapshot, SecretsMode::Encrypt(crypter))?;
        writer.save(deployment)?;
    }
    Ok(())
}

impl ManagerState {
    /// Queues a record that needs no fsync of its own; the next begin/end/flush writes it.
    fn buffer(&mut self, body: Option<Vec<u8>>) {
        if let Some(body) = body {
            let seq = self.take_seq();
            let line = with_seq(seq, &body);
            self.buffered.extend_from_slice(&line);
        }
    }

    fn take_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// The buffered records plus this one, to be written together.
    fn queue_write(&mut self, seq: u64, body: &[u8]) -> Vec<u8> {
        let mut bytes = std::mem::take(&mut self.buffered);
        bytes.extend_from_slice(&with_seq(seq, body));
        bytes
    }
}

/// Puts `"seq":N` first in an encoded record object and terminates the line.
fn with_seq(seq: u64, body: &[u8]) -> Vec<u8> {
    let mut line = format!("{{\"seq\":{seq}").into_bytes();
    // `body` is a non-empty JSON object: `{"field":…}`.
    let rest = body.strip_prefix(b"{").unwrap_or(body);
    if !rest.starts_with(b"}") {
        line.push(b',');
    }
    line.extend_from_slice(rest);
    line.push(b'\n');
    line
}

/// The journal's writer: a thread of its own that appends queued records in the order they
/// were queued (tickets), and groups every record queued while it was writing into the next
/// append — one fdatasync or one transaction commit for all the steps that finished meanwhile
/// (group commit). After a failed append, nothing more is appended (a journal with a gap could
/// not be replayed): later records fail without being written. The final save runs after every
/// earlier record, whether or not they failed.
struct Writer {
    shared: Arc<WriterShared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

struct WriterShared {
    queue: Mutex<WriteQueue>,
    /// Wakes the thread (work queued, or closing) and blocking waiters (progress).
    wake: Condvar,
}

struct WriteQueue {
    /// The records queued and not yet taken by the thread, concatenated, in ticket order.
    lines: Vec<u8>,
    /// The ticket the next submission gets; the queued records are the tickets from
    /// `progress.settled` (or later, while a write is under way) up to this one.
    next_ticket: u64,
    /// The final checkpoint to save, once every record before it is settled.
    save: Option<Vec<u8>>,
    closing: bool,
    progress: Progress,
    /// Tasks waiting for their ticket to settle, woken each by its own ticket only: with
    /// thousands of steps waiting at once, waking every one on each write would cost
    /// waiters × writes.
    waiters: BTreeMap<u64, tokio::sync::oneshot::Sender<()>>,
}

/// How far the writer got.
#[derive(Debug, Clone, Default)]
struct Progress {
    /// Every ticket below this is settled: written, or failed.
    settled: u64,
    /// The append that failed: its tickets (`from..to`), and why. Tickets from `to` on were
    /// not written because of it.
    failed: Option<(u64, u64, String)>,
    /// The final save's outcome, once it ran.
    saved: Option<Result<(), String>>,
}

impl Progress {
    /// The outcome of `ticket`, once it is settled.
    fn outcome(&self, ticket: u64) -> Option<Result<(), JournalError>> {
        if ticket >= self.settled {
            return None;
        }
        Some(match &self.failed {
            Some((from, to, reason)) if ticket >= *from => Err(if ticket < *to {
                JournalError::Persist(PersistError::new(reason.clone()))
            } else {
                JournalError::Broken(reason.clone())
            }),
            _ => Ok(()),
        })
    }
}

/// A queued record's place in line: wait on it to know the record is durable (or why not).
#[must_use = "a record is durable only once its Durable says so"]
struct Durable(Option<(u64, Arc<WriterShared>)>);

impl Durable {
    /// Blocks until the record is durable.
    fn wait(self) -> Result<(), JournalError> {
        let Some((ticket, shared)) = self.0 else {
            return Ok(());
        };
        let mut queue = shared.queue.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(outcome) = queue.progress.outcome(ticket) {
                return outcome;
            }
            queue = shared
                .wake
                .wait(queue)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Waits, without blocking the thread, until the record is durable.
    async fn wait_async(self) -> Result<(), JournalError> {
        let Some((ticket, shared)) = self.0 else {
            return Ok(());
        };
        let settled = {
            let mut queue = shared.queue.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(outcome) = queue.progress.outcome(ticket) {
                return outcome;
            }
            let (settle, settled) = tokio::sync::oneshot::channel();
            queue.waiters.insert(ticket, settle);
            settled
        };
        // The writer settles every queued ticket before it stops; a dropped sender is only
        // a writer that died.
        let _ = settled.await;
        let queue = shared.queue.lock().unwrap_or_else(PoisonError::into_inner);
        queue.progress.outcome(ticket).unwrap_or_else(|| {
            Err(JournalError::Broken(
                "the journal's writer stopped".to_owned(),
            ))
        })
    }
}

impl Writer {
    fn new(persister: Arc<dyn Persister>) -> Result<Writer, JournalError> {
        let shared = Arc::new(WriterShared {
            queue: Mutex::new(WriteQueue {
                lines: Vec::new(),
                next_ticket: 0,
                save: None,
                closing: false,
                progress: Progress::default(),
                waiters: BTreeMap::new(),
            }),
            wake: Condvar::new(),
        });
        let thread = std::thread::Builder::new()
            .name("cairn-journal".to_owned())
            .spawn({
                let shared = shared.clone();
                move || write_until_closed(&shared, &*persister)
            })
            .map_err(|e| {
                JournalError::Persist(PersistError::with_source("starting the journal writer", e))
            })?;
        Ok(Writer {
            shared,
            thread: Some(thread),
        })
    }

    /// Queues `lines`; the returned ticket is its place in line.
    fn submit(&self, lines: Vec<u8>) -> (u64, Arc<WriterShared>) {
        let mut queue = self
            .shared
            .queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        queue.lines.extend_from_slice(&lines);
        let ticket = queue.next_ticket;
        queue.next_ticket += 1;
        drop(queue);
        self.shared.wake.notify_all();
        (ticket, self.shared.clone())
    }

    /// Saves `deployment` after every queued record is settled, and waits for it.
    fn save(&self, deployment: Vec<u8>) -> Result<(), JournalError> {
        let mut queue = self
            .shared
            .queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        queue.save = Some(deployment);
        self.shared.wake.notify_all();
        loop {
            if let Some(saved) = &queue.progress.saved {
                return saved
                    .clone()
                    .map_err(|reason| JournalError::Persist(PersistError::new(reason)));
            }
            queue = self
                .shared
                .wake
                .wait(queue)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        let mut queue = self
            .shared
            .queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        queue.closing = true;
        drop(queue);
        self.shared.wake.notify_all();
        if let Some(thread) = self.thread.take() {
            // It finishes what was queued first: every queued record is someone's promise.
            let _ = thread.join();
        }
    }
}

/// The writer thread: takes everything queued, appends it in one write, publishes the
/// progress; runs the save once everything before it is settled; returns when closing and
/// idle.
fn write_until_closed(shared: &WriterShared, persister: &dyn Persister) {
    let mut queue = shared.queue.lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        if !queue.lines.is_empty() {
            let lines = std::mem::take(&mut queue.lines);
            let (from, to) = (queue.progress.settled, queue.next_ticket);
            let broken = queue.progress.failed.is_some();
            drop(queue);
            let result = if broken {
                Ok(())
            } else {
                persister.append(&lines).map_err(|e| error_chain(&e))
            };
            queue = shared.queue.lock().unwrap_or_else(PoisonError::into_inner);
            if let Err(reason) = result {
                queue.progress.failed = Some((from, to, reason));
            }
            queue.progress.settled = to;
        } else if let Some(deployment) = queue.save.take() {
            drop(queue);
            let saved = persister.save(&deployment).map_err(|e| error_chain(&e));
            queue = shared.queue.lock().unwrap_or_else(PoisonError::into_inner);
            queue.progress.saved = Some(saved);
        } else if queue.closing {
            return;
        } else {
            queue = shared
                .wake
                .wait(queue)
                .unwrap_or_else(PoisonError::into_inner);
            continue;
        }
        let settled = queue.progress.settled;
        let pending = queue.waiters.split_off(&settled);
        for (_, settle) in std::mem::replace(&mut queue.waiters, pending) {
            let _ = settle.send(());
        }
        shared.wake.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::Value;

    use super::*;
    use crate::secrets::SecretsError;
    use crate::state::{ProviderReference, decode_deployment};
    use crate::urn::{TypeToken, Urn};
    use crate::value::PropertyValue;

    const SECRET: &str = "hunter2-journal-secret";

    /// A deterministic crypter whose ciphertext never contains the plaintext: `x:<hex>`.
    struct TestCrypter;

    impl Crypter for TestCrypter {
        fn encrypt(&self, plaintext: &str) -> Result<String, SecretsError> {
            Ok(format!("x:{}", hex::encode(plaintext)))
        }
        fn decrypt(&self, ciphertext: &str) -> Result<String, SecretsError> {
            let hex = ciphertext.strip_prefix("x:").ok_or(SecretsError::Decrypt)?;
            let bytes = hex::decode(hex).map_err(|_| SecretsError::Decrypt)?;
            String::from_utf8(bytes).map_err(|_| SecretsError::Decrypt)
        }
    }

    /// Records what the manager writes: the journal as a file would hold it, each `append`
    /// call, and the saved checkpoint. Optionally fails the append with the given number.
    #[derive(Default)]
    struct Recorder {
        journal: Mutex<Vec<u8>>,
        appends: Mutex<Vec<Vec<u8>>>,
        saved: Mutex<Option<DeploymentV3>>,
        fail_append: Option<usize>,
        calls: AtomicUsize,
    }

    impl Recorder {
        fn journal(&self) -> Vec<u8> {
            self.journal.lock().unwrap().clone()
        }
    }

    impl Persister for Recorder {
        fn append(&self, lines: &[u8]) -> Result<(), PersistError> {
            let call = self.calls.fetch_add(1, Ordering::SeqCst);
            if self.fail_append == Some(call) {
                return Err(PersistError::with_source(
                    "writing dev.journal",
                    std::io::Error::other("disk full"),
                ));
            }
            assert!(lines.ends_with(b"\n"), "appends are whole lines");
            self.journal.lock().unwrap().extend_from_slice(lines);
            self.appends.lock().unwrap().push(lines.to_vec());
            Ok(())
        }
        fn save(&self, deployment: &[u8]) -> Result<(), PersistError> {
            *self.saved.lock().unwrap() = Some(serde_json::from_slice(deployment).unwrap());
            self.journal.lock().unwrap().clear();
            Ok(())
        }
    }

    fn urn(ty: &str, name: &str) -> Urn {
        Urn::parse(&format!("urn:pulumi:dev::web::{ty}::{name}")).unwrap()
    }

    fn resource(ty: &str, name: &str, id: Option<&str>) -> ResourceState {
        let mut r = Resource::new(urn(ty, name), TypeToken::parse(ty).unwrap(), id.is_some());
        r.id = id.map(str::to_owned);
        r
    }

    const STACK: &str = "pulumi:pulumi:Stack";
    const PROVIDER: &str = "pulumi:providers:random";
    const PET: &str = "random:index/randomPet:RandomPet";
    const PASSWORD: &str = "random:index/randomPassword:RandomPassword";
    const ID: &str = "random:index/randomId:RandomId";
    const STRING: &str = "random:index/randomString:RandomString";
    const COMPONENT: &str = "my:index:Component";

    fn manifest(time: &str) -> Manifest {
        Manifest {
            time: time.into(),
            ..Manifest::new()
        }
    }

    fn provider_ref() -> Option<ProviderReference> {
        Some(ProviderReference {
            urn: urn(PROVIDER, "default"),
            id: "prov-1".into(),
        })
    }

    /// A custom resource of the random provider, child of the stack.
    fn random(ty: &str, name: &str, id: Option<&str>) -> ResourceState {
        let mut r = resource(ty, name, id);
        r.custom = true;
        r.parent = Some(urn(STACK, "web-dev"));
        r.provider = provider_ref();
        r
    }

    /// stack, provider, pet (a secret output), pw (depends on pet), old, gone.
    fn base_snapshot() -> Snapshot {
        let stack = resource(STACK, "web-dev", None);
        let mut provider = resource(PROVIDER, "default", Some("prov-1"));
        provider.parent = Some(stack.urn.clone());
        let mut pet = random(PET, "pet", Some("pet-1"));
        pet.inputs
            .insert("length".into(), PropertyValue::Number(2.0));
        pet.outputs.insert(
            "token".into(),
            PropertyValue::secret(PropertyValue::String(SECRET.into())),
        );
        let mut pw = random(PASSWORD, "pw", Some("pw-1"));
        pw.dependencies = vec![pet.urn.clone()];
        Snapshot {
            manifest: manifest("2026-01-01T00:00:00Z"),
            secrets_providers: None,
            resources: vec![
                stack,
                provider,
                pet,
                pw,
                random(ID, "old", Some("old-1")),
                random(ID, "gone", Some("gone-1")),
            ],
            pending_operations: Vec::new(),
            extra: JsonMap::new(),
        }
    }

    fn encode(snapshot: &Snapshot) -> DeploymentV3 {
        crate::state::encode_deployment(snapshot, SecretsMode::Encrypt(&TestCrypter)).unwrap()
    }

    fn json(deployment: &DeploymentV3) -> Value {
        serde_json::to_value(deployment).unwrap()
    }

    fn manager(base: Snapshot, recorder: &Arc<Recorder>) -> SnapshotManager {
        SnapshotManager::new(
            base,
            manifest("2026-01-02T00:00:00Z"),
            Some(recorder.clone() as Arc<dyn Persister>),
            Arc::new(TestCrypter),
        )
        .unwrap()
    }

    /// A realistic deployment over [`base_snapshot`]: same steps, a component and its child,
    /// an update, a create-before-replace, a delete-before-replace, a delete, and finally an
    /// operation that never ends. `after` runs after every record.
    fn deploy(m: &SnapshotManager, mut after: impl FnMut(&SnapshotManager)) {
        let base = m.base().resources.clone();
        let mut step = |f: &mut dyn FnMut()| {
            f();
            after(m);
        };
        let begin = |kind, r: &ResourceState| m.begin(kind, r).unwrap();
        let end = |id, mutations| m.end(id, mutations).unwrap();

        // Same steps re-record the stack and the provider.
        step(&mut || {
            m.apply(vec![
                Mutation::Append(base[0].clone()),
                Mutation::RemoveBase(0),
            ])
            .unwrap()
        });
        step(&mut || {
            m.apply(vec![
                Mutation::Append(base[1].clone()),
                Mutation::RemoveBase(1),
            ])
            .unwrap()
        });
        // A component (no provider call) and its child.
        let mut component = resource(COMPONENT, "comp", None);
        component.parent = Some(base[0].urn.clone());
        step(&mut || m.apply(vec![Mutation::Append(component.clone())]).unwrap());
        let mut child = random(STRING, "child", None);
        child.parent = Some(component.urn.clone());
        let mut id = PendingId(0);
        step(&mut || id = begin(OperationKind::Creating, &child));
        child.id = Some("child-1".into());
        step(&mut || end(id, vec![Mutation::Append(child.clone())]));
        // The component's outputs, registered after its child.
        component
            .outputs
            .insert("child".into(), PropertyValue::String("child-1".into()));
        step(&mut || {
            m.apply(vec![Mutation::ReplaceAppended(
                component.urn.clone(),
                component.clone(),
            )])
            .unwrap()
        });
        // Update of pet.
        let mut pet = base[2].clone();
        pet.inputs
            .insert("length".into(), PropertyValue::Number(3.0));
        step(&mut || id = begin(OperationKind::Updating, &pet));
        step(&mut || {
            end(
                id,
                vec![Mutation::Append(pet.clone()), Mutation::RemoveBase(2)],
            )
        });
        // Create-before-replace of pw: the old copy stays, marked `delete`, until deleted.
        let mut pw = base[3].clone();
        pw.id = None;
        step(&mut || id = begin(OperationKind::Creating, &pw));
        pw.id = Some("pw-2".into());
        let mut old_pw = base[3].clone();
        old_pw.delete = true;
        step(&mut || {
            end(
                id,
                vec![
                    Mutation::Append(pw.clone()),
                    Mutation::ReplaceBase(3, old_pw.clone()),
                ],
            )
        });
        step(&mut || id = begin(OperationKind::Deleting, &old_pw));
        step(&mut || end(id, vec![Mutation::RemoveBase(3)]));
        // Delete-before-replace of old: deleted first, kept as `pendingReplacement`.
        step(&mut || id = begin(OperationKind::Deleting, &base[4]));
        let mut replaced = base[4].clone();
        replaced.pending_replacement = true;
        step(&mut || end(id, vec![Mutation::ReplaceBase(4, replaced.clone())]));
        let mut old = base[4].clone();
        old.id = None;
        step(&mut || id = begin(OperationKind::Creating, &old));
        old.id = Some("old-2".into());
        step(&mut || {
            end(
                id,
                vec![Mutation::Append(old.clone()), Mutation::RemoveBase(4)],
            )
        });
        // Delete of gone.
        step(&mut || id = begin(OperationKind::Deleting, &base[5]));
        step(&mut || end(id, vec![Mutation::RemoveBase(5)]));
        // An operation interrupted by the crash.
        step(&mut || {
            begin(OperationKind::Creating, &random(ID, "late", None));
        });
    }

    fn names(resources: &[ResourceV3]) -> Vec<String> {
        resources
            .iter()
            .map(|r| {
                let mut name = r.urn.name().to_owned();
                if r.delete {
                    name.push_str("[delete]");
                }
                if r.pending_replacement {
                    name.push_str("[pendingReplacement]");
                }
                name
            })
            .collect()
    }

    fn pending(deployment: &DeploymentV3) -> Vec<String> {
        deployment
            .pending_operations
            .iter()
            .map(|op| format!("{} {}", json_str(&op.kind), op.resource.urn.name()))
            .collect()
    }

    fn json_str(kind: &OperationKind) -> String {
        serde_json::to_value(kind)
            .unwrap()
            .as_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn mutations_apply_as_the_table_says() {
        let base: Vec<ResourceV3> = ["a", "b", "c"]
            .iter()
            .map(|n| {
                resource(ID, n, Some(n))
                    .try_map_properties(|_, _| Ok::<_, ()>(JsonMap::new()))
                    .unwrap()
            })
            .collect();
        let x = || Resource::new(urn(ID, "x"), TypeToken::parse(ID).unwrap(), true);
        let marked = |i: usize| {
            let mut r: ResourceV3 = base[i].clone();
            r.delete = true;
            r
        };
        type Batch = Vec<Mutation<ResourceV3>>;
        /// The resulting resources' names, or a fragment of the error.
        type Expected = Result<&'static [&'static str], &'static str>;
        let cases: Vec<(&str, Vec<Batch>, Expected)> = vec![
            ("nothing", vec![], Ok(&["a", "b", "c"])),
            (
                "append",
                vec![vec![Mutation::Append(x())]],
                Ok(&["x", "a", "b", "c"]),
            ),
            (
                "appends keep their order",
                vec![
                    vec![Mutation::Append(x())],
                    vec![Mutation::Append({
                        let mut y = x();
                        y.urn = urn(ID, "y");
                        y
                    })],
                ],
                Ok(&["x", "y", "a", "b", "c"]),
            ),
            (
                "remove",
                vec![vec![Mutation::RemoveBase(1)]],
                Ok(&["a", "c"]),
            ),
            (
                "replace keeps the place",
                vec![vec![Mutation::ReplaceBase(1, marked(1))]],
                Ok(&["a", "b[delete]", "c"]),
            ),
            (
                "replace then remove",
                vec![
                    vec![Mutation::ReplaceBase(0, marked(0))],
                    vec![Mutation::RemoveBase(0)],
                ],
                Ok(&["b", "c"]),
            ),
            (
                "the last replacement wins",
                vec![
                    vec![Mutation::ReplaceBase(2, marked(2))],
                    vec![Mutation::ReplaceBase(2, base[2].clone())],
                ],
                Ok(&["a", "b", "c"]),
            ),
            (
                "double removal",
                vec![vec![Mutation::RemoveBase(1)], vec![Mutation::RemoveBase(1)]],
                Err(
                    "cannot remove base resource 1 (urn:pulumi:dev::web::random:index/randomId:RandomId::b): it was already removed",
                ),
            ),
            (
                "double removal in one batch",
                vec![vec![Mutation::RemoveBase(1), Mutation::RemoveBase(1)]],
                Err("it was already removed"),
            ),
            (
                "replacing a removed resource",
                vec![
                    vec![Mutation::RemoveBase(0)],
                    vec![Mutation::ReplaceBase(0, marked(0))],
                ],
                Err("cannot replace base resource 0"),
            ),
            (
                "replace an appended state",
                vec![
                    vec![Mutation::Append(x())],
                    vec![Mutation::ReplaceAppended(urn(ID, "x"), {
                        let mut x = x();
                        x.delete = true;
                        x
                    })],
                ],
                Ok(&["x[delete]", "a", "b", "c"]),
            ),
            (
                "append and replace in one batch",
                vec![vec![
                    Mutation::Append(x()),
                    Mutation::ReplaceAppended(urn(ID, "x"), {
                        let mut x = x();
                        x.pending_replacement = true;
                        x
                    }),
                ]],
                Ok(&["x[pendingReplacement]", "a", "b", "c"]),
            ),
            (
                "replace a state never appended",
                vec![vec![Mutation::ReplaceAppended(urn(ID, "a"), marked(0))]],
                Err(
                    "cannot replace the state of urn:pulumi:dev::web::random:index/randomId:RandomId::a: this deployment has not recorded it",
                ),
            ),
            (
                "out of range",
                vec![vec![Mutation::RemoveBase(3)]],
                Err("cannot remove base resource 3: the base has 3 resources"),
            ),
            (
                "a failed batch changes nothing",
                vec![vec![
                    Mutation::Append(x()),
                    Mutation::RemoveBase(0),
                    Mutation::RemoveBase(9),
                ]],
                Err("the base has 3 resources"),
            ),
        ];
        for (name, batches, expected) in cases {
            let mut overlay = Overlay::new(0);
            let mut result = Ok(());
            for batch in batches {
                result = overlay.apply(&base, batch);
                if result.is_err() {
                    break;
                }
            }
            match (result, expected) {
                (Ok(()), Ok(expected)) => {
                    assert_eq!(names(&overlay.resources(&base)), expected, "{name}")
                }
                (Err(e), Err(fragment)) => {
                    assert!(e.to_string().contains(fragment), "{name}: {e}");
                    if name == "a failed batch changes nothing" {
                        assert_eq!(names(&overlay.resources(&base)), ["a", "b", "c"]);
                    }
                }
                (got, expected) => panic!("{name}: got {got:?}, expected {expected:?}"),
            }
        }
    }

    #[test]
    fn replay_of_the_journal_equals_the_current_snapshot() {
        let base = base_snapshot();
        let stored_base = encode(&base);
        let recorder = Arc::new(Recorder::default());
        let m = manager(base, &recorder);
        deploy(&m, |_| {});
        m.flush().unwrap();
        let current = m.current();
        let replayed = replay(&stored_base, &recorder.journal()).unwrap();
        assert_eq!(json(&replayed), json(&encode(&current)));
        assert_eq!(
            names(&replayed.resources),
            ["web-dev", "default", "comp", "child", "pet", "pw", "old"]
        );
        assert_eq!(pending(&replayed), ["creating late"]);
        assert_eq!(replayed.manifest.time, "2026-01-02T00:00:00Z");

        // Finishing saves exactly that snapshot and empties the journal.
        let finished = m.finish().unwrap();
        assert_eq!(finished, current);
        let saved = recorder.saved.lock().unwrap().clone().unwrap();
        assert_eq!(json(&saved), json(&replayed));
        assert!(recorder.journal().is_empty());
        assert!(matches!(
            m.begin(OperationKind::Creating, &random(ID, "after", None)),
            Err(JournalError::Finished)
        ));
        // A journal left behind after compaction is recognised as such, not replayed again.
        let mut leftover = JournalHeader::new(&stored_base, saved.manifest.clone())
            .to_line()
            .unwrap();
        leftover.extend_from_slice(b"{\"seq\":1,\"mutations\":[{\"removeBase\":0}]}\n");
        let err = replay(&saved, &leftover).unwrap_err();
        assert!(
            matches!(err, JournalError::AlreadyCompacted { .. }),
            "{err}"
        );
    }

    #[test]
    fn every_truncation_replays_to_a_consistent_snapshot() {
        let base = base_snapshot();
        let stored_base = encode(&base);
        let recorder = Arc::new(Recorder::default());
        let m = manager(base, &recorder);
        // After every record: the journal length and the snapshot it must replay to.
        let mut points = vec![(recorder.journal().len(), {
            let mut start = stored_base.clone();
            start.manifest = manifest("2026-01-02T00:00:00Z");
            start
        })];
        deploy(&m, |m| {
            m.flush().unwrap();
            points.push((recorder.journal().len(), encode(&m.current())));
        });
        let journal = recorder.journal();
        assert_eq!(points.last().unwrap().0, journal.len());
        assert_eq!(
            journal.iter().filter(|b| **b == b'\n').count(),
            points.len()
        );

        // Cut inside the header: nothing happened.
        for cut in 0..points[0].0 {
            let replayed = replay(&stored_base, &journal[..cut]).unwrap();
            assert_eq!(json(&replayed), json(&stored_base), "cut at {cut}");
        }
        for (i, (len, expected)) in points.iter().enumerate() {
            let next = points.get(i + 1).map_or(*len + 1, |(next, _)| *next);
            // At the line boundary and at every byte of the next (torn) line.
            for cut in *len..next.min(journal.len() + 1) {
                let replayed = replay(&stored_base, &journal[..cut])
                    .unwrap_or_else(|e| panic!("cut at {cut} (after record {i}): {e}"));
                assert_eq!(json(&replayed), json(expected), "cut at {cut}");
                crate::state::integrity::verify_resources(&replayed.resources)
                    .unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
            }
        }

        // The pending operations at chosen points (index = number of records).
        let pending_at = |records: usize| pending(&points[records].1);
        assert_eq!(pending_at(3), Vec::<String>::new());
        assert_eq!(pending_at(4), ["creating child"]);
        assert_eq!(pending_at(5), Vec::<String>::new());
        let component = &points[6].1.resources[2];
        assert_eq!(component.urn.name(), "comp");
        assert_eq!(component.outputs["child"], "child-1");
        assert_eq!(pending_at(7), ["updating pet"]);
        assert_eq!(pending_at(9), ["creating pw"]);
        assert_eq!(
            names(&points[10].1.resources),
            [
                "web-dev",
                "default",
                "comp",
                "child",
                "pet",
                "pw",
                "pw[delete]",
                "old",
                "gone"
            ]
        );
        assert_eq!(pending_at(11), ["deleting pw"]);
        assert_eq!(pending_at(13), ["deleting old"]);
        assert!(names(&points[14].1.resources).contains(&"old[pendingReplacement]".to_owned()));
        assert_eq!(pending_at(15), ["creating old"]);
        assert_eq!(pending_at(17), ["deleting gone"]);
        assert_eq!(pending_at(19), ["creating late"]);
        assert_eq!(points.len(), 20);
    }

    /// A base of `count` resources, and the bytes one update step appends to its journal.
    fn bytes_of_one_step(count: usize) -> (Vec<u8>, usize) {
        let resources: Vec<ResourceState> = (0..count)
            .map(|i| resource(ID, &format!("r{i}"), Some(&format!("id-{i}"))))
            .collect();
        let base = Snapshot {
            resources,
            ..base_snapshot()
        };
        let recorder = Arc::new(Recorder::default());
        let m = manager(base, &recorder);
        let header = recorder.journal().len();
        let mut updated = m.base().resources[3].clone();
        updated
            .inputs
            .insert("byteLength".into(), PropertyValue::Number(8.0));
        let id = m.begin(OperationKind::Updating, &updated).unwrap();
        m.end(id, vec![Mutation::Append(updated), Mutation::RemoveBase(3)])
            .unwrap();
        let appends = recorder.appends.lock().unwrap().len();
        (recorder.journal()[header..].to_vec(), appends)
    }

    #[test]
    fn bytes_per_step_do_not_depend_on_the_size_of_the_stack() {
        let (small, small_appends) = bytes_of_one_step(10);
        let (large, large_appends) = bytes_of_one_step(1_000);
        assert_eq!(
            String::from_utf8(small.clone()).unwrap(),
            String::from_utf8(large).unwrap()
        );
        assert_eq!((small_appends, large_appends), (3, 3), "header, begin, end");
        assert!(small.len() < 1_000, "{} bytes for one step", small.len());
    }

    #[test]
    fn the_lines_have_the_documented_shape() {
        let base = base_snapshot();
        let recorder = Arc::new(Recorder::default());
        let m = manager(base.clone(), &recorder);
        let id = m
            .begin(OperationKind::Creating, &random(ID, "new", None))
            .unwrap();
        m.end(
            id,
            vec![
                Mutation::Append(random(ID, "new", Some("n"))),
                Mutation::RemoveBase(5),
            ],
        )
        .unwrap();
        m.apply(vec![Mutation::ReplaceBase(4, base.resources[4].clone())])
            .unwrap();
        m.drop_base_pending().unwrap();
        m.flush().unwrap();
        let journal = String::from_utf8(recorder.journal()).unwrap();
        let lines: Vec<Value> = journal
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[0]["journal"], 1);
        assert_eq!(lines[0]["base"]["time"], "2026-01-01T00:00:00Z");
        assert_eq!(lines[0]["base"]["resources"], 6);
        assert_eq!(lines[0]["manifest"]["time"], "2026-01-02T00:00:00Z");
        assert!(
            journal
                .lines()
                .nth(1)
                .unwrap()
                .starts_with(r#"{"seq":1,"begin":"creating","resource":{"urn":"#)
        );
        assert_eq!(lines[2]["seq"], 2);
        assert_eq!(lines[2]["end"], 1);
        assert_eq!(lines[2]["mutations"][0]["append"]["id"], "n");
        assert_eq!(lines[2]["mutations"][1]["removeBase"], 5);
        assert_eq!(lines[3]["mutations"][0]["replaceBase"][0], 4);
        assert_eq!(lines[3]["mutations"][0]["replaceBase"][1]["id"], "old-1");
        assert_eq!(
            lines[4],
            serde_json::json!({"seq": 4, "dropBasePending": true})
        );
        assert_eq!(lines.len(), 5);
    }

    #[test]
    fn mutation_only_records_are_batched_with_the_next_durable_record() {
        let base = base_snapshot();
        let stored_base = encode(&base);
        let recorder = Arc::new(Recorder::default());
        let m = manager(base.clone(), &recorder);
        m.apply(vec![
            Mutation::Append(base.resources[0].clone()),
            Mutation::RemoveBase(0),
        ])
        .unwrap();
        m.apply(vec![
            Mutation::Append(base.resources[1].clone()),
            Mutation::RemoveBase(1),
        ])
        .unwrap();
        assert_eq!(
            recorder.appends.lock().unwrap().len(),
            1,
            "only the header so far"
        );
        let id = m
            .begin(OperationKind::Deleting, &base.resources[5])
            .unwrap();
        let appends = recorder.appends.lock().unwrap().clone();
        assert_eq!(appends.len(), 2);
        assert_eq!(
            appends[1].iter().filter(|b| **b == b'\n').count(),
            3,
            "two applies, one begin"
        );
        m.end(id, vec![Mutation::RemoveBase(5)]).unwrap();
        let replayed = replay(&stored_base, &recorder.journal()).unwrap();
        assert_eq!(json(&replayed), json(&encode(&m.current())));
    }

    #[test]
    fn the_base_pending_operations_stay_until_dropped() {
        let mut base = base_snapshot();
        base.pending_operations.push(Operation {
            resource: random(ID, "interrupted", None),
            kind: OperationKind::Creating,
        });
        let stored_base = encode(&base);
        let recorder = Arc::new(Recorder::default());
        let m = manager(base, &recorder);
        m.begin(OperationKind::Updating, &m.base().resources[2].clone())
            .unwrap();
        let before = encode(&m.current());
        assert_eq!(pending(&before), ["creating interrupted", "updating pet"]);
        assert_eq!(
            json(&replay(&stored_base, &recorder.journal()).unwrap()),
            json(&before)
        );
        m.drop_base_pending().unwrap();
        m.flush().unwrap();
        let after = encode(&m.current());
        assert_eq!(pending(&after), ["updating pet"]);
        assert_eq!(
            json(&replay(&stored_base, &recorder.journal()).unwrap()),
            json(&after)
        );
    }

    #[test]
    fn a_journal_for_another_checkpoint_is_refused_naming_both() {
        let base = base_snapshot();
        let recorder = Arc::new(Recorder::default());
        let m = manager(base.clone(), &recorder);
        m.begin(OperationKind::Creating, &random(ID, "x", None))
            .unwrap();
        let mut other = base;
        other.manifest.time = "2025-06-01T00:00:00Z".into();
        other.resources.pop();
        let err = replay(&encode(&other), &recorder.journal()).unwrap_err();
        let message = err.to_string();
        assert!(
            matches!(err, JournalError::HeaderMismatch { .. }),
            "{message}"
        );
        assert!(
            message.contains("checkpoint of 2026-01-01T00:00:00Z with 6 resources")
                && message.contains("checkpoint of 2025-06-01T00:00:00Z with 5 resources"),
            "{message}"
        );
        // Same time and count, different resources: still refused.
        let mut renamed = base_snapshot();
        renamed.resources[5].id = Some("gone-2".into());
        let err = replay(&encode(&renamed), &recorder.journal()).unwrap_err();
        assert!(matches!(err, JournalError::HeaderMismatch { .. }), "{err}");
    }

    #[test]
    fn secrets_are_ciphertext_in_the_journal() {
        let base = base_snapshot();
        let stored_base = encode(&base);
        let recorder = Arc::new(Recorder::default());
        let m = manager(base.clone(), &recorder);
        let mut pet = base.resources[2].clone();
        pet.inputs.insert(
            "prefix".into(),
            PropertyValue::secret(PropertyValue::String(SECRET.into())),
        );
        let id = m.begin(OperationKind::Updating, &pet).unwrap();
        m.end(
            id,
            vec![Mutation::Append(pet.clone()), Mutation::RemoveBase(2)],
        )
        .unwrap();
        let journal = recorder.journal();
        let text = String::from_utf8(journal.clone()).unwrap();
        assert!(
            !text.contains(SECRET),
            "plaintext secret in the journal:\n{text}"
        );
        assert!(text.contains(&format!("x:{}", hex::encode(format!("\"{SECRET}\"")))));
        // Replayed and decoded, the secret is back.
        let replayed = replay(&stored_base, &journal).unwrap();
        let decoded = decode_deployment(replayed, Some(&TestCrypter)).unwrap();
        let found = decoded.resources.iter().find(|r| r.urn == pet.urn).unwrap();
        assert_eq!(found, &pet);
    }

    #[test]
    fn a_corrupt_line_in_the_middle_is_an_error() {
        let base = base_snapshot();
        let stored_base = encode(&base);
        let recorder = Arc::new(Recorder::default());
        let m = manager(base, &recorder);
        deploy(&m, |m| m.flush().unwrap());
        let journal = String::from_utf8(recorder.journal()).unwrap();
        let mut lines: Vec<&str> = journal.lines().collect();
        // Garbage as the last complete line is a torn write; in the middle it is corruption.
        let garbled = format!("{}garbage\n", lines[..3].join("\n") + "\n");
        assert!(replay(&stored_base, garbled.as_bytes()).is_ok());
        lines[2] = "{\"seq\":2,";
        let err = replay(&stored_base, (lines.join("\n") + "\n").as_bytes()).unwrap_err();
        assert!(err.to_string().starts_with("journal line 3:"), "{err}");
        // A missing record.
        let gap = format!("{}\n{}\n{}\n", lines[0], lines[1], lines[3]);
        let err = replay(&stored_base, gap.as_bytes()).unwrap_err();
        assert!(
            err.to_string()
                .contains("journal line 3: expected record 2, found record 3"),
            "{err}"
        );
        // An end whose begin is missing, or a double removal, is never silently skipped.
        let header = journal.lines().next().unwrap();
        let bad_end = format!(
            "{header}\n{{\"seq\":1,\"end\":7,\"mutations\":[]}}\n{{\"seq\":2,\"mutations\":[]}}\n"
        );
        let err = replay(&stored_base, bad_end.as_bytes()).unwrap_err();
        assert!(
            err.to_string().contains("no operation 7 is pending"),
            "{err}"
        );
        let twice = format!(
            "{header}\n{{\"seq\":1,\"mutations\":[{{\"removeBase\":5}}]}}\n{{\"seq\":2,\"mutations\":[{{\"removeBase\":5}}]}}\n"
        );
        let err = replay(&stored_base, twice.as_bytes()).unwrap_err();
        assert!(
            err.to_string()
                .contains("journal line 3: invalid mutation: cannot remove base resource 5"),
            "{err}"
        );
    }

    #[test]
    fn invalid_steps_are_refused_before_anything_is_written() {
        let base = base_snapshot();
        let recorder = Arc::new(Recorder::default());
        let m = manager(base, &recorder);
        let id = m
            .begin(OperationKind::Deleting, &m.base().resources[5].clone())
            .unwrap();
        let before = recorder.journal();
        let err = m
            .end(id, vec![Mutation::RemoveBase(5), Mutation::RemoveBase(5)])
            .unwrap_err();
        assert!(err.to_string().contains("already removed"), "{err}");
        assert_eq!(recorder.journal(), before);
        assert_eq!(m.current().pending_operations.len(), 1, "still pending");
        m.end(id, vec![Mutation::RemoveBase(5)]).unwrap();
        let err = m.end(id, vec![]).unwrap_err();
        assert!(matches!(err, JournalError::UnknownOperation(1)), "{err}");
        let err = SnapshotManager::new(
            base_snapshot(),
            base_snapshot().manifest,
            Some(recorder.clone() as Arc<dyn Persister>),
            Arc::new(TestCrypter),
        )
        .err()
        .unwrap();
        assert!(matches!(err, JournalError::SameManifest { .. }), "{err}");
    }

    #[test]
    fn a_failed_write_stops_the_journal_but_not_the_final_save() {
        let recorder = Arc::new(Recorder {
            fail_append: Some(2),
            ..Recorder::default()
        });
        let m = manager(base_snapshot(), &recorder);
        let id = m
            .begin(OperationKind::Deleting, &m.base().resources[5].clone())
            .unwrap();
        let err = m.end(id, vec![Mutation::RemoveBase(5)]).unwrap_err();
        assert!(matches!(err, JournalError::Persist(_)), "{err}");
        assert_eq!(
            err.to_string(),
            "cannot write the snapshot journal: writing dev.journal: disk full"
        );
        let err = m
            .begin(OperationKind::Creating, &random(ID, "x", None))
            .unwrap_err();
        assert!(err.to_string().contains("disk full"), "{err}");
        assert!(
            m.current().pending_operations.is_empty(),
            "the failed begin is not pending"
        );
        // The snapshot in memory is still the best record of what happened.
        let finished = m.finish().unwrap();
        assert_eq!(finished.resources.len(), 5);
        assert_eq!(
            recorder
                .saved
                .lock()
                .unwrap()
                .as_ref()
                .unwrap()
                .resources
                .len(),
            5
        );
    }

    /// Holds every append after the header until released, counting them.
    struct Gate {
        inner: Recorder,
        open: Mutex<bool>,
        opened: Condvar,
        entered: AtomicUsize,
    }

    impl Persister for Gate {
        fn append(&self, lines: &[u8]) -> Result<(), PersistError> {
            if self.entered.fetch_add(1, Ordering::SeqCst) > 0 {
                let mut open = self.open.lock().unwrap();
                while !*open {
                    open = self.opened.wait(open).unwrap();
                }
            }
            self.inner.append(lines)
        }
        fn save(&self, deployment: &[u8]) -> Result<(), PersistError> {
            self.inner.save(deployment)
        }
    }

    #[test]
    fn records_queued_during_a_write_share_the_next_one() {
        let gate = Arc::new(Gate {
            inner: Recorder::default(),
            open: Mutex::new(false),
            opened: Condvar::new(),
            entered: AtomicUsize::new(0),
        });
        let m = Arc::new(
            SnapshotManager::new(
                base_snapshot(),
                manifest("2026-01-02T00:00:00Z"),
                Some(gate.clone() as Arc<dyn Persister>),
                Arc::new(TestCrypter),
            )
            .unwrap(),
        );
        // The first begin's write is held at the gate; four more begins queue behind it.
        let names = ["a", "b", "c", "d", "e"];
        let begins: Vec<_> = names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let m = m.clone();
                let resource = random(ID, name, None);
                let handle =
                    std::thread::spawn(move || m.begin(OperationKind::Creating, &resource));
                if i == 0 {
                    while gate.entered.load(Ordering::SeqCst) < 2 {
                        std::thread::yield_now();
                    }
                }
                handle
            })
            .collect();
        while m.current().pending_operations.len() < names.len() {
            std::thread::yield_now();
        }
        assert!(
            begins.iter().all(|b| !b.is_finished()),
            "no begin returns before its record is durable"
        );
        *gate.open.lock().unwrap() = true;
        gate.opened.notify_all();
        for begin in begins {
            begin.join().unwrap().unwrap();
        }
        // The header, the first begin, then the other four together.
        let appends = gate.inner.appends.lock().unwrap().clone();
        assert_eq!(appends.len(), 3, "{appends:?}");
        assert_eq!(appends[2].iter().filter(|b| **b == b'\n').count(), 4);
        // In sequence order, and the journal replays to five pending creates.
        let journal = gate.inner.journal();
        let seqs: Vec<u64> = journal
            .split(|b| *b == b'\n')
            .filter(|line| !line.is_empty())
            .skip(1)
            .map(|line| {
                serde_json::from_slice::<Value>(line).unwrap()["seq"]
                    .as_u64()
                    .unwrap()
            })
            .collect();
        assert_eq!(seqs, [1, 2, 3, 4, 5]);
        let replayed = replay(&encode(&base_snapshot()), &journal).unwrap();
        assert_eq!(replayed.pending_operations.len(), 5);
    }

    /// The owner's finish moves the base instead of copying it; what it saves and returns must
    /// be exactly what the copying finish does, after the same deployment.
    #[test]
    fn the_owners_finish_saves_what_the_shared_finish_saves() {
        let (copied, moved) = (Arc::new(Recorder::default()), Arc::new(Recorder::default()));
        let shared = manager(base_snapshot(), &copied);
        let owned = manager(base_snapshot(), &moved);
        deploy(&shared, |_| {});
        deploy(&owned, |_| {});
        let from_shared = shared.finish().unwrap();
        let from_owned = owned.into_finished().unwrap();
        assert_eq!(from_owned, from_shared);
        assert_eq!(
            names(&encode(&from_owned).resources),
            ["web-dev", "default", "comp", "child", "pet", "pw", "old"]
        );
        let saved = |r: &Recorder| json(&r.saved.lock().unwrap().clone().unwrap());
        assert_eq!(saved(&moved), saved(&copied));
        assert!(moved.journal().is_empty(), "the journal is emptied");
    }

    #[test]
    fn a_preview_writes_nothing() {
        let m = SnapshotManager::new(
            base_snapshot(),
            manifest("2026-01-02T00:00:00Z"),
            None,
            Arc::new(TestCrypter),
        )
        .unwrap();
        deploy(&m, |_| {});
        let snapshot = m.finish().unwrap();
        assert_eq!(snapshot.resources.len(), 7);
        assert_eq!(snapshot.pending_operations.len(), 1);
    }

    #[test]
    fn concurrent_steps_replay_to_the_same_snapshot() {
        let count = 200;
        let resources: Vec<ResourceState> = (0..count)
            .map(|i| resource(ID, &format!("r{i}"), Some(&format!("id-{i}"))))
            .collect();
        let base = Snapshot {
            resources,
            ..base_snapshot()
        };
        let stored_base = encode(&base);
        let recorder = Arc::new(Recorder::default());
        let m = Arc::new(manager(base, &recorder));
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let m = m.clone();
                std::thread::spawn(move || {
                    for i in (t..count).step_by(8) {
                        let mut r = m.base().resources[i].clone();
                        r.inputs.insert("n".into(), PropertyValue::Number(i as f64));
                        if i % 3 == 0 {
                            m.apply(vec![Mutation::Append(r), Mutation::RemoveBase(i)])
                                .unwrap();
                        } else {
                            let id = m.begin(OperationKind::Updating, &r).unwrap();
                            if i % 7 != 0 {
                                m.end(id, vec![Mutation::Append(r), Mutation::RemoveBase(i)])
                                    .unwrap();
                            }
                        }
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        m.flush().unwrap();
        let replayed = replay(&stored_base, &recorder.journal()).unwrap();
        assert_eq!(json(&replayed), json(&encode(&m.current())));
        assert!(!replayed.pending_operations.is_empty());
    }
}
