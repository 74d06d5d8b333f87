"""A hostile provider in Python: each `mode` of its one resource attacks the host through the
standard library (files, environment, arguments, network, clocks, CPU, memory, the stack,
processes) or through the boundary itself (huge or malformed results). The sandbox must contain
every one as the Rust hostile guests (tests/guests/hostile-*) are contained: an error for the
deployment naming the resource, or a result that shows nothing of the host.

Modes that succeed return what they found as the output `found`; the test asserts that it
shows nothing it should not."""

import os
import socket
import subprocess
import sys
import time

import cairn_sdk
from _cairn_manifest import MANIFEST
from wit_world.imports import types


def attempts(*tries) -> str:
    """What each attempt got: its result, or its error's type and text."""
    out = []
    for attempt in tries:
        try:
            out.append(f"ok:{attempt()}")
        except Exception as e:  # every failure is a finding here
            out.append(f"{type(e).__name__}:{e}")
    return "\n".join(out)


def read(path: str) -> str:
    with open(path) as f:
        return f.read()


def recurse(n: int) -> int:
    return recurse(n + 1) + 1


class Attack(cairn_sdk.Resource):
    token = "pyhostile:index:Attack"
    replace_on = ("*",)

    def create(self, inputs, preview):
        mode = inputs["mode"]
        if preview:
            return "", {"mode": mode, "found": cairn_sdk.UNKNOWN}
        port = int(inputs.get("port") or 9)
        if mode == "file":
            found = read("/etc/passwd")
        elif mode == "escape":
            # Out of the granted /work by `..`, and by absolute paths beside it.
            found = attempts(lambda: read("/work/../secret.txt"), lambda: read("/work/../../etc/passwd"),
                             lambda: read("/secret.txt"), lambda: os.listdir("/work/.."))
        elif mode == "listdir":
            found = attempts(lambda: ",".join(os.listdir("/")))
        elif mode == "env":
            found = ",".join(sorted(os.environ))
        elif mode == "args":
            found = ",".join(sys.argv[1:])
        elif mode == "network":
            # An address, not a name: the connect itself is what is refused.
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.settimeout(5)
                s.connect(("127.0.0.1", port))
                found = s.recv(100).decode()
        elif mode == "sockets":
            # Name lookup, listening, and UDP: none is granted; each fails in the guest, which
            # goes on (the host still fails the call for the violations).
            def listen():
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                    s.bind(("0.0.0.0", 0))
                    s.listen()
                    return s.getsockname()

            def udp():
                with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                    return s.sendto(b"x" * 64, ("127.0.0.1", port))

            found = attempts(lambda: socket.getaddrinfo("localhost", port), listen, udp)
        elif mode == "clock":
            # Clocks are the host's (as randomness is): readable, never a way to stall it.
            found = f"{time.time():.0f}"
        elif mode == "sleep":
            time.sleep(3600)
            found = "woke up"
        elif mode == "process":
            found = subprocess.run(["/bin/sh", "-c", "id"], capture_output=True, text=True).stdout
        elif mode == "loop":
            while True:
                pass
        elif mode == "memory":
            hoard = []
            while True:
                hoard.append(bytearray(16 * 1024 * 1024))
        elif mode == "recursion":
            # Python's own frames live in linear memory: they run into the memory limit.
            sys.setrecursionlimit(100_000_000)
            found = str(recurse(0))
        elif mode == "deep":
            # Recursion in the interpreter's C code (repr of a deeply nested list) exhausts
            # the wasm stack: a trap, the instance thrown away.
            nested = []
            for _ in range(1_000_000):
                nested = [nested]
            found = repr(nested)
        elif mode == "flood":
            # 80 MiB of logs and output, full of terminal escapes: the host keeps what fits its
            # limits and shows it escaped.
            line = "\x1b[31mred\x1b[0m \x07" + "x" * 4000
            for _ in range(10_000):
                cairn_sdk.log(line, "warning")
                print(line)
                print(line, file=sys.stderr)
            found = "flooded"
        elif mode == "huge":
            found = "x" * (20 * 1024 * 1024)
        else:
            raise cairn_sdk.ProviderError(f"unknown mode {mode!r}")
        return mode, {"mode": mode, "found": found}


Exported = cairn_sdk.export(cairn_sdk.Provider([Attack()]), MANIFEST)


class Provider(Exported):
    """The SDK's provider, but mode `malformed` answers with a table the SDK would never build:
    a node of an unknown kind, a string span past the end, a child before its parent."""

    def create(self, request):
        mode = cairn_sdk.values.decode(request.properties).get("mode")
        if mode == "malformed" and not request.preview:
            bad = types.Value([5, 1, 1, 0, 0, 3, 0, 99, 0, 1], b"f", [])
            return types.CreateResult("malformed", bad)
        return super().create(request)
