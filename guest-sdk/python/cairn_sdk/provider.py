"""Providers: a `Provider` holds the package's resource types (`Resource` subclasses, one per
type token) and functions, and may build component resources (`construct`, registering their
children through `cairn_sdk.engine`) and serve their methods (`call`); `export(provider)` makes
the class componentize-py exports as the WIT `provider` interface.

A resource type implements `create` and `delete`, and usually `check`, `diff`, `read` and
`update`. Inputs and outputs are plain Python values (see `cairn_sdk.values`). Raise
`ProviderError` for an ordinary failure: it reaches the engine as the WIT's `failed` error
(never a trap), with the partial state when given.

The component runs one call at a time, so the SDK tells a resource type what the current call
is about through attributes it sets before each call: `self.urn` (and `self.name`, the
resource's logical name) and, for `diff`, `self.ignore_changes`.
"""

import json
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

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


# Kinds of a detailed diff entry, as the WIT's `diff-kind`.
DIFF_KINDS = {
    "add": types.DiffKind.ADD,
    "add-replace": types.DiffKind.ADD_REPLACE,
    "delete": types.DiffKind.DELETE,
    "delete-replace": types.DiffKind.DELETE_REPLACE,
    "update": types.DiffKind.UPDATE,
    "update-replace": types.DiffKind.UPDATE_REPLACE,
}


@dataclass
class PropertyDiff:
    """One entry of a detailed diff: a property path (`tags.env`, `ports[0]`), its kind (a key
    of `DIFF_KINDS`), and whether the old value is the old inputs' (rather than the state's)."""

    path: str
    kind: str
    input_diff: bool = True


# URNs that properties depend on, by property name (the WIT's `list<property-dependencies>`).
Dependencies = Dict[str, List[str]]


@dataclass
class ConstructRequest:
    """`construct`: build the component `resource_type` called `name` (under `parent`, the
    program's resource it was declared in, if any) from `inputs`. `providers` are provider
    references by package, for the children (`RegisterResource.provider`); `dependencies` and
    `protect` are the component's options; `dry_run` is true in a preview."""

    project: str
    stack: str
    resource_type: str
    name: str
    parent: Optional[str]
    inputs: dict
    input_dependencies: Dependencies
    dependencies: List[str]
    protect: bool
    providers: Dict[str, str]
    dry_run: bool


@dataclass
class ConstructResult:
    """The component built: its URN (the one `register_resource` returned for it) and its
    outputs (`state`), with the URNs each output depends on."""

    urn: Optional[str] = None
    state: dict = field(default_factory=dict)
    state_dependencies: Dependencies = field(default_factory=dict)


@dataclass
class CallRequest:
    """`call`: run the method `token` (`pkg:module:Type/method`) with `args`; `args["__self__"]`
    is the component's `ResourceReference` when the program called it on one."""

    token: str
    args: dict
    arg_dependencies: Dependencies
    project: str
    stack: str
    dry_run: bool


@dataclass
class CallResult:
    """A method's outputs (with the URNs each depends on), or the check failures of its
    arguments."""

    outputs: dict = field(default_factory=dict)
    output_dependencies: Dependencies = field(default_factory=dict)
    failures: List[CheckFailure] = field(default_factory=list)


@dataclass
class Diff:
    """What `diff` found: the top-level inputs that changed and those of them that force a
    replacement. `changes=None` lets the engine compare inputs itself (replacements still
    count); `detailed` lists changed paths."""

    changed: List[str] = field(default_factory=list)
    replaces: List[str] = field(default_factory=list)
    delete_before_replace: bool = False
    changes: Optional[bool] = True
    detailed: Optional[List[PropertyDiff]] = None
    stable: List[str] = field(default_factory=list)


