"""A program whose remote component (`escaper`) tries to reach outside itself (`HOW`)."""

import os

import pulumi

victim = pulumi.CustomResource(
    "random:index/randomPassword:RandomPassword", "victim", {"length": 24, "result": None}
)
pulumi.export("victim", victim.id)
how = os.environ.get("HOW", "")
if how != "none":
    pulumi.ComponentResource(
        "escaper:index:Escaper",
        "esc",
        {"how": how},
        remote=True,
        opts=pulumi.ResourceOptions(depends_on=[victim]),
    )
