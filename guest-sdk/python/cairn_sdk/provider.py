"""Providers: a `Provider` holds the package's resource types (`Resource` subclasses, one per
type token) and functions; `export(provider)` makes the class componentize-py exports as the
WIT `provider` interface.

A resource type implements `create` and `delete`, and usually `check`, `diff`, `read` and
`update`. Inputs and outputs are plain Python values (see `cairn_sdk.values`). Raise
`ProviderError` for an ordinary failure: it reaches the engine as the WIT's `failed` error
(never a trap), with the partial state when given.
"""

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import host, types

from . import values


class ProviderError(Exception):
    """An ordinary failure of an operation. `partial`: `(id, inputs, outputs)` of a resource
    that was created (or changed) before the failure, so the engine keeps tracking it."""

    def __init__(self, message: str, partial: Optional[Tuple[str, dict, dict]] = None):
        super().__init__(message)
        self.partial = partial


@dataclass
class CheckFailure:
    property: str
    reason: str


@dataclass
class Diff:
    """What `diff` found: the top-level inputs that changed and those of them that force a
    replacement. `changes=None` lets the engine compare inputs itself."""

    changed: List[str] = field(default_factory=list)
    replaces: List[str] = field(default_factory=list)
    delete_before_replace: bool = False
    changes: Optional[bool] = True


class Resource:
    """One resource type. Set `token` (`pkg:module:Type`) and `replace_on` (inputs whose change
    forces a replacement; `"*"` for every input)."""

    token: str = ""
    replace_on: Tuple[str, ...] = ()

    def check(self, olds: dict, news: dict) -> Tuple[dict, List[CheckFailure]]:
        return news, []

    def diff(self, id: str, old_inputs: dict, old_outputs: dict, news: dict) -> Diff:
        keys = sorted(set(old_inputs) | set(news))
        changed = [k for k in keys if old_inputs.get(k) != news.get(k)]
        replaces = changed if "*" in self.replace_on else [k for k in changed if k in self.replace_on]
        return Diff(changed=changed, replaces=replaces)

    def create(self, inputs: dict, preview: bool) -> Tuple[str, dict]:
        raise ProviderError(f"{self.token} cannot be created")

    def read(self, id: str, inputs: dict, state: dict) -> Tuple[str, dict, dict]:
        return id, inputs, state

    def update(self, id: str, old_outputs: dict, news: dict, preview: bool) -> dict:
        raise ProviderError(f"{self.token} cannot be updated in place")

    def delete(self, id: str, outputs: dict) -> None:
        pass


class Provider:
    """A package: its resource types, functions (`token -> callable(args) -> dict`), and the
    manifest built into the component (`name`, `version`, `schema`)."""

    def __init__(self, resources: List[Resource], functions: Optional[Dict[str, Callable[[dict], dict]]] = None):
        self.resources = {r.token: r for r in resources}
        self.functions = functions or {}
        self.config: dict = {}

    def configure(self, config: dict, preview: bool) -> None:
        """Called with the provider's configuration before any resource operation."""
        self.config = config

    def resource(self, urn: str) -> Resource:
        token = _type_of(urn)
        found = self.resources.get(token)
        if found is None:
            raise _unimplemented(f"resource type {token} is not implemented by this provider")
        return found


def log(message: str, severity: str = "info", urn: Optional[str] = None) -> None:
    """A log record shown with the deployment's progress (`debug`, `info`, `warning`, `error`)."""
    level = {
        "debug": host.Severity.DEBUG,
        "info": host.Severity.INFO,
        "warning": host.Severity.WARNING,
        "error": host.Severity.ERROR,
    }.get(severity, host.Severity.INFO)
    host.log(level, urn, message)


def _type_of(urn: str) -> str:
    # urn:pulumi:stack::project::[parent$]type::name
    parts = urn.split("::")
    if len(parts) < 4:
        return urn
    return parts[2].rsplit("$", 1)[-1]


def _unimplemented(message: str) -> Err:
    return Err(types.ProviderError_Unimplemented(message))


