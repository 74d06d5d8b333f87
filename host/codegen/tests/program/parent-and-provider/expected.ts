import * as pulumi from "@pulumi/pulumi";
import * as file from "@pulumi/file";

const files = new file.Provider("files", {
    root: "/srv",
});

const site = new pulumi.ComponentResource("my:index:Site", "site", {}, {
    protect: true,
});

const logs = new file.Directory("logs", {
    path: "logs",
}, {
    parent: existingSite,
    protect: true,
});

const underProvider = new file.Directory("under-provider", {
    path: "p",
}, {
    parent: files,
});

const page = new file.File("page", {
    content: "<h1>hi</h1>",
    path: "site/index.html",
}, {
    parent: site,
    provider: files,
});
