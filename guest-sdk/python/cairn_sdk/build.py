"""Builds a Python provider into a component: `python -m cairn_sdk.build DIR -o OUT.wasm`.

DIR holds `cairn.json` (the manifest: `name`, `version`, `schema`, `capabilities`, as for a Rust
provider) and `app.py`, whose `Provider` is `cairn_sdk.export(...)`. The manifest is given to the
app as `_cairn_manifest.MANIFEST` and embedded in the component's `cairn:manifest` custom
section (with `wit` filled in), so `cairn plugin install` reads it like a Rust provider's.
Needs `componentize-py` (PyPI) beside this Python or on PATH.
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


def wit_dir() -> Path:
    """The WIT package: `$CAIRN_WIT`, else the repository's `wit/` this SDK lives in."""
    env = os.environ.get("CAIRN_WIT")
    return Path(env) if env else Path(__file__).resolve().parents[3] / "wit"


def componentize_py() -> list[str]:
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


def build(directory: Path, output: Path) -> None:
    manifest = manifest_of(directory)
    sdk_parent = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "_cairn_manifest.py").write_text(f"MANIFEST = {manifest!r}\n")
        command = [
            *componentize_py(),
            "-d", str(wit_dir() / "provider.wit"),
            "-w", "provider-world",
            "componentize", "app",
            "-p", str(directory),
            "-p", str(sdk_parent),
            "-p", tmp,
            "-o", str(output),
        ]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise SystemExit(f"componentize-py failed:\n{result.stdout}{result.stderr}")
    with open(output, "ab") as out:
        out.write(custom_section(SECTION, manifest.encode()))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m cairn_sdk.build", description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--world", default="provider-world", choices=["provider-world"],
                        help="the WIT world the component implements")
    args = parser.parse_args()
    build(args.directory, args.output)


if __name__ == "__main__":
    main()
