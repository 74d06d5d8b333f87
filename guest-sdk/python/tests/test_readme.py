"""The README's examples (every block starting with `# app.py`) run natively: a provider's
module imports and answers a Check, a component provider answers its method and (natively,
without an engine) fails its construct naming what it registered, a program's `main` runs
against the fake engine of test_program. (tests/e2e/python_sdk.rs builds the provider and the
program into components.)"""

import json
import re
import sys
import types as pytypes
import unittest

from bindings import SDK, load


def blocks(kind: str):
    text = (SDK / "README.md").read_text()
    return [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if b.startswith(f"# app.py ({kind})")]


def setUpModule():
    global values, wit_types, cairn, Fake
    load()
    import cairn_sdk.program as program
    from cairn_sdk import values as v
    from test_program import Fake as F
    from wit_world.imports import types as t

    values, wit_types, cairn, Fake = v, t, program, F


class Readme(unittest.TestCase):
    def module(self, source: str, name: str):
        module = pytypes.ModuleType(name)
        exec(compile(source, f"README.md:{name}", "exec"), module.__dict__)
        return module

    def test_there_are_examples_of_both(self):
        self.assertEqual(
            (len(blocks("a provider")), len(blocks("a provider's component")), len(blocks("a program"))), (1, 1, 1)
        )

    def manifest(self):
        manifest = pytypes.ModuleType("_cairn_manifest")
        manifest.MANIFEST = json.dumps({"name": "mypkg", "version": "0.1.0", "schema": {"name": "mypkg"}})
        sys.modules["_cairn_manifest"] = manifest
        self.addCleanup(sys.modules.pop, "_cairn_manifest")

    def test_the_component_example_answers_its_method(self):
        from componentize_py_types import Err

        self.manifest()
        for source in blocks("a provider's component"):
            provider = self.module(source, "readme_component").Provider()
            pair = "urn:pulumi:dev::proj::mypkg:index:Pair::pair"
            args = values.encode({"__self__": values.ResourceReference(pair), "name": "Ada"})
            r = provider.call(wit_types.CallRequest("mypkg:index:Pair/greet", args, [], "proj", "dev", False))
            self.assertEqual(values.decode(r.outputs), {"greeting": "Hello from pair, Ada!"})
            with self.assertRaises(Err) as caught:
                provider.call(wit_types.CallRequest("mypkg:index:Pair/other", args, [], "proj", "dev", False))
            self.assertEqual(caught.exception.value, wit_types.ProviderError_Unimplemented("call"))
            request = wit_types.ConstructRequest(
                "proj", "dev", "mypkg:index:Pair", "pair", None, values.encode({"prefix": "p"}), [], [], False, [], False
            )
            with self.assertRaises(Err) as caught:
                provider.construct(request)
            self.assertEqual(
                caught.exception.value.value.message,
                'registering mypkg:index:Pair "pair": the engine is only reachable from inside a component',
            )

    def test_the_provider_example_checks_and_creates(self):
        self.manifest()
        for source in blocks("a provider"):
            provider = self.module(source, "readme_provider").Provider()
            urn = "urn:pulumi:dev::proj::mypkg:index:Token::t"
            r = provider.check(wit_types.CheckRequest(urn, values.encode({}), values.encode({}), b""))
            self.assertEqual([(f.property, f.reason) for f in r.failures], [("prefix", "prefix is required")])
            inputs = values.encode({"prefix": "p"})
            created = provider.create(wit_types.CreateRequest(urn, inputs, 0.0, False))
            self.assertTrue(created.id.startswith("p-"))
            self.assertEqual(values.decode(created.outputs)["value"], values.Secret(created.id))
            preview = provider.create(wit_types.CreateRequest(urn, inputs, 0.0, True))
            self.assertEqual((preview.id, values.decode(preview.outputs)["value"]), ("", values.UNKNOWN))

    def test_the_program_example_runs(self):
        for source in blocks("a program"):
            module = self.module(source, "readme_program")
            # As the random provider does, the password's result is secret.
            fake = Fake(config={"proj:length": "24"}, responder=lambda r, inputs: dict(inputs) | {
                "result": values.Secret(f"{r.name}-result") if r.name == "db" else f"{r.name}-result"})
            fake.install(self)
            module.WitWorld().run()
            self.assertEqual(values.decode(fake.registered("db").inputs), {"length": 24.0})
            self.assertTrue(fake.registered("db").options.protect)
            self.assertEqual(
                fake.stack_outputs,
                {
                    "password": values.Secret("db-result"),
                    "url": "https://pet-id.example.com",
                    "greeting": "Hello, pet-id!",
                },
            )


if __name__ == "__main__":
    unittest.main()
