"""Programs: declare a stack's resources in Python, built into a component of the WIT's
`program-world` (wit/program.wit) with `python -m cairn_sdk.build DIR --world program-world`
(`cairn up` does it for a `runtime: wasm` project whose `main` is a directory with `app.py`).

```python
import cairn_sdk.program as cairn

def main(ctx: cairn.Context) -> None:
    config = cairn.Config()
    pet = cairn.CustomResource("random:index/randomPet:RandomPet", "pet", {"length": 2})
    cairn.export("name", pet.output("id"))

WitWorld = cairn.export_program(main)
```

The programming model is Pulumi's (see the spec's programming model), as the Rust SDK's
`cairn_sdk::program` has it:

* `Output`: a value known later, with the URNs it depends on, secretness, and unknown-ness in
  a preview. `apply` derives outputs (a callback never runs on an unknown value: the result is
  unknown too), `Output.all`, `concat`, `format`, `Output.secret`, `unsecret`, `output[key]`.
* Resources: `CustomResource`, `ComponentResource` (+ `register_outputs`), remote components
  (`ComponentResource(..., remote=True)`), `ProviderResource`, `read` (an existing resource),
  `invoke` (provider functions), `StackReference`; `Resource` is their base, and typed
  resources are subclasses that declare their outputs with `output_property`.
* `ResourceOptions`: parent, depends_on, protect, provider(s), aliases, ignore_changes,
  replace_on_changes, delete_before_replace, additional_secret_outputs, custom_timeouts,
  import_, retain_on_delete, deleted_with, version.
* `Config` (get / require / get_secret / get_int / get_float / get_bool / get_object),
  `export` (stack outputs), `log`.

A component cannot be re-entered while `run` is on its stack, so the SDK drives its own event
loop: declarations send their requests (`monitor.register-resource` and the like return a handle
at once) as soon as what they refer to is known, `run` collects completions with `monitor.wait`
and runs what was waiting on them, until nothing is outstanding; then it sends the stack
outputs. A failure anywhere fails the program once every request already made has finished, so
the state stays consistent.
"""

import json
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from componentize_py_types import Err
from wit_world.imports import context, host, monitor, types

from . import values
from .values import UNKNOWN, OutputValue, Secret

__all__ = [
    "Alias",
    "ComponentResource",
    "Config",
    "ConfigError",
    "Context",
    "CustomResource",
    "CustomTimeouts",
    "Output",
    "ProviderResource",
    "Resource",
    "ResourceOptions",
    "StackReference",
    "UNKNOWN_ID",
    "export",
    "export_program",
    "get_organization",
    "get_project",
    "get_stack",
    "invoke",
    "is_dry_run",
    "log",
    "output_property",
    "read",
]

# The ID a provider reference uses for a provider not created yet (a preview).
UNKNOWN_ID = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


# --- The event loop -------------------------------------------------------------------------


class _Loop:
    """The program's run: callbacks ready to run, handlers of outstanding host requests, the
    first error, and the stack outputs."""

    def __init__(self) -> None:
        self.ready: deque = deque()
        self.handlers: Dict[int, Callable[[Any], None]] = {}
        self.error: Optional[str] = None
        self.exports: Dict[str, Any] = {}
        self._deployment = None
        self._config: Optional[Dict[str, Any]] = None

    @property
    def deployment(self):
        if self._deployment is None:
            self._deployment = context.deployment()
        return self._deployment

    @property
    def config(self) -> Dict[str, Any]:
        if self._config is None:
            self._config = {}
            for key, value in context.config():
                try:
                    self._config[key] = values.decode(value)
                except values.MalformedValue as e:
                    self.fail(f"configuration value {key!r}: the host sent a malformed value: {e}")
        return self._config

    def fail(self, message: str) -> None:
        """Records an error that fails the program (the first one wins)."""
        if self.error is None:
            self.error = message

    def soon(self, callback: Callable[[], None]) -> None:
        """Runs `callback` from the loop (never nested in another callback, so long chains of
        outputs need no deep Python stack)."""
        self.ready.append(callback)

    def run_ready(self) -> None:
        ready = self.ready
        while ready:
            callback = ready.popleft()
            try:
                callback()
            except Exception as e:  # a bug in the SDK: fail the program, keep the loop alive
                self.fail(f"internal error in the Cairn SDK: {type(e).__name__}: {e}")

    def drain(self) -> None:
        """Runs callbacks and dispatches completions until nothing is ready or outstanding."""
        while True:
            self.run_ready()
            done = monitor.wait()
            if not done:
                if self.handlers:
                    # The host says nothing is outstanding: the rest can never complete.
                    self.fail(f"{len(self.handlers)} requests never completed")
                    self.handlers.clear()
                return
            for completion in done:
                handler = self.handlers.pop(completion.handle, None)
                if handler is not None:
                    self.soon(_bind(handler, completion.outcome))

    def on_complete(self, handle: int, handler: Callable[[Any], None]) -> None:
        self.handlers[handle] = handler


