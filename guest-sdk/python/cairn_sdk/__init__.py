"""Cairn's guest SDK for Python: sandboxed providers and programs as WebAssembly components,
built with componentize-py (`python -m cairn_sdk.build`). The same concepts as the Rust SDK
(`cairn-sdk`): a provider's resource types implement check / diff / create / read / update /
delete on plain property values, and ordinary failures are the WIT's errors, never traps.
Programs use `cairn_sdk.program` (`import cairn_sdk.program as cairn`).

The names below are the provider side's; they exist in a provider build (world
`provider-world`). A program build has the program world's bindings instead, so there only
the values are here, and `cairn_sdk.program` has the rest."""

try:
    from .values import UNKNOWN, Archive, Asset, OutputValue, ResourceReference, Secret, unsecret
except ModuleNotFoundError as e:
    # Outside a component build (e.g. `python -m cairn_sdk.build`) there are no WIT bindings.
    if e.name not in ("wit_world", "componentize_py_types") and not (e.name or "").startswith("wit_world."):
        raise
else:
    try:
        from .provider import (
            CallRequest,
            CallResult,
            CheckFailure,
            ConstructRequest,
            ConstructResult,
            Diff,
            PropertyDiff,
            Provider,
            ProviderError,
            Resource,
            export,
            log,
        )
        from . import engine  # imported here so that every provider's build bundles it
    except ImportError as e:
        # A program's bindings have no `provider` export nor `engine` import.
        if "wit_world" not in str(e) and "exports" not in str(e):
            raise

__all__ = [
    "Archive",
    "Asset",
    "CallRequest",
    "CallResult",
    "CheckFailure",
    "ConstructRequest",
    "ConstructResult",
    "Diff",
    "OutputValue",
    "PropertyDiff",
    "Provider",
    "ProviderError",
    "Resource",
    "ResourceReference",
    "Secret",
    "UNKNOWN",
    "engine",
    "export",
    "log",
    "unsecret",
]
