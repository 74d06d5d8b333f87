"""A Pulumi Python SDK program that Cairn deploys unchanged.

It mixes a dynamic-provider resource (`Label`, implemented below and run by the SDK's own
dynamic-provider plugin) with resources of the published `pulumi_random` SDK (from PyPI),
which Cairn serves with its sandboxed `random` wasm provider, and shows a component,
dependsOn, protect, aliases, config (plain and secret) and stack outputs.

Config `version` (1 or 2) switches between two versions of the program:
* `label`: prefix `v1` -> `v2` (the dynamic provider asks for replacement);
* `message`: its text changes (an update in place);
* `greeter` is renamed `welcome` with an alias (no change);
* the protected `id` (RandomUuid) stays.
"""

import pulumi
import pulumi_random as random
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, ResourceProvider, UpdateResult


class LabelProvider(ResourceProvider):
    """Labels live only in the state: the ID is the text."""

    def create(self, props):
        text = f"{props['prefix']}:{props['text']}"
        return CreateResult(id_=text, outs={**props, "full": text})

    def diff(self, _id, olds, news):
        changed = [k for k in ("prefix", "text") if olds.get(k) != news.get(k)]
        return DiffResult(changes=bool(changed), replaces=[k for k in changed if k == "prefix"])

    def update(self, _id, _olds, news):
        return UpdateResult(outs={**news, "full": f"{news['prefix']}:{news['text']}"})

    def read(self, id_, props):
        return ReadResult(id_=id_, outs=props)


class Label(Resource):
    full: pulumi.Output[str]

    def __init__(self, name, prefix, text, opts=None):
        super().__init__(LabelProvider(), name, {"prefix": prefix, "text": text, "full": None}, opts)


class Greeting(pulumi.ComponentResource):
    """A component holding a label; its output is the label's text."""

    def __init__(self, name, text, opts=None):
        super().__init__("demo:index:Greeting", name, None, opts)
        self.label = Label("greeting-label", "greeting", text, pulumi.ResourceOptions(parent=self))
        self.text = self.label.full
        self.register_outputs({"text": self.text})


config = pulumi.Config()
version = config.get_int("version") or 1
greeting = config.get("greeting") or "hello"
token = config.require_secret("token")

pet = random.RandomPet("pet", length=2)
password = random.RandomPassword("password", length=16)
uid = random.RandomUuid("id", opts=pulumi.ResourceOptions(protect=True))

label = Label("label", f"v{version}", "stable text")
message = Label(
    "message",
    "msg",
    f"{greeting} from version {version}",
    pulumi.ResourceOptions(depends_on=[pet]),
)
greeter_name = "greeter" if version == 1 else "welcome"
greeter = Greeting(
    greeter_name,
    greeting,
    pulumi.ResourceOptions(aliases=[pulumi.Alias(name="greeter")] if version == 2 else None),
)

pulumi.export("version", version)
pulumi.export("pet", pet.id)
pulumi.export("label", label.full)
pulumi.export("message", message.full)
pulumi.export("greeting", greeter.text)
pulumi.export("password", password.result)
pulumi.export("token", token)
pulumi.export("id", uid.result)
