"""Outputs that resolve at different times, one exported, and an apply that fails after the
export has resolved: the program fails with the apply's error, what resolved before it ran its
applies, and the exported output is kept with its value."""

import asyncio

import pulumi

exported = pulumi.Output.from_input(asyncio.sleep(1, "foo"))
pulumi.export("exported", exported)
exported.apply(print)

pulumi.Output.from_input(asyncio.sleep(2, "printed")).apply(print)
pulumi.Output.from_input(asyncio.sleep(4, "not printed")).apply(print)

empty = pulumi.Output.from_input(asyncio.sleep(3, []))
empty.apply(lambda x: x[0])
