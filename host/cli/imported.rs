use cairn_sdk::program::{Args, ResourceOptions, custom};

let a_file = custom(
    "file:index:File",
    "a-file",
    Args::new()
        .set("content", "alpha\n")
        .set("path", "a.txt"),
    ResourceOptions::new().protect(true),
);
