"""Cairn's guest SDK for Python: sandboxed providers as WebAssembly components, built with
componentize-py (`python -m cairn_sdk.build`). The same concepts as the Rust SDK (`cairn-sdk`):
a provider's resource types implement check / diff / create / read / update / delete on plain
property values, and ordinary failures are the WIT's errors, never traps."""

try:
    from .provider import CheckFailure, Diff, Provider, ProviderError, Resource, export, log
    from .values import UNKNOWN, Archive, Asset, OutputValue, ResourceReference, Secret, unsecret
except ModuleNotFoundError as e:
    # Outside a component build (e.g. `python -m cairn_sdk.build`) there are no WIT bindings.
    if e.name not in ("wit_world", "componentize_py_types") and not (e.name or "").startswith("wit_world."):
        raise

__all__ = [
    "Archive",
    "Asset",
    "CheckFailure",
    "Diff",
    "OutputValue",
    "Provider",
    "ProviderError",
    "Resource",
    "ResourceReference",
    "Secret",
    "UNKNOWN",
    "export",
    "log",
    "unsecret",
]
