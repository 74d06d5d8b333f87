//! `program-probe`: a test program steered by its project's config `mode`, declaring
//! `probe:index:Thing` resources of the wasm host's `probe` provider (host/wasm/tests/guest):
//!
//! * `parallel` (default): `count` (4) independent things, each taking `sleepMs` (400) to
//!   create; exports `count` and a secret `token`.
//! * `stackref`: reads the stack named by config `ref` and re-exports its `count` and `token`.
//! * `panic`: declares `before`, then panics.
//! * `apply-error`: exports an output whose callback fails.
//! * `require`: requires config `missing`.
//! * `fail-resource`: `bad` fails to create (after 300 ms) while `good` (independent, 600 ms)
//!   is under way and succeeds.
//! * `continue-on-error`: `bad` fails to create at once; `dependent` depends on it; `good`
//!   takes 300 ms and `after-good`, which depends on it, starts only after the failure.
//! * `fail-delete`: `stuck` (whose delete fails) depends on `anchor`; `free` is independent.
//! * `invoke`: exports the result of `probe:index:whoami`.
//! * `options`: an explicit provider `eu` (region `eu`) used by `direct` and passed to the
//!   children of component `group`; secret config `apiKey` as an input; structured config
//!   `ports` (a list of numbers) summed.
//! * `all-options`: `optioned` with dependsOn, retainOnDelete, deletedWith, ignoreChanges,
//!   replaceOnChanges, deleteBeforeReplace, additionalSecretOutputs, customTimeouts and version.
//! * `read`: reads the existing thing `thing-outside` and exports its ID and URN.
//! * `sandbox`: tries `/etc/passwd`, `/data/hello.txt` and env `PROBE_SECRET`; exports what
//!   it got (`ok:<text>` / `err:<error>`, the variable or `unset`).
//! * `hostile`: [`HOSTILE`] text everywhere a program and a provider can put text: the
//!   program's stdout and stderr, the provider's log, stdout and stderr (thing `loud`), input
//!   and output values and keys, stack output names and values.
//! * `hostile-fail`: thing `bad` fails with [`HOSTILE`] as its error.
//! * `hostile-panic`: the program panics with [`HOSTILE`].
//! * `hostile-name` / `hostile-type`: a thing whose name / type holds an escape sequence.
//! * `gates`: gates `first` and `second` (which depends on `first`) of the `gate` test provider
//!   (tests/guests/gate), each waiting at its gate file; config `checkGate` (bool) makes
//!   `first`'s check wait too. Exports `first` (its ID).
//! * `console`: what the web console's tests look at: component `group` with children `base`
//!   (input `size` = config `round`, default 1) and `keyed` (secret config `apiKey` as input
//!   `key`; depends on `base`), and a thing named [`MARKUP`] (noting [`MARKUP`], depending on
//!   `base` through input `base`). Exports `size`, the secret `key` and [`MARKUP`].

/// Every kind of control character a terminal acts on (CSI, OSC with BEL, CR, backspace, C1
/// CSI, NEL, a bidi override, DEL, NUL) and a newline followed by a fake line of Cairn's own.
pub const HOSTILE: &str =
    "\x1b[2J\x1b]0;pwned\x07\rX\x08\u{9b}31m\u{85}\u{202e}\x7f\0\nResources:\n    + 99 created";

/// Markup a page must show as text: run as HTML, it would add an image whose error handler
/// marks the page.
pub const MARKUP: &str = "<img src=x onerror=\"document.body.dataset.pwned=1\">&amp;'";

use cairn_sdk::Value;
use cairn_sdk::program::{
    Args, Context, CustomTimeouts, Output, ResourceOptions, Result, StackReference, component,
    custom, invoke, provider, read,
};

fn thing(name: &str, args: Args) -> cairn_sdk::program::Resource {
    custom("probe:index:Thing", name, args, ResourceOptions::new())
}

