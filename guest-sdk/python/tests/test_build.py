"""The build's patch of componentize-py's `cabi_realloc` (see `cairn_sdk.build`): applied in
place at the one place its code occurs, refused when that code is missing or ambiguous (another
componentize-py), and the manifest section written as wasm expects."""

import unittest

from bindings import load

# Loaded first: importing `cairn_sdk` without the bindings would leave the package without its
# provider side for the other test modules of the run.
load()
from cairn_sdk import build  # noqa: E402

PROLOGUE = bytes.fromhex("41106b2204248080808000024002400240")
FUNCTION = PROLOGUE + build._REALLOC_CHECKS


class Patch(unittest.TestCase):
    def test_the_checks_are_replaced_in_place(self):
        component = bytearray(b"\x00asm" + b"x" * 100 + FUNCTION + b"rest of the code")
        before = len(component)
        build.patch_zero_size_realloc(component)
        self.assertEqual(len(component), before)
        at = component.find(PROLOGUE) + len(PROLOGUE)
        self.assertEqual(bytes(component[at : at + 30]), build._ZERO_SIZE_RETURN)
        self.assertTrue(component.endswith(b"rest of the code"))
        self.assertEqual(component.find(build._REALLOC_CHECKS), -1)

    def test_an_unknown_runtime_fails_the_build(self):
        for component in [
            bytearray(b"\x00asm no runtime here"),
            bytearray(FUNCTION + b"between" + FUNCTION),  # ambiguous: patch nothing
            bytearray(build._REALLOC_CHECKS),  # the checks without the function's prologue
        ]:
            with self.assertRaisesRegex(SystemExit, "componentize-py==0.25.1"):
                build.patch_zero_size_realloc(component)

    def test_the_replacement_returns_align_and_restores_the_stack(self):
        code = build._ZERO_SIZE_RETURN
        self.assertEqual(len(code), len(build._REALLOC_CHECKS))
        # if (new_len == 0 & align > 1) { sp = local4 + 16; return align }
        self.assertEqual(code[:11], bytes.fromhex("200345200241014b710440"))
        self.assertIn(bytes.fromhex("200441106a248080808000"), code)  # the stack pointer back
        self.assertIn(bytes.fromhex("20020f0b"), code)  # return align; end

    def test_custom_sections_are_well_formed(self):
        for name, payload in [("cairn:manifest", b"{}"), ("x" * 200, b"y" * 300)]:
            section = build.custom_section(name, payload)
            self.assertEqual(section[0], 0)
            size, at = decode_leb(section, 1)
            self.assertEqual(len(section) - at, size)
            name_len, at2 = decode_leb(section, at)
            self.assertEqual(section[at2 : at2 + name_len].decode(), name)
            self.assertEqual(section[at2 + name_len :], payload)


def decode_leb(data: bytes, at: int):
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


if __name__ == "__main__":
    unittest.main()
