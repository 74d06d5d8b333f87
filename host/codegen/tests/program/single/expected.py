import pulumi
import pulumi_file as file

my_file = file.File("my-file",
    content="hello\n\"world\"",
    path="notes/a.txt",
    opts=pulumi.ResourceOptions(protect=True))
