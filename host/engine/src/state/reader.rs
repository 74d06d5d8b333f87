//! Reads a stored deployment's JSON text straight into the engine's [`Snapshot`]: each
//! resource is parsed and decoded in turn and its JSON dropped, so a large state is never held
//! whole as JSON values (`DeploymentV3`) beside its decoded form.
//!
//! It accepts exactly what deserializing a [`DeploymentV3`] (or a stack file's
//! [`VersionedCheckpoint`](super::VersionedCheckpoint)) and then decoding it accepts, and fails
//! with the same typed [`StateError`]s. The two share one reading of each object's fields
//! ([`read_deployment`], [`read_checkpoint`]), which also gives [`DeploymentV3`] and
//! [`CheckpointV3`] their `Deserialize`.

use std::cell::RefCell;
use std::fmt;

use serde::de::{DeserializeSeed, Error, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::codec::{StateError, decode_owned_resource};
use super::{
    CheckpointV3, DEPLOYMENT_VERSION, DeploymentV3, JsonMap, Manifest, Operation, Resource,
    ResourceState, ResourceV3, SecretsProvider, Snapshot,
};
use crate::secrets::Crypter;

/// Decodes a deployment document (the `deployment` of `stack export`, or a stack file's
/// `latest`) from its JSON text, decrypting secrets.
pub fn decode_deployment_json(
    text: &[u8],
    decrypter: Option<&dyn Crypter>,
) -> Result<Snapshot, StateError> {
    let failure = RefCell::new(None);
    let seed = DeploymentSeed {
        decrypter,
        capacity: capacity_for(text),
        failure: &failure,
    };
    read_whole(text, seed, &failure)
}

/// Decodes the latest deployment of a stack file (`{"version": 3, "checkpoint": {"stack": ...,
/// "latest": ...}}`) from its JSON text, decrypting secrets; `None` when the stack has none.
pub fn decode_checkpoint_json(
    text: &[u8],
    decrypter: Option<&dyn Crypter>,
) -> Result<Option<Snapshot>, StateError> {
    let failure = RefCell::new(None);
    let seed = FileSeed(DeploymentSeed {
        decrypter,
        capacity: capacity_for(text),
        failure: &failure,
    });
    read_file(text, seed, &failure)
}

/// How many resources `text` may hold, so their vector is sized once: a vector grown by
/// doubling holds up to twice what it needs, and briefly both copies while it grows (at
/// 100,000 resources, 92 MB for 70). It counts the `"urn"` keys (an upper bound: a pending
/// operation's resource and a resource reference have one too), and allows at most one
/// resource for every 256 bytes, so that a text made of such keys cannot make it reserve more
/// than about three times its own size.
fn capacity_for(text: &[u8]) -> usize {
    memchr::memmem::find_iter(text, b"\"urn\"")
        .count()
        .min(text.len() / 256)
}

/// Reads a whole stack file with `seed` (a [`FileSeed`]), refusing another format version.
fn read_file<'de, S: DeserializeSeed<'de, Value = (u32, Option<T>)>, T>(
    text: &'de [u8],
    seed: S,
    failure: &RefCell<Option<StateError>>,
) -> Result<Option<T>, StateError> {
    let (version, latest) = read_whole(text, seed, failure)?;
    if version != DEPLOYMENT_VERSION {
        return Err(StateError::UnsupportedVersion {
            found: u64::from(version),
        });
    }
    Ok(latest)
}

/// Runs `seed` over the whole of `text` (nothing may follow it), keeping a decoding failure
/// typed.
fn read_whole<'de, S: DeserializeSeed<'de>>(
    text: &'de [u8],
    seed: S,
    failure: &RefCell<Option<StateError>>,
) -> Result<S::Value, StateError> {
    let mut deserializer = serde_json::Deserializer::from_slice(text);
    seed.deserialize(&mut deserializer)
        .and_then(|value| deserializer.end().map(|()| value))
        .map_err(|e| failure.take().unwrap_or(StateError::Malformed(e)))
}

/// Reads a deployment object, decoding its resources as they come.
#[derive(Clone, Copy)]
struct DeploymentSeed<'a> {
    decrypter: Option<&'a dyn Crypter>,
    /// The resources expected, for the vector's capacity (see [`capacity_for`]).
    capacity: usize,
    /// Where a decoding failure is kept: serde's errors are text only.
    failure: &'a RefCell<Option<StateError>>,
}

