"""WIT bindings for the SDK's unit tests, generated once per test run by componentize-py (the
version the SDK is built with) for one world that has both sides: the provider world and the
program world, so every module of the SDK imports natively as it does in a component.

Run the tests: `python -m unittest discover guest-sdk/python/tests` with componentize-py
installed (`target/pyenv/bin/python` has it)."""

import atexit
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SDK = Path(__file__).resolve().parents[1]
WIT = SDK.parents[1] / "wit"

# Both worlds at once (one `wit_world` package for every test module in the process).
TEST_WORLD = """package cairn:deploy@0.3.0;

world sdk-tests {
    include provider-world;
    include program-world;
}
"""

_loaded = False


def load() -> None:
    """Generates the bindings (first call) and puts them and the SDK on `sys.path`."""
    global _loaded
    if _loaded:
        return
    tmp = Path(tempfile.mkdtemp())
    atexit.register(shutil.rmtree, tmp, True)
    wit = tmp / "wit"
    wit.mkdir()
    for name in ("provider.wit", "program.wit"):
        shutil.copyfile(WIT / name, wit / name)
    (wit / "sdk-tests.wit").write_text(TEST_WORLD)
    tool = Path(sys.executable).parent / "componentize-py"
    command = [str(tool)] if tool.exists() else [shutil.which("componentize-py") or "componentize-py"]
    subprocess.run([*command, "-d", str(wit), "-w", "sdk-tests", "bindings", str(tmp / "out")], check=True)
    sys.path[:0] = [str(tmp / "out"), str(SDK)]
    _loaded = True