def _failed(e: Exception) -> Err:
    partial = None
    if isinstance(e, ProviderError) and e.partial is not None:
        pid, inputs, outputs = e.partial
        partial = types.PartialState(pid, values.encode(inputs), values.encode(outputs))
    message = str(e) if isinstance(e, ProviderError) else f"{type(e).__name__}: {e}"
    return Err(types.ProviderError_Failed(types.Failure(message, partial)))


def _object(v: types.Value) -> dict:
    decoded = values.decode(v)
    return decoded if isinstance(decoded, dict) else {}


def _failures(failures: List[CheckFailure]) -> List[types.CheckFailure]:
    return [types.CheckFailure(f.property, f.reason) for f in failures]


def export(provider: Provider, manifest: str) -> type:
    """The class to assign to `Provider` in the app module componentize-py builds:
    `Provider = cairn_sdk.export(MyProvider(...), MANIFEST)`. `manifest` is the JSON the build
    embeds (its `schema` is what `get-schema` serves)."""

    schema = json.dumps(json.loads(manifest).get("schema") or {})

    def guarded(call):
        def run(*args):
            try:
                return call(*args)
            except Err:
                raise
            except Exception as e:  # an ordinary failure, never a trap
                raise _failed(e) from None

        return run

    class Exported(exports.Provider):
        def get_schema(self) -> str:
            return schema

        @guarded
        def check_config(self, request: types.CheckRequest) -> types.CheckResult:
            return types.CheckResult(request.news, [])

        @guarded
        def diff_config(self, request: types.DiffRequest) -> types.DiffResult:
            return types.DiffResult(types.DiffChanges.UNKNOWN, [], [], [], None, False)

        @guarded
        def configure(self, inputs: types.Value, preview: bool) -> None:
            provider.configure(_object(inputs), preview)

        @guarded
        def check(self, request: types.CheckRequest) -> types.CheckResult:
            resource = provider.resource(request.urn)
            inputs, failures = resource.check(_object(request.olds), _object(request.news))
            return types.CheckResult(values.encode(inputs), _failures(failures))

        @guarded
        def diff(self, request: types.DiffRequest) -> types.DiffResult:
            resource = provider.resource(request.urn)
            d = resource.diff(request.id, _object(request.old_inputs), _object(request.old_outputs), _object(request.news))
            ignored = set(request.ignore_changes)
            changed = [k for k in d.changed if k not in ignored]
            replaces = [k for k in d.replaces if k not in ignored]
            if d.changes is None:
                changes = types.DiffChanges.UNKNOWN
            else:
                changes = types.DiffChanges.SOME if changed else types.DiffChanges.NONE
            return types.DiffResult(changes, replaces, [], changed, None, d.delete_before_replace)

        @guarded
        def create(self, request: types.CreateRequest) -> types.CreateResult:
            resource = provider.resource(request.urn)
            rid, outputs = resource.create(_object(request.properties), request.preview)
            return types.CreateResult(rid, values.encode(outputs))

        @guarded
        def read(self, request: types.ReadRequest) -> types.ReadResult:
            resource = provider.resource(request.urn)
            rid, inputs, outputs = resource.read(request.id, _object(request.inputs), _object(request.state))
            return types.ReadResult(rid, values.encode(inputs), values.encode(outputs))

        @guarded
        def update(self, request: types.UpdateRequest) -> types.UpdateResult:
            resource = provider.resource(request.urn)
            outputs = resource.update(request.id, _object(request.old_outputs), _object(request.news), request.preview)
            return types.UpdateResult(values.encode(outputs))

        @guarded
        def delete(self, request: types.DeleteRequest) -> None:
            provider.resource(request.urn).delete(request.id, _object(request.outputs))

        def construct(self, request: types.ConstructRequest) -> types.ConstructResult:
            raise _unimplemented(f"components ({request.resource_type}) are not implemented by this provider")

        @guarded
        def invoke(self, request: types.InvokeRequest) -> types.InvokeResult:
            function = provider.functions.get(request.token)
            if function is None:
                raise _unimplemented(f"function {request.token} is not implemented by this provider")
            return types.InvokeResult(values.encode(function(_object(request.args))), [])

        def call(self, request: types.CallRequest) -> types.CallResult:
            raise _unimplemented(f"methods ({request.token}) are not implemented by this provider")

        def cancel(self) -> None:
            pass

    Exported.__name__ = "Provider"
    return Exported
