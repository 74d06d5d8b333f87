"""The quick start as a Python program compiled to WebAssembly (Cairn's Python SDK).

It picks a random pet name, port and admin password (the `random` provider), and writes a small
site into the directory granted to the `file` provider: a `site` component holding a directory
and an `index.html` that greets the pet, plus a credentials file whose content is secret. Stack
outputs: the name, port, page path and hash (plain) and the password (secret).

Configuration (`cairn config set <key> <value>`): `greeting` (default `Hello from Cairn`),
`petLength` (words in the name, default 2).
"""

from typing import Optional

import cairn_sdk.program as cairn


# Typed resources: the package's type tokens, arguments as keywords, outputs as properties.
class RandomPet(cairn.CustomResource):
    def __init__(self, name: str, length: int = 2, opts: Optional[cairn.ResourceOptions] = None):
        super().__init__("random:index/randomPet:RandomPet", name, {"length": length}, opts)


class RandomInteger(cairn.CustomResource):
    result = cairn.output_property("result")

    def __init__(self, name: str, min: int, max: int, opts: Optional[cairn.ResourceOptions] = None):
        super().__init__("random:index/randomInteger:RandomInteger", name, {"min": min, "max": max}, opts)


class RandomPassword(cairn.CustomResource):
    result = cairn.output_property("result")

    def __init__(self, name: str, length: int, special: bool = True, opts: Optional[cairn.ResourceOptions] = None):
        super().__init__("random:index/randomPassword:RandomPassword", name, {"length": length, "special": special}, opts)


class Directory(cairn.CustomResource):
    def __init__(self, name: str, path: str, opts: Optional[cairn.ResourceOptions] = None):
        super().__init__("file:index:Directory", name, {"path": path}, opts)


class File(cairn.CustomResource):
    path = cairn.output_property("path")
    sha256 = cairn.output_property("sha256")

    # No `mode`: WASI has no permission bits, so the file provider could only record it (and
    # would warn that it did not apply it).
    def __init__(self, name: str, content, path: str, opts: Optional[cairn.ResourceOptions] = None):
        super().__init__("file:index:File", name, {"content": content, "path": path}, opts)


class Site(cairn.ComponentResource):
    """`python-wasm:index:Site`: a directory and its index page."""

    def __init__(self, name: str, title: cairn.Output, port: cairn.Output, opts: Optional[cairn.ResourceOptions] = None):
        super().__init__("python-wasm:index:Site", name, opts=opts)
        child = cairn.ResourceOptions(parent=self)
        self.dir = Directory(f"{name}-dir", name, child)
        html = cairn.Output.format("<!doctype html>\n<h1>{}</h1>\n<p>Serving on port {}.</p>\n", title, port)
        self.index = File(f"{name}-index", html, f"{name}/index.html",
                          opts=cairn.ResourceOptions(parent=self, depends_on=[self.dir]))
        self.register_outputs({"indexPath": self.index.path, "sha256": self.index.sha256})


def main(ctx: cairn.Context) -> None:
    config = cairn.Config()
    greeting = config.get("greeting", "Hello from Cairn")
    words = config.get_int("petLength", 2)

    pet = RandomPet("name", length=words)
    port = RandomInteger("port", min=8000, max=8999)
    password = RandomPassword("admin-password", 20, special=False)

    title = pet.id.apply(lambda name: f"{greeting}, {name}!")
    site = Site("site", title, port.result)

    # Derived from a secret, so the file's content (and its hash) stay secret.
    credentials = password.result.apply(lambda p: f"admin:{p}\n")
    File("credentials", credentials, "site/credentials.txt",
         opts=cairn.ResourceOptions(parent=site, depends_on=[site.dir]))

    cairn.log(f"deploying the site for stack {ctx.stack}")
    cairn.export("petName", pet.id)
    cairn.export("port", port.result)
    cairn.export("indexPath", site.index.path)
    cairn.export("indexSha256", site.index.sha256)
    cairn.export("adminPassword", password.result)


WitWorld = cairn.export_program(main)