impl DeploymentSeed<'_> {
    /// Decodes one stored resource, keeping a failure typed for [`read_whole`].
    fn decode<E: Error>(
        &self,
        resource: Resource<JsonMap>,
        pending: bool,
    ) -> Result<ResourceState, E> {
        decode_owned_resource(resource, self.decrypter, pending).map_err(|e| {
            let message = e.to_string();
            *self.failure.borrow_mut() = Some(e);
            E::custom(message)
        })
    }
}

impl<'de> DeserializeSeed<'de> for DeploymentSeed<'_> {
    type Value = Snapshot;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Snapshot, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for DeploymentSeed<'_> {
    type Value = Snapshot;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a deployment object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Snapshot, A::Error> {
        let parts = read_deployment(map, |map| map.next_value_seed(ResourcesSeed(self)))?;
        let pending_operations = parts
            .pending_operations
            .into_iter()
            .map(|op| {
                Ok(Operation {
                    resource: self.decode(op.resource, true)?,
                    kind: op.kind,
                })
            })
            .collect::<Result<_, A::Error>>()?;
        Ok(Snapshot {
            manifest: parts.manifest,
            secrets_providers: parts.secrets_providers,
            resources: parts.resources.unwrap_or_default(),
            pending_operations,
            extra: parts.extra,
        })
    }
}

/// A deployment object's fields, its resources read by the caller's `R`.
struct DeploymentParts<R> {
    manifest: Manifest,
    secrets_providers: Option<SecretsProvider>,
    resources: Option<R>,
    pending_operations: Vec<Operation<JsonMap>>,
    extra: JsonMap,
}

/// Reads a deployment object's fields as [`DeploymentV3`]'s derived form would (`manifest`
/// required, unknown fields kept in `extra`), its `resources` with `read_resources`. Written
/// out instead of derived: a derived `Deserialize` with a flattened field buffers the whole
/// object (every resource) before it reads a field.
fn read_deployment<'de, A: MapAccess<'de>, R>(
    mut map: A,
    mut read_resources: impl FnMut(&mut A) -> Result<R, A::Error>,
) -> Result<DeploymentParts<R>, A::Error> {
    let mut manifest: Option<Manifest> = None;
    let mut secrets_providers: Option<Option<SecretsProvider>> = None;
    let mut resources: Option<R> = None;
    let mut operations: Option<Vec<Operation<JsonMap>>> = None;
    let mut extra = JsonMap::new();
    while let Some(key) = map.next_key::<String>()? {
        match key.as_str() {
            "manifest" => set(&mut manifest, "manifest", map.next_value()?)?,
            "secrets_providers" => set(
                &mut secrets_providers,
                "secrets_providers",
                map.next_value()?,
            )?,
            "resources" => set(&mut resources, "resources", read_resources(&mut map)?)?,
            "pending_operations" => set(&mut operations, "pending_operations", map.next_value()?)?,
            _ => {
                let value: Value = map.next_value()?;
                extra.insert(key, value);
            }
        }
    }
    Ok(DeploymentParts {
        manifest: manifest.ok_or_else(|| A::Error::missing_field("manifest"))?,
        secrets_providers: secrets_providers.flatten(),
        resources,
        pending_operations: operations.unwrap_or_default(),
        extra,
    })
}

