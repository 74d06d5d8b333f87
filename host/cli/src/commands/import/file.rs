//! What `cairn import` imports: Pulumi's bulk import file (`nameTable`, `resources`) or one
//! resource from the command line, read and resolved against the stack as Pulumi's
//! `parseImportFile` does — names and logical names default to each other; every resource has
//! a type and a name, an ID unless it is a component or a provider, and a parent and provider
//! that name a `nameTable` entry or another resource of the file (unambiguously); versions are
//! semantic versions. Errors name the file and the JSON path of the entry at fault.

use std::collections::{HashMap, HashSet};

use anyhow::{Result, bail};
use cairn_engine::state::Snapshot;
use cairn_engine::urn::{TypeToken, Urn};
use cairn_engine::value::PropertyMap;
use indexmap::IndexMap;
use serde_json::{Map, Value as Json};

/// One entry of `resources`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spec {
    pub resource_type: String,
    /// The name the generated code calls it by (and the `nameTable`-style handle).
    pub name: String,
    /// The name in its URN.
    pub logical_name: String,
    pub id: String,
    pub parent: Option<String>,
    pub provider: Option<String>,
    pub version: Option<semver::Version>,
    pub plugin_download_url: Option<String>,
    pub properties: Vec<String>,
    pub component: bool,
    /// A provider's configuration (`inputs` of a `pulumi:providers:*` entry).
    pub inputs: Option<PropertyMap>,
}

/// An import file, parsed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImportFile {
    pub name_table: IndexMap<String, String>,
    pub resources: Vec<Spec>,
}

/// An import file resolved against a stack: each resource's URN, and its parent's and
/// provider's, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub resources: Vec<Entry>,
    /// `nameTable`: existing resources by name.
    pub name_table: IndexMap<String, Urn>,
}

/// One resource to import, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub spec: Spec,
    pub urn: Urn,
    pub parent: Option<Urn>,
    /// The explicit provider's URN (a `nameTable` entry or a provider of the file).
    pub provider: Option<Urn>,
}

impl Entry {
    pub fn is_provider(&self) -> bool {
        self.spec.resource_type.starts_with("pulumi:providers:")
    }
}

/// Reads `text` (the contents of `path`) as an import file.
pub fn parse(path: &str, text: &str) -> Result<ImportFile> {
    let json: Json = match serde_json::from_str(text) {
        Ok(json) => json,
        Err(e) => bail!("{path}: not valid JSON: {e}"),
    };
    let Json::Object(root) = json else {
        bail!("{path}: expected a JSON object with \"resources\" (and \"nameTable\")");
    };
    let mut file = ImportFile::default();
    for (key, value) in &root {
        match key.as_str() {
            "nameTable" => {
                let Json::Object(table) = value else {
                    bail!("{path}: nameTable: expected an object of names to URNs");
                };
                for (name, urn) in table {
                    let Json::String(urn) = urn else {
                        bail!("{path}: nameTable[{name:?}]: expected a URN (a string)");
                    };
                    file.name_table.insert(name.clone(), urn.clone());
                }
            }
            "resources" => {
                let Json::Array(items) = value else {
                    bail!("{path}: resources: expected an array");
                };
                for (i, item) in items.iter().enumerate() {
                    let Json::Object(entry) = item else {
                        bail!("{path}: resources[{i}]: expected an object");
                    };
                    file.resources.push(spec(path, i, entry)?);
                }
            }
            "providerInputs" => bail!(
                "{path}: providerInputs is deprecated and not supported: declare the provider in resources with its configuration as inputs"
            ),
            other => bail!(
                "{path}: unknown field {other:?} (an import file has nameTable and resources)"
            ),
        }
    }
    if file.resources.is_empty() {
        bail!("{path}: resources: no resources to import");
    }
    Ok(file)
}