def _bind(f, arg):
    return lambda: f(arg)


_loop: Optional[_Loop] = None


def _current() -> _Loop:
    if _loop is None:
        raise RuntimeError("resources and outputs exist only while the program runs (inside main)")
    return _loop


# --- Outputs ---------------------------------------------------------------------------------

_PENDING, _KNOWN, _UNKNOWN, _FAILED = range(4)


class Output:
    """A value known later: its value once resolved, the URNs of the resources it depends on,
    whether it is secret, and whether it is unknown (a preview) or failed.

    Never read an output's value directly: derive what you need with `apply` (or `all`,
    `concat`, `format`, `output[key]`) and pass outputs as resource inputs."""

    __slots__ = ("_state", "_value", "_secret", "_deps", "_waiters")

    def __init__(self) -> None:
        self._state = _PENDING
        self._value: Any = None
        self._secret = False
        self._deps: frozenset = frozenset()
        self._waiters: List[Callable[["Output"], None]] = []

    # Making outputs.

    @staticmethod
    def _settled(state: int, value: Any = None, secret: bool = False, deps=frozenset()) -> "Output":
        o = Output()
        o._resolve(state, value, secret, deps)
        return o

    @staticmethod
    def from_input(value: Any) -> "Output":
        """An output of `value`: an output as it is; a plain value (which may hold outputs in
        its lists and dicts) as an output of the plain value once they are all known."""
        if isinstance(value, Output):
            return value
        return _join_input(value, lift=True)

    @staticmethod
    def secret(value: Any) -> "Output":
        """`value` (a plain value or an output) as a secret output."""
        return Output.from_input(value)._map_meta(secret=True)

    @staticmethod
    def unsecret(value: "Output") -> "Output":
        """The same value, no longer secret (explicitly revealing it)."""
        return Output.from_input(value)._map_meta(secret=False)

    @staticmethod
    def unknown() -> "Output":
        """An output whose value is not known (as in a preview)."""
        return Output._settled(_UNKNOWN)

    @staticmethod
    def all(*args: Any, **kwargs: Any) -> "Output":
        """Every argument (outputs or plain values) as one output: of a list for positional
        arguments, of a dict for keyword ones. Unknown if any is, secret if any is, depending
        on all of them."""
        if args and kwargs:
            raise TypeError("Output.all takes positional or keyword arguments, not both")
        if kwargs:
            keys = list(kwargs)
            return _join([Output.from_input(kwargs[k]) for k in keys], lambda vs: dict(zip(keys, vs)))
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            args = tuple(args[0])
        return _join([Output.from_input(a) for a in args], list)

    @staticmethod
    def concat(*parts: Any) -> "Output":
        """The parts (strings, numbers or outputs of them) concatenated as text."""
        return Output.all(*parts).apply(lambda vs: "".join(_text(v) for v in vs))

    @staticmethod
    def format(template: str, *args: Any, **kwargs: Any) -> "Output":
        """`template.format(*args, **kwargs)` once every argument (possibly an output) is known."""
        keys = list(kwargs)
        joined = Output.all(*args, *[kwargs[k] for k in keys])
        n = len(args)
        return joined.apply(lambda vs: template.format(*map(_number, vs[:n]), **{k: _number(v) for k, v in zip(keys, vs[n:])}))

    # Deriving outputs.

    def apply(self, f: Callable[[Any], Any]) -> "Output":
        """An output of `f(value)` once this output is known. `f` never runs on an unknown
        value (in a preview the result is then unknown too). When `f` returns an output, the
        result is that output's value (with both outputs' dependencies and secretness). An
        exception in `f` fails the result and the program."""
        out = Output()

        def run(src: "Output") -> None:
            if src._state != _KNOWN:
                out._resolve(src._state, src._value, src._secret, src._deps)
                return
            try:
                result = f(src._value)
            except Exception as e:
                message = f"apply failed: {type(e).__name__}: {e}"
                _current().fail(message)
                out._resolve(_FAILED, message, src._secret, src._deps)
                return
            if isinstance(result, Output):
                secret, deps = src._secret, src._deps
                result._on_settled(lambda r: out._resolve(r._state, r._value, r._secret or secret, r._deps | deps))
                return
            state, value, secret = _lift(result)
            out._resolve(state, value, src._secret or secret, src._deps)

        self._on_settled(run)
        return out

    def __getitem__(self, key: Any) -> "Output":
        """Lifted access: `output[key]` of a dict or list output (None when absent)."""

        def get(v: Any) -> Any:
            if isinstance(v, dict):
                return v.get(key)
            if isinstance(v, (list, tuple)) and isinstance(key, int) and -len(v) <= key < len(v):
                return v[key]
            return None

        return self.apply(get)

    def as_secret(self) -> "Output":
        return self._map_meta(secret=True)

    # What an output is not.

    def __iter__(self):
        raise TypeError("an Output is not iterable: use apply to work with its value")

    def __bool__(self) -> bool:
        raise TypeError("an Output has no truth value yet: use apply to work with its value")

    def __str__(self) -> str:
        raise TypeError("an Output is not text yet: use apply, Output.concat or Output.format")

    def __repr__(self) -> str:
        state = ("pending", "known", "unknown", "failed")[self._state]
        return f"Output({state}{', secret' if self._secret else ''})"

    # Plumbing.

    def _resolve(self, state: int, value: Any = None, secret: bool = False, deps=frozenset()) -> None:
        if self._state != _PENDING:
            return  # resolving twice is an SDK bug; the first value stays
        self._state, self._value, self._secret, self._deps = state, value, secret, frozenset(deps)
        waiters, self._waiters = self._waiters, []
        if waiters:
            loop = _current()
            for waiter in waiters:
                loop.soon(_bind(waiter, self))

    def _on_settled(self, f: Callable[["Output"], None]) -> None:
        """Calls `f(self)` from the loop once this output is resolved."""
        if self._state == _PENDING:
            self._waiters.append(f)
        else:
            _current().soon(_bind(f, self))

    def _map_meta(self, secret: Optional[bool] = None) -> "Output":
        out = Output()

        def run(src: "Output") -> None:
            out._resolve(src._state, src._value, src._secret if secret is None else secret, src._deps)

        self._on_settled(run)
        return out

    def _with_deps(self, deps) -> "Output":
        out = Output()
        self._on_settled(lambda src: out._resolve(src._state, src._value, src._secret, src._deps | frozenset(deps)))
        return out


