"""${PROJECT}: a Cairn program in Python, compiled to a WebAssembly component by `cairn up`.

It declares resources through `cairn_sdk.program` and exports stack outputs; `main` runs for
every preview and update (in a preview, outputs of resources not created yet are unknown and
`apply` callbacks on them do not run).
"""

import cairn_sdk.program as cairn


def main(ctx: cairn.Context) -> None:
    config = cairn.Config()
    name = config.get("name", "world")
    # A component groups resources; declare children with `ResourceOptions(parent=...)`.
    app = cairn.ComponentResource("${PACKAGE}:index:App", "app")
    greeting = cairn.Output.format("Hello, {}!", name)
    app.register_outputs({"greeting": greeting})
    cairn.export("greeting", greeting)
    cairn.export("stack", ctx.stack)


WitWorld = cairn.export_program(main)
