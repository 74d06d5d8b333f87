//! A database for an application, as a program compiled to WebAssembly, on the sandboxed
//! `postgresql` provider (examples/providers/postgresql) through the typed crate that
//! `cairn package gen-sdk` made from its schema (examples/sdks/postgresql).
//!
//! It creates the roles `<app>_owner` (a login, password from the secret config `ownerPassword`)
//! and `<app>_readers` (a group), the database `<app>` owned by the owner, a schema `<app>` in
//! it, `pgcrypto`, CONNECT on the database and USAGE on the schema for the readers, SELECT on
//! the tables already there and on every table the owner creates later, and makes each of the
//! `readers` (config, a list of names) a login role in the readers group. With `extraRoles: N`
//! it also creates N login roles, each with CONNECT on the database (the benchmark's load).
//!
//! The provider reaches the server only through the stack's grant:
//!
//! ```sh
//! cairn config set postgresql:host 127.0.0.1
//! cairn config set postgresql:port 5432
//! cairn config set postgresql:username postgres
//! cairn config set --secret postgresql:password …
//! cairn config set postgresql:sslmode disable
//! cairn config set --path '["cairn:grants"].postgresql.tcp[0]' 127.0.0.1:5432
//! cairn config set --secret postgresql-app:ownerPassword …
//! ```
//!
//! Stack outputs: the database, the schema, the owner and the readers' role names.

use cairn_postgresql::{
    Database, DatabaseArgs, DefaultPrivileges, DefaultPrivilegesArgs, Extension, ExtensionArgs,
    Grant, GrantArgs, Role, RoleArgs, Schema, SchemaArgs,
};
use cairn_sdk::program::{Context, ResourceOptions, Result};

fn main(ctx: &Context) -> Result<()> {
    let config = ctx.config();
    let app = config.get("app").unwrap_or_else(|| "app".to_owned());
    let readers: Vec<String> = config
        .get_object::<Vec<String>>("readers")?
        .unwrap_or_default();
    let extra_roles = config.get_i64("extraRoles")?.unwrap_or(0);

    let owner = Role::new(
        "owner",
        RoleArgs::new()
            .name(format!("{app}_owner"))
            .login(true)
            .password(config.require_secret("ownerPassword")?),
        ResourceOptions::new(),
    );
    let group = Role::new(
        "readers",
        RoleArgs::new().name(format!("{app}_readers")),
        ResourceOptions::new(),
    );
    let database = Database::new(
        "database",
        DatabaseArgs::new()
            .name(app.clone())
            .owner(owner.name.clone()),
        ResourceOptions::new(),
    );
    let schema = Schema::new(
        "schema",
        SchemaArgs::new()
            .name(app.clone())
            .database(database.name.clone())
            .owner(owner.name.clone()),
        ResourceOptions::new(),
    );
    Extension::new(
        "pgcrypto",
        ExtensionArgs::new()
            .name("pgcrypto")
            .database(database.name.clone())
            .schema(schema.name.clone()),
        ResourceOptions::new(),
    );
    Grant::new(
        "readers-connect",
        GrantArgs::new(
            database.name.clone(),
            "database",
            vec!["CONNECT".to_owned()],
            group.name.clone(),
        ),
        ResourceOptions::new(),
    );
    Grant::new(
        "readers-usage",
        GrantArgs::new(
            database.name.clone(),
            "schema",
            vec!["USAGE".to_owned()],
            group.name.clone(),
        )
        .schema(schema.name.clone()),
        ResourceOptions::new(),
    );
    Grant::new(
        "readers-select",
        GrantArgs::new(
            database.name.clone(),
            "table",
            vec!["SELECT".to_owned()],
            group.name.clone(),
        )
        .schema(schema.name.clone()),
        ResourceOptions::new(),
    );
    DefaultPrivileges::new(
        "readers-future-tables",
        DefaultPrivilegesArgs::new(
            database.name.clone(),
            "table",
            owner.name.clone(),
            vec!["SELECT".to_owned()],
            group.name.clone(),
        )
        .schema(schema.name.clone()),
        ResourceOptions::new(),
    );
    for reader in &readers {
        Role::new(
            &format!("reader-{reader}"),
            RoleArgs::new()
                .name(reader.clone())
                .login(true)
                .roles(group.name.apply(|g| vec![g])),
            ResourceOptions::new(),
        );
    }
    for i in 0..extra_roles {
        let role = Role::new(
            &format!("extra-{i}"),
            RoleArgs::new().name(format!("{app}_extra_{i}")).login(true),
            ResourceOptions::new(),
        );
        Grant::new(
            &format!("extra-{i}-connect"),
            GrantArgs::new(
                database.name.clone(),
                "database",
                vec!["CONNECT".to_owned()],
                role.name.clone(),
            ),
            ResourceOptions::new(),
        );
    }

    ctx.export("database", &database.name);
    ctx.export("schema", &schema.name);
    ctx.export("owner", &owner.name);
    ctx.export("readers", &group.name);
    Ok(())
}

cairn_sdk::export_program!(main);
