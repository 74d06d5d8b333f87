"""Builds a Python guest into a component: `python -m cairn_sdk.build DIR -o OUT.wasm
[--world provider-world|program-world]`.

DIR holds `app.py`. For a provider (the default world) it also holds `cairn.json` (the
manifest: `name`, `version`, `schema`, `capabilities`, as for a Rust provider), `app.py`'s
`Provider` is `cairn_sdk.export(...)`, the manifest is given to the app as
`_cairn_manifest.MANIFEST` and embedded in the component's `cairn:manifest` custom section
(with `wit` filled in), so `cairn plugin install` reads it like a Rust provider's. For a
program, `app.py`'s `WitWorld` is `cairn_sdk.program.export_program(main)` and there is no
manifest. Needs `componentize-py` (PyPI) beside this Python or on PATH.

The component's runtime is patched once built (see `patch_zero_size_realloc`).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

WIT_VERSION = "0.3.0"
SECTION = "cairn:manifest"
WORLDS = ("provider-world", "program-world")


def wit_dir() -> Path:
    """The WIT package: `$CAIRN_WIT`, else the repository's `wit/` this SDK lives in."""
    env = os.environ.get("CAIRN_WIT")
    return Path(env) if env else Path(__file__).resolve().parents[3] / "wit"


def componentize_py() -> list:
    """The command that runs componentize-py: its module in this interpreter when installed
    here (a console script's shebang would name the venv's path at install time, and a venv
    may have moved since), else the one on PATH."""
    try:
        import componentize_py  # noqa: F401
        return [sys.executable, "-c", "import sys; from componentize_py import script; sys.argv[0] = 'componentize-py'; sys.exit(script())"]
    except ImportError:
        found = shutil.which("componentize-py")
        if not found:
            raise SystemExit("componentize-py is not installed: pip install componentize-py==0.25.1")
        return [found]


def leb128(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def custom_section(name: str, payload: bytes) -> bytes:
    body = leb128(len(name.encode())) + name.encode() + payload
    return b"\x00" + leb128(len(body)) + body


def manifest_of(directory: Path) -> str:
    path = directory / "cairn.json"
    try:
        manifest = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise SystemExit(f"{path}: {e}")
    if not isinstance(manifest, dict) or not isinstance(manifest.get("name"), str):
        raise SystemExit(f"{path}: the manifest must be a JSON object with a name")
    if not isinstance(manifest.get("version"), str):
        raise SystemExit(f"{path}: the manifest must state the provider's version")
    manifest.setdefault("wit", WIT_VERSION)
    return json.dumps(manifest, separators=(",", ":"))


# componentize-py 0.25.1's runtime (libcomponentize_py_runtime.so) implements the canonical
# ABI's `cabi_realloc` as `__rust_alloc(new_len, align)`, zero sizes included. Through the
# system allocator a zero-size allocation is a real heap chunk, but everything that frees a
# lowered list — its generated glue, and the host's side of the ABI — skips buffers of zero
# bytes, as the ABI allows (a zero-size buffer need not be a real one). So every empty list
# that crosses the boundary leaked one chunk: ~110 bytes a Check call (an empty `extras` of
# each value, the empty `failures`), growing a long-lived provider instance's memory without
# bound (13 -> 24 MiB over 100,000 Checks, 46 MiB over 300,000).
#
# The fix is wit-bindgen's own rule: a zero-size request gets `align` back, a dangling pointer
# never read or freed. The function's first 30 bytes (after its prologue) are its argument
# checks, which the canonical ABI makes redundant (`realloc(0, 0, align, len)` with a power of
# two `align` is the only call the host and the glue make); they are replaced, in place and at
# the same length, by: if `new_len == 0 && align > 1`, restore the shadow stack and return
# `align`. Alignment 1 is left alone: the runtime frees empty strings' and byte lists' buffers
# itself (it would free the dangling pointer), and SDK results never carry an empty one.
_REALLOC_CHECKS = bytes.fromhex(
    "2000 0d00"                 # local.get 0 (old_ptr); br_if 0 -> panic
    "2001 0d01"                 # local.get 1 (old_len); br_if 1 -> panic
    "2002 69 4101 47 0d02"      # align.popcnt != 1 -> panic
    "2003 41808080807820026b 4b 0d02"  # new_len > isize::MAX - align -> panic
)
_ZERO_SIZE_RETURN = bytes.fromhex(
    "2003 45"                   # local.get 3 (new_len); i32.eqz
    "2002 4101 4b"              # local.get 2 (align); i32.const 1; i32.gt_u
    "71"                        # i32.and
    "0440"                      # if
    "2004 4110 6a 248080808000"  # local.get 4; i32.const 16; i32.add; global.set 0 (stack)
    "2002 0f"                   # local.get 2; return
    "0b"                        # end
    "01010101"                  # nop x4 (same length)
)


def patch_zero_size_realloc(component: bytearray) -> None:
    """Makes the runtime's `cabi_realloc` return a dangling pointer for zero sizes (see
    above). The bytes patched must occur exactly once; another componentize-py (whose runtime
    differs) fails the build rather than shipping a guest that leaks."""
    assert len(_REALLOC_CHECKS) == len(_ZERO_SIZE_RETURN) == 30
    # The function's prologue (shadow stack -= 16 into local 4, three blocks) pins the place.
    prologue = bytes.fromhex("41106b2204248080808000024002400240")
    found = component.find(prologue + _REALLOC_CHECKS)
    if found < 0 or component.find(prologue + _REALLOC_CHECKS, found + 1) >= 0:
        raise SystemExit(
            "the componentize-py runtime is not the one this SDK patches (componentize-py==0.25.1 "
            "is required): its cabi_realloc's code was not found exactly once"
        )
    start = found + len(prologue)
    component[start : start + 30] = _ZERO_SIZE_RETURN


def build(directory: Path, output: Path, world: str = "provider-world") -> None:
    if world not in WORLDS:
        raise SystemExit(f"unknown world {world!r}: expected one of {', '.join(WORLDS)}")
    if not (directory / "app.py").is_file():
        raise SystemExit(f"{directory}: no app.py (the module componentize-py builds)")
    manifest = manifest_of(directory) if world == "provider-world" else None
    sdk_parent = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        if manifest is not None:
            Path(tmp, "_cairn_manifest.py").write_text(f"MANIFEST = {manifest!r}\n")
        # A provider needs only provider.wit; a program's world (program.wit) uses its types.
        wit = wit_dir()
        if world == "program-world":
            wit_source = Path(tmp, "wit")
            wit_source.mkdir()
            for name in ("provider.wit", "program.wit"):
                shutil.copyfile(wit / name, wit_source / name)
        else:
            wit_source = wit / "provider.wit"
        command = [
            *componentize_py(),
            "-d", str(wit_source),
            "-w", world,
            "componentize", "app",
            "-p", str(directory),
            "-p", str(sdk_parent),
            "-p", tmp,
            "-o", str(output),
        ]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise SystemExit(f"componentize-py failed:\n{result.stdout}{result.stderr}")
    component = bytearray(output.read_bytes())
    patch_zero_size_realloc(component)
    if manifest is not None:
        component += custom_section(SECTION, manifest.encode())
    output.write_bytes(bytes(component))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m cairn_sdk.build", description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--world", default="provider-world", choices=WORLDS,
                        help="the WIT world the component implements")
    args = parser.parse_args()
    build(args.directory, args.output, args.world)


if __name__ == "__main__":
    main()
