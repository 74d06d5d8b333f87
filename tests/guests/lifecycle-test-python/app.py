"""`lifecycle-test` in Python: the lifecycle scenarios' test provider (package `test`) written
with Cairn's Python SDK, behaving exactly as the Rust one (tests/guests/lifecycle-test, whose
logic is host/lifecycle/test-provider), so the same scenarios hold against both
(`cargo test -p cairn-lifecycle --test scenarios -- scenarios_against_the_python_provider`).

Its "cloud" is the granted directory `/cloud`, which the harness fills before and reads back
after each deployment:
* `resources/<id>.json` — `{name, type, inputs, outputs}`, plain JSON values (secrets
  `{"$secret": v}`, unknowns `"$unknown"`);
* `creates/<name>`, `generated/<name>` — counters behind IDs `<name>-<n>` and names
  `<name>-gen<n>` (one file per name, so concurrent instances never share a counter);
* `behaviour.json` — the deployment's behaviour (the test provider's `ProviderSpec`, camelCase).
Delays, blocking and dying stay on the host side (they observe the engine, not the provider).
"""

import json
import math
import os

import cairn_sdk
from _cairn_manifest import MANIFEST
from cairn_sdk import UNKNOWN, CheckFailure, Diff, PropertyDiff, ProviderError, Secret, unsecret
from cairn_sdk.values import OutputValue, contains_unknowns

CLOUD = "/cloud"

# The fields of a behaviour (`Behaviour` in host/lifecycle/test-provider/src/behaviour.rs).
FIELDS = (
    "replaceOn", "deleteBeforeReplace", "diff", "autoName", "failCreate", "failUpdate",
    "failDelete", "failRead", "partial", "badOutput", "checkFailures", "delayMs", "block",
    "blockAfter", "dieAfter",
)


# --- The cloud: files under /cloud ------------------------------------------------------------


def read_file(path: str, what: str):
    """The file's bytes; None when there is no such file."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ProviderError(f"reading {what}: {e}") from None


def write_file(directory: str, name: str, data: bytes) -> None:
    path = os.path.join(CLOUD, directory)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise ProviderError(f"creating {path}: {e}") from None
    try:
        with open(os.path.join(path, name), "wb") as f:
            f.write(data)
    except OSError as e:
        raise ProviderError(f"writing {name}: {e}") from None


def behaviour(name: str) -> dict:
    """The behaviour for resource `name`: `all`, overridden field by field by its own entry."""
    data = read_file(os.path.join(CLOUD, "behaviour.json"), "behaviour.json")
    spec = {}
    if data is not None:
        try:
            spec = json.loads(data)
        except ValueError as e:
            raise ProviderError(f"behaviour.json is malformed: {e}") from None
    merged = dict(spec.get("all") or {})
    for key, value in ((spec.get("resources") or {}).get(name) or {}).items():
        if value is not None:
            merged[key] = value
    return {key: merged.get(key) for key in FIELDS} | {"configReplaceKeys": spec.get("configReplaceKeys")}


def next_count(kind: str, name: str) -> int:
    """Increments counter `kind` (`creates`, `generated`) of resource `name`; the first is 1."""
    data = read_file(os.path.join(CLOUD, kind, name), "a counter")
    current = 0
    if data is not None:
        try:
            current = int(data.decode().strip())
        except ValueError as e:
            raise ProviderError(f"counter {kind}/{name}: {e}") from None
    write_file(kind, name, str(current + 1).encode())
    return current + 1


def entry_path(rid: str) -> str:
    return os.path.join(CLOUD, "resources", f"{rid}.json")


def get(rid: str):
    data = read_file(entry_path(rid), f"resource {rid}")
    if data is None:
        return None
    try:
        entry = json.loads(data)
    except ValueError as e:
        raise ProviderError(f"resource {rid} is malformed: {e}") from None
    as_map = lambda key: v if isinstance(v := from_json(entry.get(key)), dict) else {}
    return {
        "name": entry.get("name") if isinstance(entry.get("name"), str) else "",
        "type": entry.get("type") if isinstance(entry.get("type"), str) else "",
        "inputs": as_map("inputs"),
        "outputs": as_map("outputs"),
    }


def put(rid: str, entry: dict) -> None:
    data = {
        "name": entry["name"],
        "type": entry["type"],
        "inputs": to_json(entry["inputs"]),
        "outputs": to_json(entry["outputs"]),
    }
    write_file("resources", f"{rid}.json", json.dumps(data, allow_nan=False).encode())


def remove(rid: str) -> None:
    try:
        os.remove(entry_path(rid))
    except FileNotFoundError:
        pass
    except OSError as e:
        raise ProviderError(f"deleting resource {rid}: {e}") from None


def from_json(x):
    if isinstance(x, bool) or x is None:
        return x
    if isinstance(x, (int, float)):
        return float(x)
    if x == "$unknown":
        return UNKNOWN
    if isinstance(x, list):
        return [from_json(v) for v in x]
    if isinstance(x, dict):
        if len(x) == 1 and "$secret" in x:
            return Secret(from_json(x["$secret"]))
        return {k: from_json(v) for k, v in x.items()}
    return x


def to_json(x):
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, int):
        return float(x)
    if isinstance(x, list):
        return [to_json(v) for v in x]
    if isinstance(x, dict):
        return {k: to_json(v) for k, v in x.items()}
    if isinstance(x, Secret):
        return {"$secret": to_json(x.value)}
    if isinstance(x, OutputValue) and x.value is not UNKNOWN:
        return to_json(x.value)
    # Unknowns; the scenarios never put assets, archives or references into the cloud.
    return "$unknown"


# --- The logic (host/lifecycle/test-provider/src/lib.rs) ---------------------------------------


def reveal(x):
    """Through secrets and outputs, as the Rust SDK's `Value::reveal`."""
    while True:
        if isinstance(x, Secret):
            x = x.value
        elif isinstance(x, OutputValue):
            x = x.value
        else:
            return x


