"""The crash harness's Python program (tests/e2e/crash.rs).

It declares config `count` files `f000.txt`, `f001.txt`, ... in the directory config `dir`,
holding `generation <g> of f<i>` (config `generation`, default 1), each made by a dynamic
provider with real side effects: `create` refuses to overwrite a file that exists (so a
duplicate create fails loudly); create, update and delete wait config `delayMs` before and
after acting (so a kill lands while operations are in flight, before or after they act).
"""

import os
import time

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, ResourceProvider, UpdateResult

# Inputs the provider compares; the rest (`delayMs`) only steers timing.
COMPARED = ("dir", "path", "content")


def inputs_of(props):
    return {k: v for k, v in props.items() if not k.startswith("__")}


class FileProvider(ResourceProvider):
    def create(self, props):
        delay = props["delayMs"] / 1000
        time.sleep(delay)
        with open(os.path.join(props["dir"], props["path"]), "x") as f:
            f.write(props["content"])
        time.sleep(delay)
        return CreateResult(id_=props["path"], outs=inputs_of(props))

    def read(self, id_, props):
        try:
            with open(os.path.join(props["dir"], id_)) as f:
                content = f.read()
        except FileNotFoundError:
            return ReadResult(id_=None, outs={})
        # What is on disk is reported as the inputs too, so the next update writes the
        # declared content back (a create killed mid-write leaves a short file).
        found = {**inputs_of(props), "path": id_, "content": content}
        return ReadResult(id_=id_, outs=found, inputs=dict(found))

    def diff(self, _id, olds, news):
        changed = [k for k in COMPARED if olds.get(k) != news.get(k)]
        return DiffResult(changes=bool(changed), replaces=[k for k in changed if k != "content"])

    def update(self, id_, _olds, news):
        delay = news["delayMs"] / 1000
        time.sleep(delay)
        with open(os.path.join(news["dir"], id_), "w") as f:
            f.write(news["content"])
        time.sleep(delay)
        return UpdateResult(outs=inputs_of(news))

    def delete(self, id_, props):
        delay = props["delayMs"] / 1000
        time.sleep(delay)
        try:
            os.remove(os.path.join(props["dir"], id_))
        except FileNotFoundError:
            pass
        time.sleep(delay)


class File(Resource):
    def __init__(self, name, props):
        super().__init__(FileProvider(), name, props)


config = pulumi.Config()
count = config.get_int("count") or 100
delay = config.get_int("delayMs") or 0
generation = config.get_int("generation") or 1
directory = config.require("dir")
for i in range(count):
    name = f"f{i:03}"
    File(
        name,
        {
            "dir": directory,
            "path": f"{name}.txt",
            "content": f"generation {generation} of {name}\n",
            "delayMs": delay,
        },
    )
pulumi.export("count", count)
