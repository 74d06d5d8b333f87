"""Property values: the WIT `value` node table (see wit/provider.wit) to and from Python.

Plain values become Python's own: None, bool, float (every number is an IEEE-754 double; an int
you return is sent as one), str, list, dict. The rest have classes of their own: `Secret`,
`UNKNOWN` (a value not known during a preview), `Asset`, `Archive`, `ResourceReference` and
`OutputValue`.

Every call of a component decodes its request and encodes its result, so the codec is written
for speed: one pass over the table each way, method lookups bound to locals, and precompiled
`struct` formats for the numbers. (Plain Python is the floor: componentize-py itself turns each
word of the table into a Python int on the way in and back on the way out.)
"""

import struct
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from wit_world.imports import types

NULL, BOOL, NUMBER, TEXT, ARRAY, OBJECT, SECRET, UNKNOWN_KIND, ASSET, ARCHIVE, REFERENCE, OUTPUT = range(12)

# How deep a value may nest (the host refuses deeper ones too); deeper tables are malformed.
MAX_DEPTH = 128

_WORDS = struct.Struct("<II")
_DOUBLE = struct.Struct("<d")


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

    def __reduce__(self):
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


def decode(value: "types.Value") -> Any:
    """The Python value of a WIT value (None for an empty one). Raises `MalformedValue` for a
    table that breaks the WIT's rules."""
    nodes, strings, extras = value.nodes, value.strings, value.extras
    if not nodes:
        return None
    total = len(nodes)
    if total % 5:
        raise MalformedValue("the node table's length is not a multiple of 5")
    flat = _decode_flat(nodes, strings, total)
    if flat is not None:
        return flat
    count = total // 5
    size = len(strings)
    unpack_double = _DOUBLE.unpack
    pack_words = _WORDS.pack

    def text(offset: int, length: int) -> str:
        end = offset + length
        if end > size:
            raise MalformedValue("a string span lies outside the strings")
        try:
            return strings[offset:end].decode()
        except UnicodeDecodeError as e:
            raise MalformedValue(f"a string is not UTF-8: {e}") from None

    def node(i: int, depth: int) -> Any:
        base = 5 * i
        kind = nodes[base]
        if kind == TEXT:
            return text(nodes[base + 1], nodes[base + 2])
        if kind == NUMBER:
            return unpack_double(pack_words(nodes[base + 1], nodes[base + 2]))[0]
        if kind == OBJECT or kind == ARRAY:
            first, n = nodes[base + 1], nodes[base + 2]
            if not n:
                return {} if kind == OBJECT else []
            if first <= i or first + n > count:
                raise MalformedValue(f"node {i}'s members lie outside the table")
            if depth >= MAX_DEPTH:
                raise MalformedValue(f"the value nests deeper than {MAX_DEPTH} levels")
            depth += 1
            items = []
            append = items.append
            for k in range(first, first + n):
                # Scalars inline (most members are): a call per member is most of the cost.
                at = 5 * k
                member = nodes[at]
                if member == TEXT:
                    item = text(nodes[at + 1], nodes[at + 2])
                elif member == NUMBER:
                    item = unpack_double(pack_words(nodes[at + 1], nodes[at + 2]))[0]
                elif member == BOOL:
                    item = nodes[at + 1] == 1
                elif member == NULL:
                    item = None
                else:
                    item = node(k, depth)
                append(item)
            if kind == ARRAY:
                return items
            out = {text(nodes[5 * k + 3], nodes[5 * k + 4]): item for k, item in zip(range(first, first + n), items)}
            if len(out) != n:
                raise MalformedValue(f"node {i} has duplicate keys")
            return out
        if kind == BOOL:
            return nodes[base + 1] == 1
        if kind == NULL:
            return None
        if kind == SECRET:
            inner = nodes[base + 1]
            if inner <= i or inner >= count:
                raise MalformedValue(f"node {i} protects a node outside the table")
            return Secret(node(inner, depth + 1))
        if kind == UNKNOWN_KIND:
            return UNKNOWN
        if ASSET <= kind <= OUTPUT:
            a = nodes[base + 1]
            if a >= len(extras):
                raise MalformedValue(f"extra {a} does not exist")
            return extra(extras[a], i, depth + 1)
        raise MalformedValue(f"node {i} has unknown kind {kind}")

    def child(n: int, parent: int, depth: int) -> Any:
        if n <= parent or n >= count:
            raise MalformedValue(f"node {parent} refers to a node outside the table")
        if depth >= MAX_DEPTH:
            raise MalformedValue(f"the value nests deeper than {MAX_DEPTH} levels")
        return node(n, depth)

    def extra(x: "types.Extra", i: int, depth: int) -> Any:
        if isinstance(x, types.Extra_Asset):
            return asset(x.value)
        if isinstance(x, types.Extra_Archive):
            s = x.value.source
            if isinstance(s, types.ArchiveSource_Assets):
                return Archive(assets={name: child(n, i, depth) for name, n in s.value}, hash=x.value.hash)
            if isinstance(s, types.ArchiveSource_Path):
                return Archive(path=s.value, hash=x.value.hash)
            if isinstance(s, types.ArchiveSource_Uri):
                return Archive(uri=s.value, hash=x.value.hash)
            return Archive(hash=x.value.hash)
        if isinstance(x, types.Extra_ResourceReference):
            r = x.value
            return ResourceReference(r.urn, None if r.id is None else child(r.id, i, depth), r.package_version)
        o = x.value
        inner = UNKNOWN if o.value is None else child(o.value, i, depth)
        return OutputValue(inner, o.secret, list(o.dependencies))

    def asset(a: "types.Asset") -> Asset:
        s = a.source
        if isinstance(s, types.AssetSource_Text):
            return Asset(text=s.value, hash=a.hash)
        if isinstance(s, types.AssetSource_Path):
            return Asset(path=s.value, hash=a.hash)
        if isinstance(s, types.AssetSource_Uri):
            return Asset(uri=s.value, hash=a.hash)
        return Asset(hash=a.hash)

    return node(0, 0)


