"""The `${PACKAGE}` provider: Cairn loads it as a sandboxed WebAssembly component (built from
this file by Cairn's Python SDK and componentize-py) and calls it to check, create, update and
delete the package's resources.

It manages one resource type, `${PACKAGE}:index:Greeting` (its schema is in `cairn.json`):
inputs `name` and `salutation`, output `message`. A greeting lives only in the stack's state; a
real provider calls a service in `create`, `update` and `delete` (asking for the hosts it needs
under `capabilities` in `cairn.json`).
"""

import cairn_sdk
from _cairn_manifest import MANIFEST  # cairn.json, given to the app by the build
from cairn_sdk import UNKNOWN, CheckFailure


def outputs(inputs: dict) -> dict:
    """The resource's outputs for these (checked) inputs. In a preview an input may be unknown
    (another resource's output), and so is the message then."""
    name, salutation = inputs.get("name"), inputs.get("salutation")
    if isinstance(name, str) and isinstance(salutation, str):
        message = f"{salutation}, {name}!"
    else:
        message = UNKNOWN
    return {"name": name, "salutation": salutation, "message": message}


class Greeting(cairn_sdk.Resource):
    token = "${PACKAGE}:index:Greeting"

    def check(self, olds, news):
        """Validates the inputs and fills in defaults; failures name the property."""
        failures = []
        name = news.get("name")
        if name is not UNKNOWN and not isinstance(name, str):
            failures.append(CheckFailure("name", "name is required and must be a string"))
        news = {**news, "salutation": news.get("salutation", "Hello")}
        salutation = news["salutation"]
        if isinstance(salutation, str) and not salutation.strip():
            failures.append(CheckFailure("salutation", "must not be empty"))
        return news, failures

    def create(self, inputs, preview):
        # In a preview, describe the result and never act.
        if preview:
            return "", outputs(inputs)
        return f"greeting-{inputs['name']}", outputs(inputs)

    def update(self, id, old_outputs, news, preview):
        return outputs(news)

    def delete(self, id, outputs):
        pass


Provider = cairn_sdk.export(cairn_sdk.Provider([Greeting()]), MANIFEST)