impl<'de> Deserialize<'de> for DeploymentV3 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<DeploymentV3, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = DeploymentV3;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a deployment object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<DeploymentV3, A::Error> {
                let parts = read_deployment(map, |map| map.next_value::<Vec<ResourceV3>>())?;
                Ok(DeploymentV3 {
                    manifest: parts.manifest,
                    secrets_providers: parts.secrets_providers,
                    resources: parts.resources.unwrap_or_default(),
                    pending_operations: parts.pending_operations,
                    extra: parts.extra,
                })
            }
        }
        d.deserialize_map(V)
    }
}

/// A checkpoint object's fields, its latest deployment read by the caller's `L`.
struct CheckpointParts<L> {
    stack: String,
    config: Option<Value>,
    latest: Option<L>,
    extra: JsonMap,
}

/// Reads a checkpoint object's fields as [`CheckpointV3`]'s derived form would (`stack`
/// required, unknown fields kept), its `latest` with `read_latest`.
fn read_checkpoint<'de, A: MapAccess<'de>, L>(
    mut map: A,
    mut read_latest: impl FnMut(&mut A) -> Result<L, A::Error>,
) -> Result<CheckpointParts<L>, A::Error> {
    let mut stack: Option<String> = None;
    let mut config: Option<Option<Value>> = None;
    let mut latest: Option<L> = None;
    let mut extra = JsonMap::new();
    while let Some(key) = map.next_key::<String>()? {
        match key.as_str() {
            "stack" => set(&mut stack, "stack", map.next_value()?)?,
            "config" => set(&mut config, "config", map.next_value()?)?,
            "latest" => set(&mut latest, "latest", read_latest(&mut map)?)?,
            _ => {
                let value: Value = map.next_value()?;
                extra.insert(key, value);
            }
        }
    }
    Ok(CheckpointParts {
        stack: stack.ok_or_else(|| A::Error::missing_field("stack"))?,
        config: config.flatten(),
        latest,
        extra,
    })
}

impl<'de> Deserialize<'de> for CheckpointV3 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<CheckpointV3, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CheckpointV3;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a checkpoint object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<CheckpointV3, A::Error> {
                let parts = read_checkpoint(map, |map| map.next_value::<Option<DeploymentV3>>())?;
                Ok(CheckpointV3 {
                    stack: parts.stack,
                    config: parts.config,
                    latest: parts.latest.flatten(),
                    extra: parts.extra,
                })
            }
        }
        d.deserialize_map(V)
    }
}

/// A field read once; a second time is an error, as for a derived `Deserialize`.
fn set<T, E: Error>(slot: &mut Option<T>, field: &'static str, value: T) -> Result<(), E> {
    if slot.is_some() {
        return Err(E::duplicate_field(field));
    }
    *slot = Some(value);
    Ok(())
}

/// Reads the `resources` array, decoding each element before the next is parsed.
struct ResourcesSeed<'a>(DeploymentSeed<'a>);

impl<'de> DeserializeSeed<'de> for ResourcesSeed<'_> {
    type Value = Vec<ResourceState>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ResourcesSeed<'_> {
    type Value = Vec<ResourceState>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a sequence of resources")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut resources = Vec::with_capacity(seq.size_hint().unwrap_or(self.0.capacity));
        while let Some(resource) = seq.next_element::<Resource<JsonMap>>()? {
            resources.push(self.0.decode(resource, false)?);
        }
        Ok(resources)
    }
}