def _decode_flat(nodes: List[int], strings: bytes, total: int) -> Optional[dict]:
    """An object of strings, numbers, bools and nulls (the usual inputs and outputs) in one
    loop, laid out as `encode` lays it out (members from node 1 on); None for anything else
    (the general decoder then checks it)."""
    if nodes[0] != OBJECT or nodes[1] != 1 or 5 * (nodes[2] + 1) != total:
        return None
    size = len(strings)
    unpack_double = _DOUBLE.unpack
    pack_words = _WORDS.pack
    out = {}
    try:
        for at in range(5, total, 5):
            kind, a, b, ko, kl = nodes[at : at + 5]
            if ko + kl > size:
                return None
            if kind == TEXT:
                if a + b > size:
                    return None
                value = strings[a : a + b].decode()
            elif kind == NUMBER:
                value = unpack_double(pack_words(a, b))[0]
            elif kind == BOOL:
                value = a == 1
            elif kind == NULL:
                value = None
            else:
                return None
            out[strings[ko : ko + kl].decode()] = value
    except (UnicodeDecodeError, struct.error):
        return None
    return out if len(out) == total // 5 - 1 else None


def encode(x: Any) -> "types.Value":
    """The WIT value of a Python value: None, bool, int, float, str, list/tuple, dict with str
    keys, and the classes of this module. Raises `TypeError` for anything else."""
    # Nodes are laid out breadth-first: a container's members get consecutive slots when it is
    # reached, and are filled in when they are taken from the queue, so every index points to a
    # later node and each node is referred to once. Strings are appended to one buffer.
    if type(x) is dict:
        flat = _encode_flat(x)
        if flat is not None:
            return flat
    nodes: List[int] = [0, 0, 0, 0, 0]
    parts: List[bytes] = []
    offset = 0
    extras: List[Any] = []
    queue = [(0, x, None)]
    pop, push = queue.pop, queue.append
    unpack_words = _WORDS.unpack
    pack_double = _DOUBLE.pack
    spans: Dict[str, tuple] = {}

    def span(s: str) -> tuple:
        # Repeated keys and texts (a list of objects with the same keys) share one span.
        nonlocal offset
        found = spans.get(s)
        if found is None:
            b = s.encode()
            found = (offset, len(b))
            parts.append(b)
            offset += len(b)
            spans[s] = found
        return found

    while queue:
        i, v, key = pop()
        base = 5 * i
        t = type(v)
        if t is str:
            kind = TEXT
            a, b = span(v)
        elif t is float or (t is int):
            kind = NUMBER
            a, b = unpack_words(pack_double(v))
        elif t is dict:
            kind, b = OBJECT, len(v)
            a = len(nodes) // 5 if b else 0
            if b:
                nodes.extend([0] * (5 * b))
                k = a
                for name, item in v.items():
                    if type(name) is not str:
                        raise TypeError(f"object keys must be strings, not {type(name).__name__}")
                    push((k, item, name))
                    k += 1
        elif t is list or t is tuple:
            kind, b = ARRAY, len(v)
            a = len(nodes) // 5 if b else 0
            if b:
                nodes.extend([0] * (5 * b))
                k = a
                for item in v:
                    push((k, item, None))
                    k += 1
        elif v is None:
            kind, a, b = NULL, 0, 0
        elif t is bool:
            kind, a, b = BOOL, int(v), 0
        elif v is UNKNOWN:
            kind, a, b = UNKNOWN_KIND, 0, 0
        elif t is Secret:
            kind, b = SECRET, 0
            a = len(nodes) // 5
            nodes.extend((0, 0, 0, 0, 0))
            push((a, v.value, None))
        else:
            kind, a, b = _rich(v, nodes, extras, push)
        if key is None:
            nodes[base] = kind
            nodes[base + 1] = a
            nodes[base + 2] = b
        else:
            ko, kl = span(key)
            nodes[base : base + 5] = (kind, a, b, ko, kl)
    # componentize-py 0.25 leaks a small allocation for every empty list it returns to the host
    # (see build.py), and `strings` is the one list a value may leave empty; spans may leave
    # bytes unused, so one spare byte costs nothing.
    strings = b"".join(parts) or b"\0"
    return types.Value(nodes, strings, extras)


