//! Cairn's quick start, as a program compiled to WebAssembly.
//!
//! It picks a random pet name, port and admin password (`random` provider), and writes a small
//! site into the directory granted to the `file` provider: a `site` component holding a
//! directory and an `index.html` that greets the pet, plus a credentials file whose content is
//! secret. Stack outputs: the name, port and page path and hash (plain) and the password
//! (secret).
//!
//! Configuration (`cairn config set quickstart:<key> <value>`): `greeting` (default
//! `Hello from Cairn`), `petLength` (words in the name, default 2).

use cairn_file::{Directory, DirectoryArgs, File, FileArgs};
use cairn_random::{
    RandomInteger, RandomIntegerArgs, RandomPassword, RandomPasswordArgs, RandomPet, RandomPetArgs,
};
use cairn_sdk::program::{
    Args, Context, Output, Resource, ResourceOptions, Result, all, component,
};

/// The `quickstart:index:Site` component: a directory and its index page.
struct Site {
    resource: Resource,
    dir: Directory,
    index: File,
}

fn site(name: &str, title: Output<String>, port: Output<i64>, options: ResourceOptions) -> Site {
    let resource = component("quickstart:index:Site", name, options);
    let child = ResourceOptions::new().parent(&resource);
    let dir = Directory::new(
        &format!("{name}-dir"),
        DirectoryArgs::new().path(name),
        child.clone(),
    );
    let html = all((title, port)).apply(|(title, port)| {
        format!("<!doctype html>\n<h1>{title}</h1>\n<p>Serving on port {port}.</p>\n")
    });
    let index = File::new(
        &format!("{name}-index"),
        FileArgs::new(html).path(format!("{name}/index.html")),
        child.depends_on(&dir.resource),
    );
    resource.register_outputs(
        Args::new()
            .set("indexPath", &index.path)
            .set("sha256", &index.sha256),
    );
    Site {
        resource,
        dir,
        index,
    }
}

fn main(ctx: &Context) -> Result<()> {
    let config = ctx.config();
    let greeting = config
        .get("greeting")
        .unwrap_or_else(|| "Hello from Cairn".to_owned());
    let words = config.get_i64("petLength")?.unwrap_or(2);

    let pet = RandomPet::new(
        "name",
        RandomPetArgs::new().length(words),
        ResourceOptions::new(),
    );
    let port = RandomInteger::new(
        "port",
        // Required inputs come in the schema's order: max, then min.
        RandomIntegerArgs::new(8999, 8000),
        ResourceOptions::new(),
    );
    let password = RandomPassword::new(
        "admin-password",
        RandomPasswordArgs::new(20).special(false),
        ResourceOptions::new(),
    );

    let title = pet
        .resource
        .id
        .apply(move |name| format!("{greeting}, {name}!"));
    let site = site("site", title, port.result.clone(), ResourceOptions::new());

    // Derived from a secret, so the file's content (and its hash) stay secret.
    let credentials = password.result.apply(|p| format!("admin:{p}\n"));
    File::new(
        "credentials",
        // No `mode`: WASI has no permission bits, so the file provider could only record it
        // (and would warn that it did not apply it).
        FileArgs::new(credentials).path("site/credentials.txt"),
        ResourceOptions::new()
            .parent(&site.resource)
            .depends_on(&site.dir.resource),
    );

    ctx.export("petName", &pet.resource.id);
    ctx.export("port", &port.result);
    ctx.export("indexPath", &site.index.path);
    ctx.export("indexSha256", &site.index.sha256);
    ctx.export("adminPassword", &password.result);
    Ok(())
}

cairn_sdk::export_program!(main);
