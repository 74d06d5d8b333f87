use cairn_sdk::program::{Args, ResourceOptions, component, custom, provider};

let files = provider(
    "file",
    "files",
    Args::new()
        .set("root", "/srv"),
    ResourceOptions::new(),
);

let site = component(
    "my:index:Site",
    "site",
    ResourceOptions::new().protect(true),
);

let logs = custom(
    "file:index:Directory",
    "logs",
    Args::new()
        .set("path", "logs"),
    ResourceOptions::new().parent(&existing_site).protect(true),
);

let under_provider = custom(
    "file:index:Directory",
    "under-provider",
    Args::new()
        .set("path", "p"),
    ResourceOptions::new().parent(&files.resource),
);

let page = custom(
    "file:index:File",
    "page",
    Args::new()
        .set("content", "<h1>hi</h1>")
        .set("path", "site/index.html"),
    ResourceOptions::new().parent(&site).provider(&files),
);