fn spec(path: &str, i: usize, entry: &Map<String, Json>) -> Result<Spec> {
    let at = |field: &str| format!("{path}: resources[{i}].{field}");
    let text = |field: &str| -> Result<Option<String>> {
        match entry.get(field) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::String(s)) => Ok(Some(s.clone())),
            Some(_) => bail!("{}: expected a string", at(field)),
        }
    };
    let flag = |field: &str| -> Result<bool> {
        match entry.get(field) {
            None | Some(Json::Null) => Ok(false),
            Some(Json::Bool(b)) => Ok(*b),
            Some(_) => bail!("{}: expected true or false", at(field)),
        }
    };
    const FIELDS: &[&str] = &[
        "type",
        "name",
        "id",
        "parent",
        "provider",
        "version",
        "pluginDownloadUrl",
        "logicalName",
        "properties",
        "component",
        "remote",
        "inputs",
    ];
    if let Some(unknown) = entry.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        bail!(
            "{}: unknown field (a resource has {})",
            at(unknown),
            FIELDS.join(", ")
        );
    }
    let version = match text("version")? {
        None => None,
        Some(v) => Some(
            tolerant_version(&v)
                .ok_or_else(|| anyhow::anyhow!("{}: {v:?} is not a version", at("version")))?,
        ),
    };
    let properties = match entry.get("properties") {
        None | Some(Json::Null) => vec![],
        Some(Json::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(j, p)| match p {
                Json::String(s) => Ok(s.clone()),
                _ => bail!("{}[{j}]: expected a property name", at("properties")),
            })
            .collect::<Result<_>>()?,
        Some(_) => bail!("{}: expected an array of property names", at("properties")),
    };
    let inputs = match entry.get("inputs") {
        None | Some(Json::Null) => None,
        Some(Json::Object(map)) => {
            let inputs = cairn_engine::state::decode_property_map(map, None)
                .map_err(|e| anyhow::anyhow!("{}: {e}", at("inputs")))?;
            if inputs
                .values()
                .any(cairn_engine::value::PropertyValue::contains_unknowns)
            {
                bail!(
                    "{}: contain unknown values; fill them in before importing",
                    at("inputs")
                );
            }
            Some(inputs)
        }
        Some(_) => bail!("{}: expected an object", at("inputs")),
    };
    if flag("remote")? {
        bail!(
            "{}: remote components cannot be imported (their provider builds them)",
            at("remote")
        );
    }
    Ok(Spec {
        resource_type: text("type")?.unwrap_or_default(),
        name: text("name")?.unwrap_or_default(),
        logical_name: text("logicalName")?.unwrap_or_default(),
        id: text("id")?.unwrap_or_default(),
        parent: text("parent")?.filter(|s| !s.is_empty()),
        provider: text("provider")?.filter(|s| !s.is_empty()),
        version,
        plugin_download_url: text("pluginDownloadUrl")?,
        properties,
        component: flag("component")?,
        inputs,
    })
}

/// A version as Pulumi's tolerant parser reads it: a leading `v`, and missing minor or patch
/// parts, allowed.
fn tolerant_version(text: &str) -> Option<semver::Version> {
    let text = text.trim().trim_start_matches('v');
    if let Ok(v) = semver::Version::parse(text) {
        return Some(v);
    }
    let (core, rest) = match text.find(['-', '+']) {
        Some(i) => text.split_at(i),
        None => (text, ""),
    };
    let parts = core.split('.').count();
    let padded = match parts {
        1 => format!("{core}.0.0{rest}"),
        2 => format!("{core}.0{rest}"),
        _ => return None,
    };
    semver::Version::parse(&padded).ok()
}

/// A `--parent`/`--provider` value: `NAME=URN`, or a bare URN (named `fallback`).
pub fn name_and_urn(flag: &str, value: &str, fallback: &str) -> Result<(String, String)> {
    match value.split_once('=') {
        Some((name, urn)) if !name.is_empty() && urn.starts_with("urn:") => {
            Ok((name.to_owned(), urn.to_owned()))
        }
        _ if value.starts_with("urn:") => Ok((fallback.to_owned(), value.to_owned())),
        _ => bail!("{flag} {value:?}: expected NAME=URN or a URN"),
    }
}