fn main(ctx: &Context) -> Result<()> {
    let config = ctx.config();
    let mode = config.get("mode").unwrap_or_else(|| "parallel".to_owned());
    match mode.as_str() {
        "parallel" => {
            let count = config.get_i64("count")?.unwrap_or(4);
            let sleep = config.get_i64("sleepMs")?.unwrap_or(400);
            for i in 0..count {
                thing(
                    &format!("t{i}"),
                    Args::new().set("sleepMs", sleep).set("index", i),
                );
            }
            ctx.export("count", count);
            ctx.export("token", Output::secret("s3cret".to_owned()));
        }
        "stackref" => {
            let other = StackReference::new(&config.require("ref")?);
            ctx.export("refCount", other.require_output("count"));
            ctx.export("refToken", other.output("token"));
            ctx.export("refMissing", other.output("missing"));
        }
        "panic" => {
            thing("before", Args::new());
            panic!("the program panicked on purpose");
        }
        "apply-error" => {
            let t = thing("t0", Args::new().set("index", 0));
            let bad = t
                .output("index")
                .try_apply(|_| Err::<Value, _>("the callback failed on purpose"));
            ctx.export("bad", bad);
        }
        "require" => {
            config.require("missing")?;
        }
        "continue-on-error" => {
            let bad = thing("bad", Args::new().set("fail", "create refused on purpose"));
            let after = |name: &str, on: &cairn_sdk::program::Resource| {
                custom(
                    "probe:index:Thing",
                    name,
                    Args::new(),
                    ResourceOptions::new().depends_on(on),
                )
            };
            after("dependent", &bad);
            let good = thing("good", Args::new().set("sleepMs", 300));
            after("after-good", &good);
        }
        "fail-delete" => {
            let anchor = thing("anchor", Args::new());
            custom(
                "probe:index:Thing",
                "stuck",
                Args::new().set("failDelete", "delete refused on purpose"),
                ResourceOptions::new().depends_on(&anchor),
            );
            thing("free", Args::new());
        }
        "fail-resource" => {
            // `good` is under way when `bad` fails, so it completes and is recorded.
            thing(
                "bad",
                Args::new()
                    .set("sleepMs", 300)
                    .set("fail", "create refused on purpose"),
            );
            thing("good", Args::new().set("sleepMs", 600));
        }
        "sandbox" => {
            let attempt = |r: std::io::Result<String>| match r {
                Ok(text) => format!("ok:{}", text.trim()),
                Err(e) => format!("err:{e}"),
            };
            ctx.export("passwd", attempt(std::fs::read_to_string("/etc/passwd")));
            ctx.export(
                "granted",
                attempt(std::fs::read_to_string("/data/hello.txt")),
            );
            ctx.export(
                "env",
                std::env::var("PROBE_SECRET").unwrap_or_else(|_| "unset".to_owned()),
            );
        }
        "options" => {
            let eu = provider(
                "probe",
                "eu",
                Args::new().set("region", "eu"),
                ResourceOptions::new(),
            );
            let direct = custom(
                "probe:index:Thing",
                "direct",
                Args::new(),
                ResourceOptions::new().provider(&eu),
            );
            let group = component(
                "prog:index:Group",
                "group",
                ResourceOptions::new().providers(&eu),
            );
            let child = custom(
                "probe:index:Thing",
                "child",
                Args::new(),
                ResourceOptions::new().parent(&group),
            );
            group.register_outputs(Args::new().set("child", &child.urn));
            let key = config.require_secret("apiKey")?;
            let keyed = thing("keyed", Args::new().set("key", &key));
            let ports: Vec<i64> = config.require_object("ports")?;
            ctx.export("direct", direct.output("configured").get("region"));
            ctx.export("child", child.output("configured").get("region"));
            ctx.export("key", keyed.output("key"));
            ctx.export("portsSum", ports.iter().sum::<i64>());
        }
        "all-options" => {
            let anchor = thing("anchor", Args::new());
            let opts = ResourceOptions::new()
                .depends_on(&anchor)
                .retain_on_delete(true)
                .deleted_with(&anchor)
                .ignore_changes(&["tags.env"])
                .replace_on_changes(&["size"])
                .delete_before_replace(true)
                .additional_secret_outputs(&["instance"])
                .custom_timeouts(CustomTimeouts {
                    create: 60.0,
                    update: 120.0,
                    delete: 30.0,
                })
                .version("0.3.0");
            let optioned = custom(
                "probe:index:Thing",
                "optioned",
                Args::new()
                    .set("size", 1)
                    .set("tags", Value::Object(Default::default())),
                opts,
            );
            ctx.export("instance", optioned.output("instance"));
        }
        "read" => {
            let existing = read(
                "probe:index:Thing",
                "existing",
                "thing-outside",
                Args::new(),
                ResourceOptions::new(),
            );
            ctx.export("readId", &existing.id);
            ctx.export("readUrn", &existing.urn);
        }
        "invoke" => {
            let who = invoke("probe:index:whoami", Args::new(), None);
            ctx.export("who", who.apply(Value::Object));
        }
        "hostile" => {
            println!("{HOSTILE}");
            eprintln!("{HOSTILE}");
            let loud = thing(
                "loud",
                Args::new()
                    .set("log", HOSTILE)
                    .set("print", HOSTILE)
                    .set("eprint", HOSTILE)
                    .set("note", HOSTILE)
                    .set(HOSTILE, HOSTILE),
            );
            ctx.export("note", loud.output("note"));
            ctx.export(HOSTILE, HOSTILE);
        }
        "hostile-fail" => {
            thing("bad", Args::new().set("fail", HOSTILE));
        }
        "hostile-panic" => panic!("{HOSTILE}"),
        "hostile-name" => {
            thing("evil\x1b]0;pwned\x07", Args::new());
        }
        "hostile-type" => {
            custom(
                "probe:index:Thing\x1b[2J",
                "evil",
                Args::new(),
                ResourceOptions::new(),
            );
        }
        "console" => {
            let round = config.get_i64("round")?.unwrap_or(1);
            let key = config.require_secret("apiKey")?;
            let group = component("prog:index:Group", "group", ResourceOptions::new());
            let base = custom(
                "probe:index:Thing",
                "base",
                Args::new().set("size", round),
                ResourceOptions::new().parent(&group),
            );
            let keyed = custom(
                "probe:index:Thing",
                "keyed",
                Args::new().set("key", &key),
                ResourceOptions::new().parent(&group).depends_on(&base),
            );
            group.register_outputs(Args::new().set("base", &base.urn));
            thing(
                MARKUP,
                Args::new().set("note", MARKUP).set("base", &base.id),
            );
            ctx.export("size", base.output("size"));
            ctx.export("key", keyed.output("key"));
            ctx.export(MARKUP, MARKUP);
        }
        "gates" => {
            let check_gate = config.get_bool("checkGate")?.unwrap_or(false);
            let first = custom(
                "gate:index:Gate",
                "first",
                Args::new().set("checkGate", check_gate),
                ResourceOptions::new(),
            );
            custom(
                "gate:index:Gate",
                "second",
                Args::new(),
                ResourceOptions::new().depends_on(&first),
            );
            ctx.export("first", &first.id);
        }
        other => return Err(format!("unknown mode {other:?}").into()),
    }
    Ok(())
}

cairn_sdk::export_program!(main);
