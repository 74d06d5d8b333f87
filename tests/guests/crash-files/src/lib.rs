//! `crash-files`: the crash harness's program (tests/e2e/crash.rs). It declares config
//! `count` (default 240) files `f000.txt`, `f001.txt`, … of the example `file` provider
//! (`file:index:File`), in components `group-<g>` of [`GROUP`] files each; every fifth file
//! depends on the file before it. A file's content is `generation <g> of f<i>\n` (config
//! `generation`, default 1), so changing the generation updates every file in place.

use cairn_sdk::program::{Args, Context, Error, ResourceOptions, Result, component, custom};

/// Files per component.
const GROUP: i64 = 20;

fn main(ctx: &Context) -> Result<()> {
    let config = ctx.config();
    let count = config.get_i64("count")?.unwrap_or(240);
    let generation = config.get_i64("generation")?.unwrap_or(1);
    if !(0..=1000).contains(&count) {
        return Err(Error::from(format!("count must be 0..=1000, not {count}")));
    }
    let mut groups = Vec::new();
    let mut previous = None;
    for i in 0..count {
        let g = (i / GROUP) as usize;
        if g == groups.len() {
            groups.push(component(
                "crash:index:Group",
                &format!("group-{g}"),
                ResourceOptions::new(),
            ));
        }
        let mut options = ResourceOptions::new().parent(&groups[g]);
        if i % 5 == 4
            && let Some(before) = &previous
        {
            options = options.depends_on(before);
        }
        let name = format!("f{i:03}");
        let file = custom(
            "file:index:File",
            &name,
            Args::new()
                .set("path", format!("{name}.txt"))
                .set("content", format!("generation {generation} of {name}\n")),
            options,
        );
        previous = Some(file);
    }
    for group in &groups {
        group.register_outputs(Args::new());
    }
    ctx.export("count", count);
    ctx.export("generation", generation);
    Ok(())
}

cairn_sdk::export_program!(main);