class Resource:
    """One resource type. Set `token` (`pkg:module:Type`) and `replace_on` (inputs whose change
    forces a replacement; `"*"` for every input)."""

    token: str = ""
    replace_on: Tuple[str, ...] = ()
    # Set by the SDK before each call (see the module's docstring).
    urn: str = ""
    ignore_changes: Tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The logical name of the resource the current call is about."""
        return self.urn.rsplit("::", 1)[-1]

    def check(self, olds: dict, news: dict) -> Tuple[dict, List[CheckFailure]]:
        return news, []

    def diff(self, id: str, old_inputs: dict, old_outputs: dict, news: dict) -> Diff:
        """Compares the top-level inputs (secrets do not count; an unknown always differs);
        keys in `self.ignore_changes` are skipped."""
        ignored = set(self.ignore_changes)
        changed = changed_keys(old_inputs, news, ignored)
        replaces = changed if "*" in self.replace_on else [k for k in changed if k in self.replace_on]
        return Diff(changed=changed, replaces=replaces)

    def create(self, inputs: dict, preview: bool) -> Tuple[str, dict]:
        raise ProviderError(f"{self.token} cannot be created")

    def read(self, id: str, inputs: dict, state: dict) -> Optional[Tuple[str, dict, dict]]:
        """The resource as it is now: `(id, inputs, outputs)`, or None when it is gone."""
        return id, inputs, state

    def update(self, id: str, old_outputs: dict, news: dict, preview: bool) -> dict:
        raise ProviderError(f"{self.token} cannot be updated in place")

    def delete(self, id: str, outputs: dict) -> None:
        pass


def changed_keys(olds: dict, news: dict, ignored=()) -> List[str]:
    """Top-level keys whose values differ, the news' first: secrecy alone is no change, an
    unknown new value always is, and null equals absent."""
    plain = values.unsecret
    keys = [k for k in news if k not in ignored and (values.contains_unknowns(news[k]) or plain(olds.get(k)) != plain(news[k]))]
    keys += [k for k in olds if k not in news and k not in ignored and olds[k] is not None]
    return keys


class Provider:
    """A package: its resource types, functions (`token -> callable(args) -> dict`), and the
    manifest built into the component (`name`, `version`, `schema`). Override `configure`,
    `check_config` and `diff_config` for the provider's own configuration, `construct` for
    component resources and `call` for their methods."""

    def __init__(self, resources: List[Resource], functions: Optional[Dict[str, Callable[[dict], dict]]] = None):
        self.resources = {r.token: r for r in resources}
        self.functions = functions or {}
        self.config: dict = {}

    def configure(self, config: dict, preview: bool) -> None:
        """Called with the provider's configuration before any resource operation."""
        self.config = config

    def check_config(self, olds: dict, news: dict) -> Tuple[dict, List[CheckFailure]]:
        """Validates the configuration; the default accepts it."""
        return news, []

    def diff_config(self, old_inputs: dict, news: dict) -> Optional[Diff]:
        """Whether a new configuration can manage what the old one made; None (the default)
        lets the engine compare the configurations itself."""
        return None

    def construct(self, request: ConstructRequest) -> ConstructResult:
        """Builds a component resource: register the component itself with
        `cairn_sdk.engine.register_resource` (its type, name, parent, dependencies and protect
        from the request), then its children with the component's URN as their parent, then
        its outputs with `register_resource_outputs`; return its URN and outputs. The default
        answers the WIT's `unimplemented`."""
        raise _unimplemented("construct")

    def call(self, request: CallRequest) -> CallResult:
        """Runs a component method (`request.token`). The default answers `unimplemented`."""
        raise _unimplemented("call")

    def resource(self, urn: str) -> Resource:
        token = _type_of(urn)
        found = self.resources.get(token)
        if found is None:
            raise _unimplemented(f"resource type {token} is not implemented by this provider")
        found.urn = urn
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


def _object(v: "types.Value") -> dict:
    decoded = values.decode(v)
    return decoded if isinstance(decoded, dict) else {}


# One check-failure list with nothing in it, shared: results return it as it is.
_NO_FAILURES: List["types.CheckFailure"] = []


def _failures(failures: List[CheckFailure]) -> List["types.CheckFailure"]:
    if not failures:
        return _NO_FAILURES
    return [types.CheckFailure(f.property, f.reason) for f in failures]


def _dependencies(deps: List["types.PropertyDependencies"]) -> Dependencies:
    out: Dependencies = {}
    for d in deps:
        # A property listed twice gets the union of its URNs.
        out.setdefault(d.property, []).extend(d.urns)
    return out


def _dependencies_to_wit(deps: Dependencies) -> List["types.PropertyDependencies"]:
    return [types.PropertyDependencies(p, list(urns)) for p, urns in deps.items()]


def _expect(result, kind: type, method: str):
    # A wrong return type is a bug in the provider: a failure that says so, not an
    # AttributeError from deep inside the conversion.
    if not isinstance(result, kind):
        raise TypeError(f"{method} returned {type(result).__name__}, not {kind.__name__}")
    return result


def _diff_result(d: Diff) -> "types.DiffResult":
    if d.changes is None:
        changes = types.DiffChanges.UNKNOWN
    else:
        changes = types.DiffChanges.SOME if (d.changed or d.replaces) else types.DiffChanges.NONE
    detailed = None
    if d.detailed is not None:
        detailed = [types.PropertyDiff(p.path, DIFF_KINDS[p.kind], p.input_diff) for p in d.detailed]
    return types.DiffResult(changes, list(d.replaces), list(d.stable), list(d.changed), detailed, d.delete_before_replace)


