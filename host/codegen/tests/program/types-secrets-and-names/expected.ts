import * as pulumi from "@pulumi/pulumi";
import * as demo from "@pulumi/demo";

const class_ = new demo.storage.Bucket("logs-bucket", {
    bucketName: "logs",
    bundle: new pulumi.asset.FileArchive("./site"),
    class: "STANDARD",
    index: new pulumi.asset.StringAsset("<h1>x</h1>"),
    meta: {
        "nested": {
            "list": [1, "two", undefined],
        },
    },
    password: pulumi.secret("hunter2"),
    ratio: 0.25,
    required: {
        enabled: false,
        maxAge: 0,
    },
    rules: [
        {
            enabled: true,
            maxAge: 30,
            prefix: "tmp/",
        },
        {
            enabled: false,
            maxAge: 1.5,
        },
    ],
    size: "large",
    tags: {
        "team": "infra",
        "cost-center": "42",
    },
    tier: "hot",
}, {
    protect: true,
});

const class_2 = new demo.storage.Bucket("class_", {
    bucketName: "second",
    required: {
        enabled: false,
        maxAge: 0,
    },
    tier: "hot",
});
