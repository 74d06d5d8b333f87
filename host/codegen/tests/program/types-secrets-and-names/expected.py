import pulumi
import pulumi_demo as demo

class_ = demo.storage.Bucket("logs-bucket",
    bucket_name="logs",
    bundle=pulumi.FileArchive("./site"),
    class_="STANDARD",
    index=pulumi.StringAsset("<h1>x</h1>"),
    meta={"nested": {"list": [1, "two", None]}},
    password=pulumi.Output.secret("hunter2"),
    ratio=0.25,
    required={"enabled": False, "max_age": 0},
    rules=[
        {"enabled": True, "max_age": 30, "prefix": "tmp/"},
        {"enabled": False, "max_age": 1.5},
    ],
    size="large",
    tags={"team": "infra", "cost-center": "42"},
    tier="hot",
    opts=pulumi.ResourceOptions(protect=True))

class_2 = demo.storage.Bucket("class_",
    bucket_name="second",
    required={"enabled": False, "max_age": 0},
    tier="hot")
