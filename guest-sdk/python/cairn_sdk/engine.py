"""The engine's resource monitor (the WIT `engine` interface), for a provider's `construct`
and `call`: `register_resource` registers the component itself, then its children (with the
component's URN as their parent), and `register_resource_outputs` sets the component's
outputs. As the Rust SDK's `cairn_sdk::engine`.

A failure is an `EngineError` (a `ProviderError`), never a trap: raised out of `construct` or
`call` it fails that call with its message, naming what was being registered. What the engine
answers is checked before it is returned. Outside a component (native unit tests) there is no
engine: every function raises `EngineError`.
"""

from dataclasses import dataclass, field
from typing import Dict, List, Optional

from componentize_py_types import Err
from wit_world.imports import engine as _wit

from . import values
from .provider import Dependencies, ProviderError, _dependencies_to_wit

# What a native run (the bindings' stand-in bodies raise NotImplementedError) reports.
NO_ENGINE = "the engine is only reachable from inside a component"


class EngineError(ProviderError):
    """The engine refused or failed a request: `operation` says what was asked (`registering
    random:index/randomString:RandomString "db-password"`), `reason` the engine's answer."""

    def __init__(self, operation: str, reason: str):
        super().__init__(f"{operation}: {reason}")
        self.operation = operation
        self.reason = reason


@dataclass
class RegisterResource:
    """A resource to register: the component itself (`custom=False`), or one of its children
    (`parent` = the component's URN). `provider` is a provider reference (`<urn>::<id>`), e.g.
    `request.providers.get(package)` of the `ConstructRequest`."""

    resource_type: str
    name: str
    custom: bool = False
    parent: Optional[str] = None
    inputs: dict = field(default_factory=dict)
    property_dependencies: Dependencies = field(default_factory=dict)
    dependencies: List[str] = field(default_factory=list)
    provider: Optional[str] = None
    protect: bool = False


@dataclass
class Registered:
    """A registered resource, after its steps have run: its URN, its ID (custom resources
    outside a preview) and its outputs (unknown where a preview cannot tell)."""

    urn: str
    id: Optional[str] = None
    outputs: Dict[str, object] = field(default_factory=dict)


def register_resource(request: RegisterResource) -> Registered:
    """Registers a resource; returns when its steps have run."""
    operation = f'registering {request.resource_type} "{request.name}"'
    wit_request = _wit.RegisterResourceRequest(
        request.resource_type,
        request.name,
        request.custom,
        request.parent,
        values.encode(request.inputs),
        _dependencies_to_wit(request.property_dependencies),
        list(request.dependencies),
        request.provider,
        request.protect,
    )
    try:
        response = _wit.register_resource(wit_request)
    except Err as e:
        raise EngineError(operation, str(e.value)) from None
    except NotImplementedError:
        raise EngineError(operation, NO_ENGINE) from None
    return _registered(operation, response)


def _registered(operation: str, response: "_wit.RegisterResourceResponse") -> Registered:
    """The engine's answer checked (a URN, outputs that are a well-formed object) and decoded."""
    if not _is_urn(response.urn):
        raise EngineError(operation, f"the engine answered with {response.urn!r}, which is not a URN")
    try:
        outputs = values.decode(response.outputs)
    except values.MalformedValue as e:
        raise EngineError(operation, f"the engine sent malformed outputs: {e}") from None
    if outputs is None:
        outputs = {}
    if not isinstance(outputs, dict):
        raise EngineError(operation, f"the engine sent outputs that are not an object ({type(outputs).__name__})")
    return Registered(response.urn, response.id, outputs)


def register_resource_outputs(urn: str, outputs: dict) -> None:
    """Sets a component's outputs (the registration of `urn` is complete then)."""
    operation = f"registering the outputs of {urn}"
    try:
        _wit.register_resource_outputs(urn, values.encode(outputs))
    except Err as e:
        raise EngineError(operation, str(e.value)) from None
    except NotImplementedError:
        raise EngineError(operation, NO_ENGINE) from None


def _is_urn(urn) -> bool:
    # urn:pulumi:<stack>::<project>::<qualified type>::<name>
    return isinstance(urn, str) and urn.startswith("urn:pulumi:") and urn[len("urn:pulumi:"):].count("::") >= 3
