use cairn_sdk::program::{Args, ResourceOptions, custom};

let my_file = custom(
    "file:index:File",
    "my-file",
    Args::new()
        .set("content", "hello\n\"world\"")
        .set("path", "notes/a.txt"),
    ResourceOptions::new().protect(true),
);