def differs(old, new) -> bool:
    """An unknown new value always differs; secrecy alone does not."""
    return contains_unknowns(new) or unsecret(old) != unsecret(new)


def changed_keys(olds: dict, news: dict) -> list:
    keys = [k for k, new in news.items() if k not in olds or differs(olds[k], new)]
    return keys + [k for k in olds if k not in news]


def changes(changed: list):
    return bool(changed)


def changed_paths(prefix: str, old, new, out: list, present=(True, True)) -> None:
    has_old, has_new = present
    if not has_old and not has_new:
        return
    if not has_old:
        kind = "add"
    elif not has_new:
        kind = "delete"
    else:
        o, n = reveal(old), reveal(new)
        if isinstance(o, dict) and isinstance(n, dict):
            for key in list(o) + [k for k in n if k not in o]:
                path = key if not prefix else f"{prefix}.{key}"
                changed_paths(path, o.get(key), n.get(key), out, (key in o, key in n))
            return
        if isinstance(o, list) and isinstance(n, list):
            for i in range(max(len(o), len(n))):
                changed_paths(f"{prefix}[{i}]", o[i] if i < len(o) else None, n[i] if i < len(n) else None, out, (i < len(o), i < len(n)))
            return
        if not differs(old, new):
            return
        kind = "update"
    out.append(PropertyDiff(prefix, kind))


def strip_secrets(m: dict) -> dict:
    return {k: unsecret(v) for k, v in m.items()}


def with_bad_output(b: dict, outputs: dict) -> None:
    bad = {"nan": math.nan, "inf": math.inf}.get(b.get("badOutput"))
    if bad is not None:
        outputs["bad"] = bad