def _encode_flat(x: dict) -> Optional["types.Value"]:
    """A dict of strings, numbers, bools and nulls (the usual inputs and outputs) in one loop;
    None for anything else."""
    nodes = [OBJECT, 1, len(x), 0, 0]
    parts: List[bytes] = []
    offset = 0
    unpack_words = _WORDS.unpack
    pack_double = _DOUBLE.pack
    for key, v in x.items():
        if type(key) is not str:
            return None
        k = key.encode()
        parts.append(k)
        key_offset = offset
        offset += len(k)
        t = type(v)
        if t is str:
            b = v.encode()
            parts.append(b)
            nodes += (TEXT, offset, len(b), key_offset, len(k))
            offset += len(b)
        elif t is float or t is int:
            a, b = unpack_words(pack_double(v))
            nodes += (NUMBER, a, b, key_offset, len(k))
        elif t is bool:
            nodes += (BOOL, int(v), 0, key_offset, len(k))
        elif v is None:
            nodes += (NULL, 0, 0, key_offset, len(k))
        else:
            return None
    if not x:
        nodes[1] = 0
    return types.Value(nodes, b"".join(parts) or b"\0", [])


def _rich(v: Any, nodes: List[int], extras: List[Any], push) -> tuple:
    """Encodes the kinds with extras (and numbers of other numeric types): (kind, a, b)."""
    if isinstance(v, bool):
        return BOOL, int(v), 0
    if isinstance(v, (int, float)):
        a, b = _WORDS.unpack(_DOUBLE.pack(float(v)))
        return NUMBER, a, b
    if isinstance(v, Secret):
        a = len(nodes) // 5
        nodes.extend((0, 0, 0, 0, 0))
        push((a, v.value, None))
        return SECRET, a, 0
    if isinstance(v, Asset):
        extras.append(types.Extra_Asset(types.Asset(v.hash, _asset_source(v))))
        return ASSET, len(extras) - 1, 0
    if isinstance(v, Archive):
        if v.assets is not None:
            first = len(nodes) // 5
            nodes.extend([0] * (5 * len(v.assets)))
            members = []
            for k, (name, item) in enumerate(v.assets.items()):
                push((first + k, item, None))
                members.append((name, first + k))
            source = types.ArchiveSource_Assets(members)
        elif v.path is not None:
            source = types.ArchiveSource_Path(v.path)
        elif v.uri is not None:
            source = types.ArchiveSource_Uri(v.uri)
        else:
            source = types.ArchiveSource_HashOnly()
        extras.append(types.Extra_Archive(types.Archive(v.hash, source)))
        return ARCHIVE, len(extras) - 1, 0
    if isinstance(v, ResourceReference):
        id_node = None
        if v.id is not None:
            id_node = len(nodes) // 5
            nodes.extend((0, 0, 0, 0, 0))
            push((id_node, v.id, None))
        extras.append(types.Extra_ResourceReference(types.ResourceReference(v.urn, id_node, v.package_version)))
        return REFERENCE, len(extras) - 1, 0
    if isinstance(v, OutputValue):
        value_node = None
        if v.value is not UNKNOWN:
            value_node = len(nodes) // 5
            nodes.extend((0, 0, 0, 0, 0))
            push((value_node, v.value, None))
        extras.append(types.Extra_Output(types.OutputValue(value_node, v.secret, list(v.dependencies))))
        return OUTPUT, len(extras) - 1, 0
    if isinstance(v, dict) or isinstance(v, (list, tuple)) or isinstance(v, str):
        raise TypeError(f"{type(v).__name__} (a subclass) is not a property value: convert it to dict, list or str")
    raise TypeError(f"{type(v).__name__} is not a property value")


