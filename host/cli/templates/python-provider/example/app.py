"""A program that uses the `${PACKAGE}` provider: one `Greeting`, its message exported."""

from typing import Optional

import cairn_sdk.program as cairn


class Greeting(cairn.CustomResource):
    """`${PACKAGE}:index:Greeting`, typed: its inputs as arguments, its output as a property."""

    message = cairn.output_property("message")

    def __init__(self, name: str, who, salutation=None, opts: Optional[cairn.ResourceOptions] = None):
        props = {"name": who}
        if salutation is not None:
            props["salutation"] = salutation
        super().__init__("${PACKAGE}:index:Greeting", name, props, opts)


def main(ctx: cairn.Context) -> None:
    config = cairn.Config()
    greeting = Greeting("greeting", config.get("name", "world"))
    cairn.export("message", greeting.message)


WitWorld = cairn.export_program(main)
