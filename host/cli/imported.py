import pulumi
import pulumi_file as file

b = file.File("b",
    content="",
    path="b.txt")