def _number(v: Any) -> Any:
    """Whole numbers (every number from the engine is a float) as ints, for text."""
    if type(v) is float and v.is_integer():
        return int(v)
    return v


def _text(v: Any) -> str:
    return str(_number(v))


def _lift(value: Any) -> Tuple[int, Any, bool]:
    """A plain value with its markers moved onto the output: (state, value, secret). Secrets
    anywhere make it secret (their contents stay); an unknown anywhere makes it unknown."""
    if values.contains_unknowns(value):
        return _UNKNOWN, None, _has_secret(value)
    if _has_secret(value):
        return _KNOWN, values.unsecret(value), True
    if type(value) is OutputValue:
        return _KNOWN, value.value, value.secret
    return _KNOWN, value, False


def _has_secret(x: Any) -> bool:
    t = type(x)
    if t is Secret:
        return True
    if t is list:
        return any(_has_secret(v) for v in x)
    if t is dict:
        return any(_has_secret(v) for v in x.values())
    if t is OutputValue:
        return x.secret or _has_secret(x.value)
    return False


def _join(items: List[Output], finish: Callable[[List[Any]], Any]) -> Output:
    """One output of `finish(values)` once every item is resolved (unknown if any is, failed
    if any failed, secret if any is, depending on them all)."""
    out = Output()
    left = [len(items)]

    def settle(_: Output) -> None:
        left[0] -= 1
        if left[0]:
            return
        secret = any(i._secret for i in items)
        deps = frozenset().union(*(i._deps for i in items)) if items else frozenset()
        failed = next((i for i in items if i._state == _FAILED), None)
        if failed is not None:
            out._resolve(_FAILED, failed._value, secret, deps)
        elif any(i._state == _UNKNOWN for i in items):
            out._resolve(_UNKNOWN, None, secret, deps)
        else:
            try:
                out._resolve(_KNOWN, finish([i._value for i in items]), secret, deps)
            except Exception as e:
                message = f"{type(e).__name__}: {e}"
                _current().fail(message)
                out._resolve(_FAILED, message, secret, deps)

    if not items:
        out._resolve(_KNOWN, finish([]))
    for item in items:
        item._on_settled(settle)
    return out