def export(provider: Provider, manifest: str) -> type:
    """The class to assign to `Provider` in the app module componentize-py builds:
    `Provider = cairn_sdk.export(MyProvider(...), MANIFEST)`. `manifest` is the JSON the build
    embeds (its `schema` is what `get-schema` serves)."""

    schema = json.dumps(json.loads(manifest).get("schema") or {})
    default_check = Resource.check
    default_diff = Resource.diff

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
        def check_config(self, request: "types.CheckRequest") -> "types.CheckResult":
            inputs, failures = provider.check_config(_object(request.olds), _object(request.news))
            return types.CheckResult(values.encode(inputs), _failures(failures))

        @guarded
        def diff_config(self, request: "types.DiffRequest") -> "types.DiffResult":
            d = provider.diff_config(_object(request.old_inputs), _object(request.news))
            if d is None:
                return types.DiffResult(types.DiffChanges.UNKNOWN, [], [], [], None, False)
            return _diff_result(d)

        @guarded
        def configure(self, inputs: "types.Value", preview: bool) -> None:
            provider.configure(_object(inputs), preview)

        @guarded
        def check(self, request: "types.CheckRequest") -> "types.CheckResult":
            resource = provider.resource(request.urn)
            if type(resource).check is default_check:
                # Accepting the inputs as they are needs no decoding: the table goes back.
                news = request.news
                if not news.strings:  # see values.encode: never an empty list of bytes back
                    news = types.Value(news.nodes, b"\0", news.extras)
                return types.CheckResult(news, _NO_FAILURES)
            news_table = request.news
            news = _object(news_table)
            # Shortcuts for the usual flat inputs (a shallow copy of them is a full one): the
            # olds of an unchanged resource are the news, and news returned unchanged go back
            # as the very table the host sent.
            snapshot = dict(news) if values.is_flat(news) else None
            if snapshot is not None and values.same_table(request.olds, news_table):
                olds = dict(news)
            else:
                olds = _object(request.olds)
            inputs, failures = resource.check(olds, news)
            if snapshot is not None and inputs is news and values.same_flat(inputs, snapshot) and news_table.strings:
                return types.CheckResult(news_table, _failures(failures))
            return types.CheckResult(values.encode(inputs), _failures(failures))

        @guarded
        def diff(self, request: "types.DiffRequest") -> "types.DiffResult":
            resource = provider.resource(request.urn)
            resource.ignore_changes = tuple(request.ignore_changes)
            if type(resource).diff is default_diff and values.same_table(request.old_inputs, request.news):
                # The default diff of identical tables (an unchanged resource), without decoding.
                return types.DiffResult(types.DiffChanges.NONE, [], [], [], None, False)
            d = resource.diff(request.id, _object(request.old_inputs), _object(request.old_outputs), _object(request.news))
            return _diff_result(d)

        @guarded
        def create(self, request: "types.CreateRequest") -> "types.CreateResult":
            resource = provider.resource(request.urn)
            rid, outputs = resource.create(_object(request.properties), request.preview)
            return types.CreateResult("" if request.preview else rid, values.encode(outputs))

        @guarded
        def read(self, request: "types.ReadRequest") -> "types.ReadResult":
            resource = provider.resource(request.urn)
            found = resource.read(request.id, _object(request.inputs), _object(request.state))
            if found is None:
                return types.ReadResult("", values.encode({}), values.encode({}))
            rid, inputs, outputs = found
            return types.ReadResult(rid, values.encode(inputs), values.encode(outputs))

        @guarded
        def update(self, request: "types.UpdateRequest") -> "types.UpdateResult":
            resource = provider.resource(request.urn)
            outputs = resource.update(request.id, _object(request.old_outputs), _object(request.news), request.preview)
            return types.UpdateResult(values.encode(outputs))

        @guarded
        def delete(self, request: "types.DeleteRequest") -> None:
            provider.resource(request.urn).delete(request.id, _object(request.outputs))

        @guarded
        def construct(self, request: "types.ConstructRequest") -> "types.ConstructResult":
            r = ConstructRequest(
                request.project,
                request.stack,
                request.resource_type,
                request.name,
                request.parent,
                _object(request.inputs),
                _dependencies(request.input_dependencies),
                list(request.dependencies),
                request.protect,
                dict(request.providers),
                request.dry_run,
            )
            result = _expect(provider.construct(r), ConstructResult, "construct")
            return types.ConstructResult(
                result.urn, values.encode(result.state), _dependencies_to_wit(result.state_dependencies)
            )

        @guarded
        def invoke(self, request: "types.InvokeRequest") -> "types.InvokeResult":
            function = provider.functions.get(request.token)
            if function is None:
                raise _unimplemented(f"function {request.token} is not implemented by this provider")
            return types.InvokeResult(values.encode(function(_object(request.args))), _NO_FAILURES)

        @guarded
        def call(self, request: "types.CallRequest") -> "types.CallResult":
            r = CallRequest(
                request.token,
                _object(request.args),
                _dependencies(request.arg_dependencies),
                request.project,
                request.stack,
                request.dry_run,
            )
            result = _expect(provider.call(r), CallResult, "call")
            return types.CallResult(
                values.encode(result.outputs),
                _dependencies_to_wit(result.output_dependencies),
                _failures(result.failures),
            )

        def cancel(self) -> None:
            pass

    Exported.__name__ = "Provider"
    return Exported
