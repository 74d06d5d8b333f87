import * as pulumi from "@pulumi/pulumi";
import * as file from "@pulumi/file";

const myFile = new file.File("my-file", {
    content: "hello\n\"world\"",
    path: "notes/a.txt",
}, {
    protect: true,
});
