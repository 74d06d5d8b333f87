//! A program that uses the `${PACKAGE}` provider: one `Greeting`, its message exported.
//! `cairn package gen-sdk ${PACKAGE}` (once the provider is installed) writes a typed API for
//! it: `Greeting::new("greeting", GreetingArgs::new(name), ResourceOptions::new())`.

use cairn_sdk::program::{Args, Context, ResourceOptions, Result, custom};

fn main(ctx: &Context) -> Result<()> {
    let config = ctx.config();
    let name = config.get("name").unwrap_or_else(|| "world".to_owned());
    let greeting = custom(
        "${PACKAGE}:index:Greeting",
        "greeting",
        Args::new().set("name", name.as_str()),
        ResourceOptions::new(),
    );
    ctx.export("message", greeting.get::<String>("message"));
    Ok(())
}

cairn_sdk::export_program!(main);
