"""Property values: the WIT `value` node table (see wit/provider.wit) to and from Python.

Plain values become Python's own: None, bool, float (every number is an IEEE-754 double; an int
you return is sent as one), str, list, dict. The rest have classes of their own: `Secret`,
`UNKNOWN` (a value not known during a preview), `Asset`, `Archive`, `ResourceReference` and
`OutputValue`.
"""

import struct
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from wit_world.imports import types

NULL, BOOL, NUMBER, TEXT, ARRAY, OBJECT, SECRET, UNKNOWN_KIND, ASSET, ARCHIVE, REFERENCE, OUTPUT = range(12)


class MalformedValue(ValueError):
    """A value table that breaks the WIT's rules."""


@dataclass(frozen=True)
class Secret:
    """A value to keep secret: never shown, encrypted in the state."""

    value: Any


class _Unknown:
    """A value not known yet (during a preview)."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()


@dataclass
class Asset:
    """A blob: its text, a path or a URI (or only its hash), and its SHA-256 when known."""

    text: Optional[str] = None
    path: Optional[str] = None
    uri: Optional[str] = None
    hash: Optional[str] = None


@dataclass
class Archive:
    """A collection of assets (by name), a path or a URI (or only its hash)."""

    assets: Optional[Dict[str, Any]] = None
    path: Optional[str] = None
    uri: Optional[str] = None
    hash: Optional[str] = None


@dataclass
class ResourceReference:
    urn: str
    id: Any = None
    package_version: Optional[str] = None


@dataclass
class OutputValue:
    value: Any = UNKNOWN
    secret: bool = False
    dependencies: List[str] = field(default_factory=list)


def decode(value: types.Value) -> Any:
    """The Python value of a WIT value (None for an empty one)."""
    nodes, strings, extras = value.nodes, value.strings, value.extras
    if not nodes:
        return None
    if len(nodes) % 5:
        raise MalformedValue("the node table's length is not a multiple of 5")
    count = len(nodes) // 5

    def text(offset: int, length: int) -> str:
        if offset + length > len(strings):
            raise MalformedValue("a string span lies outside the strings")
        try:
            return bytes(strings[offset : offset + length]).decode("utf-8")
        except UnicodeDecodeError as e:
            raise MalformedValue(f"a string is not UTF-8: {e}") from None

    def node(i: int, depth: int = 0) -> Any:
        if i >= count:
            raise MalformedValue(f"node {i} does not exist")
        if depth > 128:
            raise MalformedValue("the value nests deeper than 128 levels")
        kind, a, b = nodes[5 * i], nodes[5 * i + 1], nodes[5 * i + 2]
        if kind == NULL:
            return None
        if kind == BOOL:
            return a == 1
        if kind == NUMBER:
            return struct.unpack("<d", struct.pack("<II", a, b))[0]
        if kind == TEXT:
            return text(a, b)
        if kind == ARRAY:
            if a + b > count or (b and a <= i):
                raise MalformedValue("an array's elements lie outside the table")
            return [node(a + k, depth + 1) for k in range(b)]
        if kind == OBJECT:
            if a + b > count or (b and a <= i):
                raise MalformedValue("an object's members lie outside the table")
            out = {}
            for k in range(b):
                m = a + k
                out[text(nodes[5 * m + 3], nodes[5 * m + 4])] = node(m, depth + 1)
            return out
        if kind == SECRET:
            return Secret(node(a, depth + 1))
        if kind == UNKNOWN_KIND:
            return UNKNOWN
        if kind in (ASSET, ARCHIVE, REFERENCE, OUTPUT):
            if a >= len(extras):
                raise MalformedValue(f"extra {a} does not exist")
            return extra(extras[a], depth)
        raise MalformedValue(f"node {i} has unknown kind {kind}")

    def extra(x: types.Extra, depth: int) -> Any:
        if isinstance(x, types.Extra_Asset):
            return asset(x.value)
        if isinstance(x, types.Extra_Archive):
            s = x.value.source
            if isinstance(s, types.ArchiveSource_Assets):
                return Archive(assets={name: node(n, depth + 1) for name, n in s.value}, hash=x.value.hash)
            if isinstance(s, types.ArchiveSource_Path):
                return Archive(path=s.value, hash=x.value.hash)
            if isinstance(s, types.ArchiveSource_Uri):
                return Archive(uri=s.value, hash=x.value.hash)
            return Archive(hash=x.value.hash)
        if isinstance(x, types.Extra_ResourceReference):
            r = x.value
            return ResourceReference(r.urn, None if r.id is None else node(r.id, depth + 1), r.package_version)
        o = x.value
        return OutputValue(UNKNOWN if o.value is None else node(o.value, depth + 1), o.secret, list(o.dependencies))

    def asset(a: types.Asset) -> Asset:
        s = a.source
        if isinstance(s, types.AssetSource_Text):
            return Asset(text=s.value, hash=a.hash)
        if isinstance(s, types.AssetSource_Path):
            return Asset(path=s.value, hash=a.hash)
        if isinstance(s, types.AssetSource_Uri):
            return Asset(uri=s.value, hash=a.hash)
        return Asset(hash=a.hash)

    return node(0)


def encode(x: Any) -> types.Value:
    """The WIT value of a Python value: None, bool, int, float, str, list/tuple, dict with str
    keys, and the classes of this module."""
    nodes: List[int] = [0] * 5
    strings = bytearray()
    extras: List[types.Extra] = []
    queue = [(0, x, None)]

    def span(s: str):
        b = s.encode("utf-8")
        offset = len(strings)
        strings.extend(b)
        return offset, len(b)

    def allocate(n: int) -> int:
        first = len(nodes) // 5
        nodes.extend([0] * (5 * n))
        return first

    def extra_node(e: types.Extra) -> int:
        extras.append(e)
        return len(extras) - 1

    while queue:
        i, v, key = queue.pop()
        a = b = 0
        if v is None:
            kind = NULL
        elif isinstance(v, bool):
            kind, a = BOOL, int(v)
        elif isinstance(v, (int, float)):
            kind = NUMBER
            a, b = struct.unpack("<II", struct.pack("<d", float(v)))
        elif isinstance(v, str):
            kind = TEXT
            a, b = span(v)
        elif isinstance(v, (list, tuple)):
            kind, b = ARRAY, len(v)
            a = allocate(b) if b else 0
            queue.extend((a + k, item, None) for k, item in enumerate(v))
        elif isinstance(v, dict):
            kind, b = OBJECT, len(v)
            a = allocate(b) if b else 0
            for k, (name, item) in enumerate(v.items()):
                if not isinstance(name, str):
                    raise TypeError(f"object keys must be strings, not {type(name).__name__}")
                queue.append((a + k, item, name))
        elif isinstance(v, Secret):
            kind = SECRET
            a = allocate(1)
            queue.append((a, v.value, None))
        elif v is UNKNOWN:
            kind = UNKNOWN_KIND
        elif isinstance(v, Asset):
            kind = ASSET
            a = extra_node(types.Extra_Asset(types.Asset(v.hash, _asset_source(v))))
        elif isinstance(v, Archive):
            kind = ARCHIVE
            if v.assets is not None:
                first = allocate(len(v.assets))
                members = []
                for k, (name, item) in enumerate(v.assets.items()):
                    queue.append((first + k, item, None))
                    members.append((name, first + k))
                source = types.ArchiveSource_Assets(members)
            elif v.path is not None:
                source = types.ArchiveSource_Path(v.path)
            elif v.uri is not None:
                source = types.ArchiveSource_Uri(v.uri)
            else:
                source = types.ArchiveSource_HashOnly()
            a = extra_node(types.Extra_Archive(types.Archive(v.hash, source)))
        elif isinstance(v, ResourceReference):
            kind = REFERENCE
            id_node = None
            if v.id is not None:
                id_node = allocate(1)
                queue.append((id_node, v.id, None))
            a = extra_node(types.Extra_ResourceReference(types.ResourceReference(v.urn, id_node, v.package_version)))
        elif isinstance(v, OutputValue):
            kind = OUTPUT
            value_node = None
            if v.value is not UNKNOWN:
                value_node = allocate(1)
                queue.append((value_node, v.value, None))
            a = extra_node(types.Extra_Output(types.OutputValue(value_node, v.secret, list(v.dependencies))))
        else:
            raise TypeError(f"{type(v).__name__} is not a property value")
        key_offset, key_length = span(key) if key is not None else (0, 0)
        nodes[5 * i : 5 * i + 5] = [kind, a, b, key_offset, key_length]
    return types.Value(nodes, bytes(strings), extras)


def _asset_source(v: Asset) -> types.AssetSource:
    if v.text is not None:
        return types.AssetSource_Text(v.text)
    if v.path is not None:
        return types.AssetSource_Path(v.path)
    if v.uri is not None:
        return types.AssetSource_Uri(v.uri)
    return types.AssetSource_HashOnly()


def unsecret(x: Any) -> Any:
    """`x` with every `Secret` replaced by what it protects (for computing with inputs)."""
    if isinstance(x, Secret):
        return unsecret(x.value)
    if isinstance(x, list):
        return [unsecret(v) for v in x]
    if isinstance(x, dict):
        return {k: unsecret(v) for k, v in x.items()}
    return x
