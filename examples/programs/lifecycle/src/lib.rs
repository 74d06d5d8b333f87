//! A program in two versions (config `lifecycle:version`: `1`, the default, or `2`) that shows
//! how declarations map to steps:
//!
//! | resource | version 1 | version 2 | step on the second `up` |
//! |---|---|---|---|
//! | `token` (RandomString) | keepers `{rotation: "1"}` | keepers `{rotation: "2"}` | replace |
//! | `data` (File `data/token.txt`) | content from `token` | same, new token | update |
//! | `marker` (File `data/marker.txt`) | dependsOn `data` | same | same |
//! | `id` (RandomUuid) | protected | protected | same (and `destroy` refuses) |
//! | `old-name` → `new-name` (RandomPet) | `old-name` | `new-name`, alias `old-name` | same |
//! | `store` (Directory `data`) | — | — | same |
//! | `notes` (File, auto-named path) | `version 1` | `version 2` | update, same path |

use cairn_file::{Directory, DirectoryArgs, File, FileArgs};
use cairn_random::{
    RandomPet, RandomPetArgs, RandomString, RandomStringArgs, RandomUuid, RandomUuidArgs,
};
use cairn_sdk::program::{Alias, Context, Error, ResourceOptions, Result};
use indexmap::IndexMap;

/// Keepers `{rotation: <version>}`, of whichever value type the schema gives keepers.
fn keepers<T: From<String>>(version: i64) -> IndexMap<String, T> {
    IndexMap::from([("rotation".to_owned(), T::from(version.to_string()))])
}

fn main(ctx: &Context) -> Result<()> {
    let version = ctx.config().get_i64("version")?.unwrap_or(1);
    if !(1..=2).contains(&version) {
        return Err(Error::from(format!(
            "lifecycle:version must be 1 or 2, not {version}"
        )));
    }

    let token = RandomString::new(
        "token",
        RandomStringArgs::new(12)
            .special(false)
            .keepers(keepers(version)),
        ResourceOptions::new(),
    );
    let store = Directory::new(
        "store",
        DirectoryArgs::new().path("data"),
        ResourceOptions::new(),
    );
    let data = File::new(
        "data",
        FileArgs::new(token.result.apply(|t| format!("{t}\n"))).path("data/token.txt"),
        ResourceOptions::new().depends_on(&store.resource),
    );
    // Refers to nothing of `data`'s, so only dependsOn orders it after.
    let marker = File::new(
        "marker",
        FileArgs::new("written after token.txt\n").path("data/marker.txt"),
        ResourceOptions::new()
            .depends_on(&data.resource)
            .depends_on(&store.resource),
    );
    // No path: the provider auto-names it, and keeps the name across updates.
    let notes = File::new(
        "notes",
        FileArgs::new(format!("version {version}\n")),
        ResourceOptions::new(),
    );
    let id = RandomUuid::new(
        "id",
        RandomUuidArgs::new(),
        ResourceOptions::new().protect(true),
    );
    let pet = if version == 1 {
        RandomPet::new("old-name", RandomPetArgs::new(), ResourceOptions::new())
    } else {
        RandomPet::new(
            "new-name",
            RandomPetArgs::new(),
            ResourceOptions::new().alias(Alias::name("old-name")),
        )
    };

    ctx.export("version", version);
    ctx.export("token", &token.result);
    ctx.export("dataSha256", &data.sha256);
    ctx.export("markerPath", &marker.path);
    ctx.export("notesPath", &notes.path);
    ctx.export("id", &id.result);
    ctx.export("pet", &pet.resource.id);
    Ok(())
}

cairn_sdk::export_program!(main);