/// Reads a stack file: its version and its checkpoint's latest deployment, read by `S`.
struct FileSeed<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for FileSeed<S> {
    type Value = (u32, Option<S::Value>);

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, S: DeserializeSeed<'de>> Visitor<'de> for FileSeed<S> {
    type Value = (u32, Option<S::Value>);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a stack checkpoint object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut version: Option<u32> = None;
        let mut latest: Option<Option<S::Value>> = None;
        // Taken by the first `checkpoint`; a second one is refused before it is read.
        let mut seed = Some(self.0);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "version" => set(&mut version, "version", map.next_value()?)?,
                "checkpoint" => {
                    let seed = seed
                        .take()
                        .ok_or_else(|| A::Error::duplicate_field("checkpoint"))?;
                    latest = Some(map.next_value_seed(CheckpointSeed(seed))?);
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let version = version.ok_or_else(|| A::Error::missing_field("version"))?;
        let latest = latest.ok_or_else(|| A::Error::missing_field("checkpoint"))?;
        Ok((version, latest))
    }
}

/// Reads a checkpoint object: its stack's name (required) and its latest deployment.
struct CheckpointSeed<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for CheckpointSeed<S> {
    type Value = Option<S::Value>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, S: DeserializeSeed<'de>> Visitor<'de> for CheckpointSeed<S> {
    type Value = Option<S::Value>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a checkpoint object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let mut seed = Some(self.0);
        let parts = read_checkpoint(map, |map| match seed.take() {
            Some(seed) => map.next_value_seed(OptionalSeed(seed)),
            None => Err(A::Error::duplicate_field("latest")),
        })?;
        Ok(parts.latest.flatten())
    }
}

/// A deployment read by `S`, or `null`.
struct OptionalSeed<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for OptionalSeed<S> {
    type Value = Option<S::Value>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de, S: DeserializeSeed<'de>> Visitor<'de> for OptionalSeed<S> {
    type Value = Option<S::Value>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a deployment object or null")
    }

    fn visit_none<E: Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.0.deserialize(d).map(Some)
    }
}

/// What a listing of stacks shows of a stack's latest deployment.
#[derive(Debug, Clone, PartialEq)]
pub struct DeploymentSummary {
    /// When the deployment started (its manifest's time).
    pub time: String,
    /// How many resources it recorded.
    pub resources: usize,
    /// The operations it left pending (an interrupted deployment's).
    pub pending_operations: Vec<Operation<JsonMap>>,
}

/// The summary of a stack file's latest deployment (`None` when it has none), read from its
/// JSON text without keeping its resources: each is read and dropped.
pub fn summarize_checkpoint_json(text: &[u8]) -> Result<Option<DeploymentSummary>, StateError> {
    let failure = RefCell::new(None);
    read_file(text, FileSeed(SummarySeed), &failure)
}

/// Reads a deployment object into its [`DeploymentSummary`].
#[derive(Clone, Copy)]
struct SummarySeed;

impl<'de> DeserializeSeed<'de> for SummarySeed {
    type Value = DeploymentSummary;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for SummarySeed {
    type Value = DeploymentSummary;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a deployment object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let parts = read_deployment(map, |map| map.next_value_seed(CountSeed))?;
        Ok(DeploymentSummary {
            time: parts.manifest.time,
            resources: parts.resources.unwrap_or(0),
            pending_operations: parts.pending_operations,
        })
    }
}

/// Counts the resources of an array, each read (so a listing refuses what every other command
/// refuses) and dropped before the next.
struct CountSeed;

impl<'de> DeserializeSeed<'de> for CountSeed {
    type Value = usize;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for CountSeed {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a sequence of resources")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut count = 0;
        while seq.next_element::<Resource<JsonMap>>()?.is_some() {
            count += 1;
        }
        Ok(count)
    }
}

#[cfg(test)]
mod tests {
    use super::capacity_for;

    /// A hostile text made of `"urn"` keys reserves no more than one resource per 256 bytes;
    /// a real state is sized by its count of resources.
    #[test]
    fn the_capacity_follows_the_resources_and_is_bounded_by_the_text() {
        let keys = b"\"urn\"".repeat(100_000);
        assert_eq!(capacity_for(&keys), keys.len() / 256);
        let resource = format!(
            "{{\"urn\": \"urn:pulumi:dev::p::t:m:T::{}\", \"type\": \"t:m:T\", \"custom\": true, \"inputs\": {{}}}},",
            "n".repeat(200)
        );
        let state = format!("{{\"resources\": [{}]}}", resource.repeat(10));
        assert_eq!(capacity_for(state.as_bytes()), 10);
        assert_eq!(capacity_for(b""), 0);
    }
}
