"""A hostile provider in Python: each `mode` of its one resource attacks the host through the
standard library (files, environment, network, CPU, memory, processes). The sandbox must contain
every one as the Rust hostile guests are contained: an error for the deployment, nothing leaked."""

import os
import socket
import subprocess

import cairn_sdk
from _cairn_manifest import MANIFEST


class Attack(cairn_sdk.Resource):
    token = "pyhostile:index:Attack"
    replace_on = ("*",)

    def create(self, inputs, preview):
        mode = inputs["mode"]
        if preview:
            return "", {"mode": mode, "found": cairn_sdk.UNKNOWN}
        if mode == "file":
            found = open("/etc/passwd").read()
        elif mode == "listdir":
            found = ",".join(os.listdir("/"))
        elif mode == "env":
            found = ",".join(sorted(os.environ))
        elif mode == "network":
            # An address, not a name: the connect itself is what is refused.
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.settimeout(5)
                s.connect(("127.0.0.1", int(inputs["port"])))
                found = s.recv(100).decode()
        elif mode == "process":
            found = subprocess.run(["/bin/sh", "-c", "id"], capture_output=True, text=True).stdout
        elif mode == "loop":
            while True:
                pass
        elif mode == "memory":
            hoard = []
            while True:
                hoard.append(bytearray(16 * 1024 * 1024))
        else:
            raise cairn_sdk.ProviderError(f"unknown mode {mode!r}")
        return mode, {"mode": mode, "found": found}


Provider = cairn_sdk.export(cairn_sdk.Provider([Attack()]), MANIFEST)
