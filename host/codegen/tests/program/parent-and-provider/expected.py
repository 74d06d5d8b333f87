import pulumi
import pulumi_file as file

files = file.Provider("files",
    root="/srv")

site = pulumi.ComponentResource("my:index:Site",
    "site",
    None,
    opts=pulumi.ResourceOptions(protect=True))

logs = file.Directory("logs",
    path="logs",
    opts=pulumi.ResourceOptions(parent=existing_site, protect=True))

under_provider = file.Directory("under-provider",
    path="p",
    opts=pulumi.ResourceOptions(parent=files))

page = file.File("page",
    content="<h1>hi</h1>",
    path="site/index.html",
    opts=pulumi.ResourceOptions(parent=site, provider=files))