class TestResource(cairn_sdk.Resource):
    """Every resource type of package `test` (the token is the URN's)."""

    def check(self, olds, news):
        b = behaviour(self.name)
        if b["checkFailures"] is not None:
            return news, [CheckFailure(f.get("property", ""), f["reason"]) for f in b["checkFailures"]]
        if b["autoName"] is True and "name" not in news:
            if "name" in olds:
                generated = olds["name"]
            else:
                generated = f"{self.name}-gen{next_count('generated', self.name)}"
            news = {**news, "name": generated}
        return news, []

    def diff(self, id, old_inputs, old_outputs, news):
        b = behaviour(self.name)
        changed = changed_keys(old_inputs, news)
        replace = [k for k in changed if k in (b["replaceOn"] or [])]
        dbr = b["deleteBeforeReplace"] is True and bool(replace)
        if b["diff"] == "unknown":
            return Diff(changed=[], replaces=replace, delete_before_replace=dbr, changes=None)
        paths = []
        for key in list(old_inputs) + [k for k in news if k not in old_inputs]:
            changed_paths(key, old_inputs.get(key), news.get(key), paths, (key in old_inputs, key in news))
        for p in paths:
            top = p.path.replace("[", ".").split(".", 1)[0]
            if top in replace:
                p.kind += "-replace"
        return Diff(changed=changed, replaces=replace, delete_before_replace=dbr, changes=changes(changed), detailed=paths)

    def create(self, inputs, preview):
        b = behaviour(self.name)
        outputs = strip_secrets(inputs)
        if preview:
            outputs["out"] = UNKNOWN
            return "", outputs
        if b["failCreate"] is not None and b["partial"] is not True:
            raise ProviderError(b["failCreate"])
        n = next_count("creates", self.name)
        rid = f"{self.name}-{n}"
        outputs["out"] = f"{self.name}-out-{n}"
        put(rid, {"name": self.name, "type": self.token_of_call(), "inputs": strip_secrets(inputs), "outputs": dict(outputs)})
        if b["failCreate"] is not None:
            raise ProviderError(b["failCreate"], partial=(rid, inputs, outputs))
        with_bad_output(b, outputs)
        return rid, outputs

    def read(self, id, inputs, state):
        b = behaviour(self.name)
        if b["failRead"] is not None:
            raise ProviderError(b["failRead"])
        entry = get(id)
        if entry is None:
            return None
        return id, entry["inputs"], entry["outputs"]

    def update(self, id, old_outputs, news, preview):
        b = behaviour(self.name)
        if b["failUpdate"] is not None and b["partial"] is not True:
            raise ProviderError(b["failUpdate"])
        outputs = strip_secrets(news)
        outputs["out"] = unsecret(old_outputs["out"]) if "out" in old_outputs else UNKNOWN
        if preview:
            return outputs
        entry = get(id)
        if entry is None:
            raise ProviderError(f"cannot update {self.urn}: no resource with ID {id} exists")
        entry["inputs"] = strip_secrets(news)
        entry["outputs"] = dict(outputs)
        put(id, entry)
        if b["failUpdate"] is not None:
            raise ProviderError(b["failUpdate"], partial=(id, news, outputs))
        with_bad_output(b, outputs)
        return outputs

    def delete(self, id, outputs):
        b = behaviour(self.name)
        if b["failDelete"] is not None:
            raise ProviderError(b["failDelete"])
        remove(id)

    def token_of_call(self) -> str:
        parts = self.urn.split("::")
        return parts[2].rsplit("$", 1)[-1] if len(parts) >= 4 else ""


class TestProvider(cairn_sdk.Provider):
    """Package `test`: one generic resource type (any `test:*` token)."""

    def __init__(self):
        super().__init__([])
        self.generic = TestResource()

    def resource(self, urn):
        self.generic.urn = urn
        return self.generic

    def diff_config(self, old_inputs, news):
        spec_keys = behaviour("")["configReplaceKeys"]
        replace_on = spec_keys if spec_keys is not None else ["region"]
        changed = changed_keys(old_inputs, news)
        return Diff(changed=changed, replaces=[k for k in changed if k in replace_on], changes=changes(changed))


Provider = cairn_sdk.export(TestProvider(), MANIFEST)