def _join_input(value: Any, lift: bool) -> Output:
    """An output of a plain value that may hold outputs in its lists and dicts, once they are
    all resolved. With `lift`, their secretness and unknown-ness become the result's; without,
    each stays where it was, as a `Secret` or `UNKNOWN` marker in the value (how the engine
    wants inputs: only the secret parts encrypted)."""
    found: List[Output] = []

    def collect(x: Any) -> None:
        if isinstance(x, Output):
            found.append(x)
        elif isinstance(x, dict):
            for v in x.values():
                collect(v)
        elif isinstance(x, (list, tuple)):
            for v in x:
                collect(v)
        elif isinstance(x, Secret):
            collect(x.value)

    collect(value)
    if not found:
        state, plain, secret = _lift(value) if lift else (_KNOWN, value, False)
        return Output._settled(state, plain, secret)
    out = Output()
    left = [len(found)]

    def rebuild(x: Any) -> Any:
        if isinstance(x, Output):
            if x._state == _UNKNOWN:
                return UNKNOWN
            return Secret(x._value) if x._secret else x._value
        if isinstance(x, dict):
            return {k: rebuild(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [rebuild(v) for v in x]
        if isinstance(x, Secret):
            return Secret(rebuild(x.value))
        return x

    def settle(_: Output) -> None:
        left[0] -= 1
        if left[0]:
            return
        deps = frozenset().union(*(o._deps for o in found))
        failed = next((o for o in found if o._state == _FAILED), None)
        if failed is not None:
            out._resolve(_FAILED, failed._value, False, deps)
            return
        rebuilt = rebuild(value)
        if lift:
            state, plain, secret = _lift(rebuilt)
            out._resolve(state, plain, secret, deps)
        else:
            out._resolve(_KNOWN, rebuilt, False, deps)

    for o in found:
        o._on_settled(settle)
    return out


def _wire(value: Any) -> Output:
    """`value` as the engine takes it (an input property, a stack output): an output of the
    plain value with `Secret` and `UNKNOWN` markers where its parts are secret or unknown."""
    if isinstance(value, Output):
        out = Output()

        def run(src: Output) -> None:
            if src._state == _UNKNOWN:
                out._resolve(_KNOWN, UNKNOWN, False, src._deps)
            elif src._state == _FAILED:
                out._resolve(_FAILED, src._value, False, src._deps)
            else:
                # The value may itself hold outputs (apply returning a dict of outputs).
                inner = _join_input(src._value, lift=False)
                secret, deps = src._secret, src._deps

                def done(i: Output) -> None:
                    v = i._value
                    out._resolve(i._state, Secret(v) if secret and i._state == _KNOWN and v is not UNKNOWN else v, False, deps | i._deps)

                inner._on_settled(done)

        value._on_settled(run)
        return out
    return _join_input(value, lift=False)


# --- Context, configuration, stack outputs, logging -----------------------------------------


class Context:
    """What `main` gets: the deployment the program runs in."""

    @property
    def project(self) -> str:
        return _current().deployment.project

    @property
    def stack(self) -> str:
        return _current().deployment.stack

    @property
    def organization(self) -> str:
        return _current().deployment.organization

    @property
    def dry_run(self) -> bool:
        """True in a preview: new resources' outputs are unknown."""
        return _current().deployment.dry_run

    @property
    def root_urn(self) -> str:
        """The URN of the stack's root resource."""
        return _current().deployment.root_urn

    def export(self, name: str, value: Any) -> None:
        export(name, value)


def get_project() -> str:
    return _current().deployment.project


def get_stack() -> str:
    return _current().deployment.stack


def get_organization() -> str:
    return _current().deployment.organization


def is_dry_run() -> bool:
    return _current().deployment.dry_run


def export(name: str, value: Any) -> None:
    """A stack output (a plain value or an output; secret outputs stay secret)."""
    _current().exports[name] = value


class ConfigError(Exception):
    """A configuration value is missing or not of the type asked for."""


class Config:
    """One namespace of the stack's configuration (`cairn config set [<namespace>:]<key>`):
    the project's by default."""

    def __init__(self, namespace: Optional[str] = None) -> None:
        self.namespace = namespace or get_project()

    def full_key(self, key: str) -> str:
        return key if ":" in key else f"{self.namespace}:{key}"

    def _raw(self, key: str) -> Tuple[Any, bool]:
        """The value (None when unset) and whether it is secret."""
        value = _current().config.get(self.full_key(key))
        secret = isinstance(value, Secret)
        return values.unsecret(value), secret

    def _missing(self, key: str, secret: bool = False) -> ConfigError:
        full = self.full_key(key)
        flag = "--secret " if secret else ""
        return ConfigError(
            f"missing required configuration variable '{full}'\n"
            f"    please set a value using the command `cairn config set {flag}{full} <value>`"
        )

    def get(self, key: str, default: Optional[str] = None) -> Optional[str]:
        """The value as text (a structured value as JSON), or `default` when unset. A secret
        value is returned as it is; prefer `get_secret`."""
        value, _ = self._raw(key)
        if value is None:
            return default
        return value if isinstance(value, str) else json.dumps(value)

    def require(self, key: str) -> str:
        value = self.get(key)
        if value is None:
            raise self._missing(key)
        return value

    def get_secret(self, key: str, default: Optional[str] = None) -> Optional[Output]:
        """The value as a secret output (secret whether or not it was set with `--secret`)."""
        value = self.get(key, default)
        return None if value is None else Output.secret(value)

    def require_secret(self, key: str) -> Output:
        value = self.get(key)
        if value is None:
            raise self._missing(key, secret=True)
        return Output.secret(value)

    def _parsed(self, key: str, what: str, parse: Callable[[str], Any], default: Any) -> Any:
        text = self.get(key)
        if text is None:
            return default
        try:
            return parse(text.strip())
        except (ValueError, TypeError):
            raise ConfigError(f"configuration value '{self.full_key(key)}' is not {what}: {text!r}") from None

    def get_int(self, key: str, default: Optional[int] = None) -> Optional[int]:
        return self._parsed(key, "a whole number", int, default)

    def get_float(self, key: str, default: Optional[float] = None) -> Optional[float]:
        return self._parsed(key, "a number", float, default)

    def get_bool(self, key: str, default: Optional[bool] = None) -> Optional[bool]:
        def parse(text: str) -> bool:
            if text in ("true", "false"):
                return text == "true"
            raise ValueError(text)

        return self._parsed(key, "true or false", parse, default)

    def get_object(self, key: str, default: Any = None) -> Any:
        """A structured value (set with `cairn config set --path` or as JSON)."""
        value, _ = self._raw(key)
        if value is None:
            return default
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError as e:
                raise ConfigError(f"configuration value '{self.full_key(key)}' is not JSON: {e}") from None
        return value

    def require_int(self, key: str) -> int:
        value = self.get_int(key)
        if value is None:
            raise self._missing(key)
        return value

    def require_bool(self, key: str) -> bool:
        value = self.get_bool(key)
        if value is None:
            raise self._missing(key)
        return value

    def require_object(self, key: str) -> Any:
        value = self.get_object(key)
        if value is None:
            raise self._missing(key)
        return value


_SEVERITIES = {
    "debug": host.Severity.DEBUG,
    "info": host.Severity.INFO,
    "warning": host.Severity.WARNING,
    "error": host.Severity.ERROR,
}


def log(message: str, severity: str = "info", resource: Optional["Resource"] = None) -> None:
    """A log record shown with the deployment's progress (`debug`, `info`, `warning`,
    `error`), about `resource` when given (once its URN is known)."""
    urn = None
    if resource is not None and resource.urn._state == _KNOWN:
        urn = resource.urn._value
    host.log(_SEVERITIES.get(severity, host.Severity.INFO), urn, str(message))


# --- Resources -------------------------------------------------------------------------------


@dataclass
class Alias:
    """A previous identity of a resource: its full URN, or the parts that differed."""

    urn: Optional[str] = None
    name: Optional[str] = None
    type_: Optional[str] = None
    parent: Optional[Union["Resource", str]] = None
    no_parent: bool = False
    stack: Optional[str] = None
    project: Optional[str] = None


@dataclass
class CustomTimeouts:
    """Seconds a create, update or delete may take (0: the provider's default)."""

    create: float = 0.0
    update: float = 0.0
    delete: float = 0.0


@dataclass
class ResourceOptions:
    """The programming model's resource options."""

    parent: Optional["Resource"] = None
    depends_on: Sequence["Resource"] = ()
    protect: bool = False
    provider: Optional["ProviderResource"] = None
    providers: Union[Sequence["ProviderResource"], Dict[str, "ProviderResource"]] = ()
    aliases: Sequence[Union[Alias, str]] = ()
    ignore_changes: Sequence[str] = ()
    replace_on_changes: Sequence[str] = ()
    delete_before_replace: Optional[bool] = None
    additional_secret_outputs: Sequence[str] = ()
    custom_timeouts: Optional[CustomTimeouts] = None
    import_: Optional[str] = None
    retain_on_delete: bool = False
    deleted_with: Optional["Resource"] = None
    version: Optional[str] = None


class output_property:
    """Declares a typed resource's output: `result = cairn.output_property("result")` makes
    `resource.result` the output of property `result`."""

    def __init__(self, key: str) -> None:
        self.key = key

    def __set_name__(self, owner, name) -> None:
        if not self.key:
            self.key = name

    def __get__(self, resource, owner=None):
        if resource is None:
            return self
        return resource.output(self.key)


class Resource:
    """A declared resource: its URN and outputs as outputs. `custom` resources are managed by
    a provider (and have an `id`); others are components, built here (`remote=False`) or by
    their provider's `construct` (`remote=True`). Declaring returns at once; the request goes to
    the engine when everything it refers to is known."""

    def __init__(
        self,
        type_: str,
        name: str,
        props: Optional[Dict[str, Any]] = None,
        opts: Optional[ResourceOptions] = None,
        *,
        custom: bool = True,
        remote: bool = False,
        _read_id: Any = None,
    ) -> None:
        if not isinstance(type_, str) or not type_:
            raise TypeError("a resource needs a type token (pkg:module:Type)")
        if not isinstance(name, str) or not name:
            raise TypeError("a resource needs a name")
        opts = opts or ResourceOptions()
        self.type_ = type_
        self.name = name
        self.custom = custom
        self.urn = Output()
        self.id = Output()
        self._outputs = Output()
        # Providers children inherit, by package: the parent's, overridden by this one's.
        providers: Dict[str, ProviderResource] = dict(opts.parent._providers) if opts.parent is not None else {}
        given = opts.providers
        if isinstance(given, dict):
            given = given.values()
        elif isinstance(given, Resource):
            given = [given]
        for p in given:
            providers[p.package] = p
        self._providers = providers
        _declare(self, props or {}, opts, remote, _read_id)

    def output(self, key: str) -> Output:
        """Output property `key` (secret or unknown when that property is; None when absent)."""
        return self._outputs.apply(lambda raw: raw.get(key) if isinstance(raw, dict) else None)

    @property
    def outputs(self) -> Output:
        """Every output property, as one output of a dict (secret if any property is, unknown
        if any is)."""
        return self._outputs.apply(lambda raw: raw)

    def _resolve_failed(self, message: str) -> None:
        for o in (self.urn, self.id, self._outputs):
            o._resolve(_FAILED, message)


class CustomResource(Resource):
    """A resource managed by its package's provider."""

    def __init__(self, type_: str, name: str, props: Optional[Dict[str, Any]] = None, opts: Optional[ResourceOptions] = None) -> None:
        super().__init__(type_, name, props, opts, custom=True)


class ComponentResource(Resource):
    """A component: declare its children with it as `parent`, then `register_outputs`. With
    `remote=True` its provider builds it (`construct`) from `props`."""

    def __init__(self, type_: str, name: str, props: Optional[Dict[str, Any]] = None, opts: Optional[ResourceOptions] = None, remote: bool = False) -> None:
        super().__init__(type_, name, props if remote else {}, opts, custom=False, remote=remote)

    def register_outputs(self, outputs: Dict[str, Any]) -> None:
        """Sets the component's outputs once they are known (secrets stay secret)."""
        keys = list(outputs)
        items = [_wire(outputs[k]) for k in keys] + [self.urn]

        def send(vs: List[Any]) -> None:
            *props, urn = vs
            try:
                monitor.register_resource_outputs(urn, values.encode(dict(zip(keys, props))))
            except Err as e:
                _current().fail(f"registering the outputs of {urn}: {e.value}")

        _when_known(items, send)


class ProviderResource(CustomResource):
    """An explicit provider of `package` (`pulumi:providers:<package>`), configured by
    `props`; give it to resources as `ResourceOptions(provider=...)` or to a component's
    children as `providers=[...]`."""

    def __init__(self, package: str, name: str, props: Optional[Dict[str, Any]] = None, opts: Optional[ResourceOptions] = None) -> None:
        self.package = package
        super().__init__(f"pulumi:providers:{package}", name, props, opts)

    def reference(self) -> Output:
        """`<urn>::<id>`, as the engine takes it (the unknown ID in a preview of a create)."""
        out = Output()

        def run(_: Output) -> None:
            urn, rid = self.urn, self.id
            if urn._state == _FAILED or rid._state == _FAILED:
                out._resolve(_FAILED, urn._value if urn._state == _FAILED else rid._value)
            elif urn._state != _KNOWN:
                out._resolve(_UNKNOWN)
            else:
                # An unknown ID (a provider this update creates) still makes a usable reference:
                # the engine resolves it once the provider exists.
                ident = rid._value if rid._state == _KNOWN and rid._value else UNKNOWN_ID
                out._resolve(_KNOWN, f"{urn._value}::{ident}", False, urn._deps)

        _join([self.urn, self.id], list)._on_settled(run)
        return out


def read(type_: str, name: str, id: Any, props: Optional[Dict[str, Any]] = None, opts: Optional[ResourceOptions] = None) -> Resource:
    """Reads an existing resource the stack does not manage (`get`), by ID (text or an output)."""
    return Resource(type_, name, props, opts, custom=True, _read_id=id)


class StackReference(Resource):
    """Another stack's outputs on the same backend (`<stack>` or `<project>/<stack>`)."""

    def __init__(self, stack: str, opts: Optional[ResourceOptions] = None) -> None:
        super().__init__("pulumi:pulumi:StackReference", stack, {"name": stack}, opts, custom=True, _read_id=stack)

    def get_output(self, name: str) -> Output:
        """Output `name` of the referenced stack (None when it has none; secret ones stay so)."""
        return self.output("outputs")[name]


def _when_known(items: List[Output], send: Callable[[List[Any]], None]) -> None:
    """Calls `send(values)` once every item is known; a failed or unknown item stops it (the
    failure is already recorded)."""

    def run(joined: Output) -> None:
        if joined._state == _KNOWN:
            send(joined._value)

    _join(items, list)._on_settled(run)


def _alias(a: Union[Alias, str], parent_urn: Optional[str]) -> Any:
    """The WIT alias: a string is a previous name; a parent resource gives its (known) URN."""
    if isinstance(a, str):
        return monitor.Alias(None, a, None, None, False, None, None)
    if isinstance(a.parent, str):
        parent_urn = a.parent
    return monitor.Alias(a.urn, a.name, a.type_, parent_urn, a.no_parent, a.stack, a.project)


def _declare(resource: Resource, props: Dict[str, Any], opts: ResourceOptions, remote: bool, read_id: Any) -> None:
    loop = _current()
    keys = list(props)
    inputs = [_wire(props[k]) for k in keys]
    package = resource.type_.split(":", 1)[0]
    if resource.type_.startswith("pulumi:providers:"):
        provider = None
    elif opts.provider is not None:
        provider = opts.provider
    else:
        provider = resource._providers.get(package)
    refs: Dict[str, Output] = {}
    if opts.parent is not None:
        refs["parent"] = opts.parent.urn
    if opts.deleted_with is not None:
        refs["deleted_with"] = opts.deleted_with.urn
    if provider is not None:
        refs["provider"] = provider.reference()
    if read_id is not None:
        refs["id"] = Output.from_input(read_id)
    depends_on = [opts.depends_on] if isinstance(opts.depends_on, Resource) else opts.depends_on
    depends = [d.urn for d in depends_on]
    providers = sorted(resource._providers.items()) if resource.custom is False else []
    provider_refs = [p.reference() for _, p in providers]
    alias_parents = [a.parent.urn for a in opts.aliases if isinstance(a, Alias) and isinstance(a.parent, Resource)]
    ref_keys = list(refs)
    items = inputs + [refs[k] for k in ref_keys] + depends + provider_refs + alias_parents
    what = f"{resource.type_} {resource.name}"
    dry_run = loop.deployment.dry_run

    def finish(outcome: Any) -> None:
        if isinstance(outcome, monitor.Outcome_State):
            s = outcome.value
            try:
                raw = values.decode(s.outputs)
            except values.MalformedValue as e:
                message = f"{what}: the host sent malformed outputs: {e}"
                loop.fail(message)
                resource._resolve_failed(message)
                return
            deps = frozenset([s.urn])
            resource.urn._resolve(_KNOWN, s.urn, False, deps)
            if s.id:
                resource.id._resolve(_KNOWN, s.id, False, deps)
            elif dry_run and resource.custom:
                resource.id._resolve(_UNKNOWN, None, False, deps)
            else:
                resource.id._resolve(_KNOWN, "", False, deps)
            resource._outputs._resolve(_KNOWN, raw if isinstance(raw, dict) else {}, False, deps)
            # Outputs are looked up lifted: `output(key)` applies to this raw dict, so their
            # markers are moved by `apply` (see `_lift`).
        elif isinstance(outcome, monitor.Outcome_Failed):
            message = outcome.value if what in outcome.value else f"{what}: {outcome.value}"
            loop.fail(message)
            resource._resolve_failed(message)
        else:
            message = f"{what}: the host answered with function outputs"
            loop.fail(message)
            resource._resolve_failed(message)

    def send(settled: Output) -> None:
        if settled._state == _FAILED:
            resource._resolve_failed(settled._value)
            return
        parts = [o for o in items]
        n = len(inputs)
        prop_values = [o._value for o in parts[:n]]
        ref_values = {k: parts[n + i]._value for i, k in enumerate(ref_keys)}
        at = n + len(ref_keys)
        depends_on = list(dict.fromkeys(o._value for o in parts[at : at + len(depends)] if o._state == _KNOWN))
        at += len(depends)
        provider_values = [(pkg, o._value) for (pkg, _), o in zip(providers, parts[at : at + len(providers)]) if o._state == _KNOWN]
        at += len(providers)
        parent_urns = {id(a): o._value for a, o in zip([a for a in opts.aliases if isinstance(a, Alias) and isinstance(a.parent, Resource)], parts[at:])}
        property_dependencies = [
            types.PropertyDependencies(k, sorted(o._deps)) for k, o in zip(keys, parts[:n]) if o._deps
        ]
        try:
            encoded = values.encode(dict(zip(keys, prop_values)))
        except TypeError as e:
            message = f"{what}: an input is not a property value: {e}"
            loop.fail(message)
            resource._resolve_failed(message)
            return

        def known(key: str) -> Optional[str]:
            o = refs.get(key)
            return ref_values[key] if o is not None and o._state == _KNOWN else None

        aliases = [_alias(a, parent_urns.get(id(a))) for a in opts.aliases]
        t = opts.custom_timeouts
        if "id" in refs:
            rid = known("id")
            if not rid:
                finish(monitor.Outcome_Failed("the ID to read is not known"))
                return
            handle = monitor.read_resource(
                monitor.ReadResourceRequest(
                    resource.type_, resource.name, rid, known("parent"), encoded, depends_on,
                    known("provider"), opts.version, list(opts.additional_secret_outputs),
                )
            )
        else:
            options = monitor.ResourceOptions(
                known("parent"), depends_on, bool(opts.protect), bool(opts.retain_on_delete),
                known("deleted_with"), known("provider"), provider_values, aliases,
                list(opts.ignore_changes), list(opts.replace_on_changes), opts.delete_before_replace,
                list(opts.additional_secret_outputs),
                None if t is None else monitor.CustomTimeouts(float(t.create), float(t.update), float(t.delete)),
                opts.import_, opts.version,
            )
            handle = monitor.register_resource(
                monitor.RegisterResourceRequest(
                    resource.type_, resource.name, resource.custom, remote, encoded, property_dependencies, options,
                )
            )
        loop.on_complete(handle, finish)

    # The request waits for its inputs and references; a failed one fails the resource (its
    # error is already recorded), an unknown reference is left out (a preview).
    joined = Output()
    left = [len(items)]

    def settle(_: Output) -> None:
        left[0] -= 1
        if left[0] == 0:
            failed = next((o for o in items if o._state == _FAILED), None)
            joined._resolve(_FAILED, failed._value) if failed is not None else joined._resolve(_KNOWN)

    if not items:
        joined._resolve(_KNOWN)
    for o in items:
        o._on_settled(settle)
    joined._on_settled(send)


def invoke(token: str, args: Optional[Dict[str, Any]] = None, provider: Optional[ProviderResource] = None, version: Optional[str] = None) -> Output:
    """Calls a provider function once `args` are known: an output of its result (a dict).
    Unknown arguments (a preview) give an unknown result without calling the provider."""
    loop = _current()
    args = args or {}
    keys = list(args)
    items = [_wire(args[k]) for k in keys]
    if provider is not None:
        items.append(provider.reference())
    out = Output()

    def send(joined: Output) -> None:
        deps = frozenset().union(*(o._deps for o in items)) if items else frozenset()
        if joined._state == _FAILED:
            out._resolve(_FAILED, joined._value, False, deps)
            return
        vs = [o._value for o in items]
        ref = vs.pop() if provider is not None else None
        plain = dict(zip(keys, vs))
        if values.contains_unknowns(plain) or (provider is not None and items[-1]._state != _KNOWN):
            out._resolve(_UNKNOWN, None, False, deps)
            return
        secret = any(isinstance(v, Secret) for v in vs)
        handle = monitor.invoke(monitor.InvokeRequest(token, values.encode(plain), ref, version))

        def finish(outcome: Any) -> None:
            if isinstance(outcome, monitor.Outcome_Outputs):
                try:
                    result = values.decode(outcome.value.outputs)
                except values.MalformedValue as e:
                    result, outcome = None, monitor.Outcome_Failed(f"the host sent malformed outputs: {e}")
                else:
                    state, value, inner_secret = _lift(result if isinstance(result, dict) else {})
                    out._resolve(state, value, secret or inner_secret, deps)
                    return
            message = f"invoking {token}: {outcome.value if isinstance(outcome, monitor.Outcome_Failed) else 'the host answered with a resource'}"
            loop.fail(message)
            out._resolve(_FAILED, message, False, deps)

        loop.on_complete(handle, finish)

    joined = _join(items, list) if items else Output._settled(_KNOWN, [])
    joined._on_settled(send)
    return out


# --- Running a program -----------------------------------------------------------------------


def run(main: Callable[..., Any]) -> None:
    """Runs a program: `main(ctx)`, the event loop until nothing is outstanding, then the
    stack outputs. Raises `Err(message)` (the WIT's error) when anything failed."""
    global _loop
    _loop = loop = _Loop()
    try:
        try:
            main(Context())
        except Exception as e:
            loop.fail(_describe(e))
        loop.drain()
        if loop.exports:
            keys = list(loop.exports)
            items = [_wire(loop.exports[k]) for k in keys]

            def send(joined: Output) -> None:
                if joined._state != _KNOWN:
                    failed = next((k for k, o in zip(keys, items) if o._state == _FAILED), "?")
                    loop.fail(f"stack output {failed}: {joined._value}")
                    return
                try:
                    monitor.register_resource_outputs(loop.deployment.root_urn, values.encode(dict(zip(keys, joined._value))))
                except Err as e:
                    loop.fail(f"setting the stack outputs: {e.value}")
                except TypeError as e:
                    loop.fail(f"a stack output is not a property value: {e}")

            _join(items, list)._on_settled(send)
            loop.drain()
        if loop.error is not None:
            raise Err(loop.error)
    finally:
        _loop = None


def _describe(e: Exception) -> str:
    if isinstance(e, ConfigError):
        return str(e)
    return f"{type(e).__name__}: {e}"


def export_program(main: Callable[["Context"], Any]) -> type:
    """The class to assign to `WitWorld` in the program's `app.py`: its `run` (the component's
    export) runs `main(ctx)` with this SDK's event loop."""

    class WitWorld:
        def run(self) -> None:
            run(main)

    return WitWorld