/// Resolves `file` against `snapshot` (stack `stack` of `project`): see the module docs.
/// Resources already in the stack with the same ID are left out (as Pulumi skips them, so an
/// import runs again without harm); one there with another ID is an error.
pub fn resolve(
    path: &str,
    file: ImportFile,
    snapshot: &Snapshot,
    stack: &str,
    project: &str,
) -> Result<Resolved> {
    let mut errors: Vec<String> = Vec::new();
    let describe = |i: usize, spec: &Spec| {
        let name = if !spec.name.is_empty() {
            format!("'{}'", spec.name)
        } else if !spec.id.is_empty() {
            format!("'{}'", spec.id)
        } else {
            i.to_string()
        };
        let ty = if spec.resource_type.is_empty() {
            String::new()
        } else {
            format!(" of type '{}'", spec.resource_type)
        };
        format!("{path}: resources[{i}] (resource {name}{ty})")
    };
    let mut specs = file.resources;
    for spec in &mut specs {
        if spec.logical_name.is_empty() {
            spec.logical_name = spec.name.clone();
        }
        if spec.name.is_empty() {
            spec.name = spec.logical_name.clone();
        }
    }
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for (i, spec) in specs.iter().enumerate() {
        let is_provider = spec.resource_type.starts_with("pulumi:providers:");
        if spec.resource_type.is_empty() {
            errors.push(format!("{} has no type", describe(i, spec)));
        } else if let Err(e) = TypeToken::parse(&spec.resource_type) {
            errors.push(format!("{}: {e}", describe(i, spec)));
        }
        if spec.name.is_empty() {
            errors.push(format!("{} has no name", describe(i, spec)));
        }
        if is_provider {
            if !spec.id.is_empty() {
                errors.push(format!(
                    "{} has an ID, but is a provider, which is created rather than read",
                    describe(i, spec)
                ));
            }
            if spec.component {
                errors.push(format!(
                    "{} is a provider and may not be marked as a component",
                    describe(i, spec)
                ));
            }
        } else if !spec.component && spec.id.is_empty() {
            errors.push(format!("{} has no ID", describe(i, spec)));
        } else if spec.component && !spec.id.is_empty() {
            errors.push(format!(
                "{} has an ID, but is marked as a component",
                describe(i, spec)
            ));
        }
        if spec.inputs.is_some() && !is_provider {
            errors.push(format!(
                "{}: inputs are only taken for providers (the others' are read by ID)",
                describe(i, spec)
            ));
        }
        *counts.entry(spec.name.as_str()).or_default() += 1;
    }
    if !errors.is_empty() {
        bail!(errors.join("\n"));
    }
    let mut name_table: IndexMap<String, Urn> = IndexMap::new();
    for (name, text) in &file.name_table {
        match Urn::parse(text) {
            Ok(urn) if snapshot.resources.iter().any(|r| r.urn == urn && !r.delete) => {
                name_table.insert(name.clone(), urn);
            }
            Ok(urn) => errors.push(format!(
                "{path}: nameTable[{name:?}]: {urn} is not a resource of stack {stack:?}"
            )),
            Err(e) => errors.push(format!("{path}: nameTable[{name:?}]: {e}")),
        }
    }
    if !errors.is_empty() {
        bail!(errors.join("\n"));
    }
    // URNs by name, resolved parents first (a parent may come later in the file).
    let mut urns: HashMap<String, Urn> = HashMap::new();
    let mut resolved: Vec<Option<Entry>> = vec![None; specs.len()];
    let mut taken: HashSet<Urn> = name_table.values().cloned().collect();
    loop {
        let mut progressed = false;
        for (i, spec) in specs.iter().enumerate() {
            if resolved[i].is_some() {
                continue;
            }
            let parent = match &spec.parent {
                None => None,
                Some(parent) if counts.get(parent.as_str()).copied().unwrap_or(0) > 1 => {
                    bail!("{} has an ambiguous parent", describe(i, spec));
                }
                Some(parent) => match name_table.get(parent) {
                    Some(urn) => Some(urn.clone()),
                    None if counts.contains_key(parent.as_str()) => match urns.get(parent) {
                        Some(urn) => Some(urn.clone()),
                        None => continue,
                    },
                    None => bail!(
                        "{}: the parent '{parent}' has no entry in 'nameTable'",
                        describe(i, spec)
                    ),
                },
            };
            let ty = TypeToken::parse(&spec.resource_type)?;
            let urn = Urn::new(
                stack,
                project,
                parent.as_ref().map(Urn::qualified_type),
                &ty,
                &spec.logical_name,
            )
            .map_err(|e| anyhow::anyhow!("{}: {e}", describe(i, spec)))?;
            if !taken.insert(urn.clone()) {
                bail!(
                    "{} has an ambiguous URN, set name (or logical name) to be unique",
                    describe(i, spec)
                );
            }
            urns.insert(spec.name.clone(), urn.clone());
            resolved[i] = Some(Entry {
                spec: spec.clone(),
                urn,
                parent,
                provider: None,
            });
            progressed = true;
        }
        if resolved.iter().all(Option::is_some) {
            break;
        }
        if !progressed {
            let (i, spec) = specs
                .iter()
                .enumerate()
                .find(|(i, _)| resolved[*i].is_none())
                .expect("an unresolved entry");
            bail!("{}: its parents form a cycle", describe(i, spec));
        }
    }
    let mut entries: Vec<Entry> = resolved.into_iter().flatten().collect();
    for (i, entry) in entries.iter_mut().enumerate() {
        let Some(provider) = entry.spec.provider.clone() else {
            continue;
        };
        if counts.get(provider.as_str()).copied().unwrap_or(0) > 1 {
            bail!("{} has an ambiguous provider", describe(i, &entry.spec));
        }
        let Some(urn) = name_table.get(&provider).or_else(|| urns.get(&provider)) else {
            bail!(
                "{}: the provider '{provider}' has no entry in 'nameTable' or 'resources'",
                describe(i, &entry.spec)
            );
        };
        let package = TypeToken::parse(&entry.spec.resource_type)?
            .package()
            .to_owned();
        if urn.resource_type() != format!("pulumi:providers:{package}") {
            bail!(
                "{}: the provider '{provider}' ({urn}) is not a provider of package {package:?}",
                describe(i, &entry.spec)
            );
        }
        entry.provider = Some(urn.clone());
    }
    // What the stack already has: the same resource is left out, another is an error.
    let mut kept = Vec::with_capacity(entries.len());
    for (i, entry) in entries.into_iter().enumerate() {
        let existing = snapshot
            .resources
            .iter()
            .find(|r| r.urn == entry.urn && !r.delete);
        match existing {
            None => kept.push(entry),
            Some(old)
                if !entry.spec.id.is_empty()
                    && (old.id.as_deref() == Some(entry.spec.id.as_str())
                        || old.import_id.as_deref() == Some(entry.spec.id.as_str())) =>
            {
                crate::terminal::errln!(
                    "{} is already in the stack as {}; left out",
                    describe(i, &entry.spec),
                    entry.urn
                );
            }
            Some(_) => bail!(
                "{}: resource '{}' already exists",
                describe(i, &entry.spec),
                entry.urn
            ),
        }
    }
    Ok(Resolved {
        resources: kept,
        name_table,
    })
}

#[cfg(test)]
mod tests;