def _asset_source(v: Asset) -> "types.AssetSource":
    if v.text is not None:
        return types.AssetSource_Text(v.text)
    if v.path is not None:
        return types.AssetSource_Path(v.path)
    if v.uri is not None:
        return types.AssetSource_Uri(v.uri)
    return types.AssetSource_HashOnly()


def same_table(a: "types.Value", b: "types.Value") -> bool:
    """Whether two tables are the same plain value without decoding them: identical node
    words and strings, no extras (their payloads need a real comparison) and no unknowns (an
    unknown never equals anything). False means "compare the decoded values"."""
    if a.extras or b.extras or a.nodes != b.nodes:
        return False
    nodes = a.nodes
    if UNKNOWN_KIND in nodes[0::5]:
        return False
    return a.strings == b.strings


_SCALARS = (str, float, int, bool, type(None))


def is_flat(x: Any) -> bool:
    """Whether `x` is a dict of strings, numbers, bools and nulls only (so a shallow copy of
    it is a full one)."""
    return type(x) is dict and all(type(v) in _SCALARS for v in x.values())


def same_flat(a: dict, b: dict) -> bool:
    """Whether two flat dicts (see `is_flat`) are the same value, key order and types included
    (so the table of one encodes the other: `True == 1.0` in Python, not on the wire)."""
    if len(a) != len(b):
        return False
    for (ka, va), (kb, vb) in zip(a.items(), b.items()):
        if ka != kb or type(va) is not type(vb) or va != vb:
            return False
    return True


def unsecret(x: Any) -> Any:
    """`x` with every `Secret` replaced by what it protects (for computing with inputs)."""
    t = type(x)
    if t is Secret:
        return unsecret(x.value)
    if t is list:
        return [unsecret(v) for v in x]
    if t is dict:
        return {k: unsecret(v) for k, v in x.items()}
    if t is OutputValue:
        return OutputValue(unsecret(x.value), False, list(x.dependencies))
    return x


def contains_unknowns(x: Any) -> bool:
    """Whether `x` holds `UNKNOWN` anywhere (an output value without a value counts)."""
    if x is UNKNOWN:
        return True
    t = type(x)
    if t is list:
        return any(contains_unknowns(v) for v in x)
    if t is dict:
        return any(contains_unknowns(v) for v in x.values())
    if t is Secret:
        return contains_unknowns(x.value)
    if t is OutputValue:
        return contains_unknowns(x.value)
    return False
