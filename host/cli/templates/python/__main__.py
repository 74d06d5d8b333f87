"""The ${PROJECT} program, written with the Pulumi Python SDK and deployed by Cairn.

It declares one component, `app`, and exports a greeting built from the stack's configuration
(`cairn config set name Ada`). Resources of a provider come from its SDK package: for
`pulumi_random`, install Cairn's `random` provider (`cairn plugin install random.wasm`) and
`venv/bin/pip install pulumi-random`.
"""

import pulumi


class App(pulumi.ComponentResource):
    """A component grouping the program's resources (pass `opts=pulumi.ResourceOptions(parent=app)`)."""

    def __init__(self, name, greeting, opts=None):
        super().__init__("${PACKAGE}:index:App", name, None, opts)
        self.greeting = pulumi.Output.from_input(greeting)
        self.register_outputs({"greeting": self.greeting})


config = pulumi.Config()
name = config.get("name") or "world"

app = App("app", f"Hello, {name}!")

pulumi.export("greeting", app.greeting)
pulumi.export("appUrn", app.urn)
