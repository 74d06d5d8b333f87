"""The program SDK (`cairn_sdk.program`) against a fake resource monitor: outputs (apply, all,
concat, format, lifted access) with their dependencies, secrets and unknowns; what reaches the
monitor for resources and every resource option; configuration; stack outputs; failures.

The fake stands in for the component's imports (`monitor`, `context`, `host`): it answers
every request on the next `wait`, as the engine would once the steps ran, with outputs made by
a responder (by default: the inputs, plus `id`), or unknown outputs in a preview."""

import unittest

from bindings import load


def setUpModule():
    global cairn, values, monitor, context, host, types, Err
    load()
    import cairn_sdk.program as p
    from cairn_sdk import values as v
    from componentize_py_types import Err as E
    from wit_world.imports import context as c, host as h, monitor as m, types as t

    cairn, values, monitor, context, host, types, Err = p, v, m, c, h, t, E


ROOT = "urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev"


class Fake:
    """The host's side of one run: records requests, completes them on `wait`."""

    def __init__(self, dry_run=False, config=None, fail=None, responder=None):
        self.dry_run = dry_run
        self.config = config or {}
        self.fail = fail or {}
        self.responder = responder
        self.requests = []  # (kind, request) in the order they were made
        self.outstanding = []
        self.stack_outputs = None
        self.component_outputs = {}
        self.logs = []
        self.waits = 0

    def install(self, test):
        patches = {
            (monitor, "register_resource"): lambda r: self.start("register", r),
            (monitor, "read_resource"): lambda r: self.start("read", r),
            (monitor, "invoke"): lambda r: self.start("invoke", r),
            (monitor, "wait"): self.wait,
            (monitor, "register_resource_outputs"): self.register_outputs,
            (context, "deployment"): lambda: context.DeploymentInfo("proj", "dev", "org", self.dry_run, ROOT),
            (context, "config"): lambda: [(k, values.encode(v)) for k, v in self.config.items()],
            (host, "log"): lambda severity, urn, message: self.logs.append((severity, urn, message)),
        }
        for (module, name), fake in patches.items():
            original = getattr(module, name)
            setattr(module, name, fake)
            test.addCleanup(setattr, module, name, original)

    def start(self, kind, request):
        self.requests.append((kind, request))
        self.outstanding.append((len(self.requests) - 1, kind, request))
        return len(self.requests) - 1

    def urn(self, request):
        return f"urn:pulumi:dev::proj::{request.resource_type}::{request.name}"

    def wait(self):
        self.waits += 1
        done, self.outstanding = self.outstanding, []
        return [monitor.Completion(handle, self.outcome(kind, r)) for handle, kind, r in done]

    def outcome(self, kind, r):
        if kind == "invoke":
            args = values.decode(r.args) or {}
            return monitor.Outcome_Outputs(monitor.CallOutputs(values.encode({"sum": sum(args.values())}), []))
        if r.name in self.fail:
            return monitor.Outcome_Failed(self.fail[r.name])
        inputs = values.decode(r.properties if kind == "read" else r.inputs) or {}
        if self.responder is not None:
            outputs = self.responder(r, inputs)
        elif self.dry_run:
            outputs = {k: values.UNKNOWN for k in inputs} | {"result": values.UNKNOWN}
        else:
            outputs = dict(inputs) | {"result": f"{r.name}-result"}
        custom = kind == "read" or r.custom
        rid = None if (self.dry_run or not custom) else (r.id if kind == "read" else f"{r.name}-id")
        return monitor.Outcome_State(monitor.ResourceState(self.urn(r), rid, values.encode(outputs), []))

    def register_outputs(self, urn, value):
        decoded = values.decode(value)
        if urn == ROOT:
            self.stack_outputs = decoded
        else:
            self.component_outputs[urn] = decoded

    def registered(self, name):
        for kind, r in self.requests:
            if r.name == name:
                return r
        raise AssertionError(f"{name} was not registered: {[r.name for _, r in self.requests]}")


class Program(unittest.TestCase):
    def run_program(self, main, **fake_args):
        fake = Fake(**fake_args)
        fake.install(self)
        cairn.run(main)
        return fake

    def failing_program(self, main, **fake_args):
        fake = Fake(**fake_args)
        fake.install(self)
        with self.assertRaises(Err) as caught:
            cairn.run(main)
        return fake, caught.exception.value

    def test_outputs_derive_values_with_dependencies_and_secrets(self):
        seen = {}

        def main(ctx):
            a = cairn.CustomResource("pkg:index:A", "a", {"x": 1})
            b = cairn.CustomResource("pkg:index:B", "b", {"y": "two"})
            secret = cairn.Output.secret("s3cret")
            cases = {
                "apply": a.output("result").apply(lambda r: r.upper()),
                "all": cairn.Output.all(a.output("x"), b.output("y"), 3),
                "all_kw": cairn.Output.all(x=a.output("x"), y=b.output("y")),
                "concat": cairn.Output.concat("x=", a.output("x"), "/", b.output("y")),
                "format": cairn.Output.format("{}-{name}", a.output("x"), name=b.output("y")),
                "item": a.outputs["x"],
                "nested": a.output("result").apply(lambda r: b.output("y").apply(lambda y: f"{r}+{y}")),
                "secret": cairn.Output.all(secret, a.output("x")).apply(lambda v: f"{v[0]}:{v[1]}"),
                "unsecret": cairn.Output.unsecret(secret),
                "from_input": cairn.Output.from_input({"k": [a.output("x")]}),
            }
            for key, out in cases.items():
                cairn.export(key, out)
                out.apply(lambda v, key=key: seen.__setitem__(key, v))
            # What each derived output depends on reaches the engine with the input.
            cairn.CustomResource("pkg:index:C", "c", {k: cases[k] for k in ("all", "nested", "secret", "unsecret")})

        fake = self.run_program(main)
        urn_a, urn_b = "urn:pulumi:dev::proj::pkg:index:A::a", "urn:pulumi:dev::proj::pkg:index:B::b"
        expected = {
            "apply": ("A-RESULT", False),
            "all": ([1.0, "two", 3], False),
            "all_kw": ({"x": 1.0, "y": "two"}, False),
            "concat": ("x=1/two", False),
            "format": ("1-two", False),
            "item": (1.0, False),
            "nested": ("a-result+two", False),
            "secret": ("s3cret:1.0", True),
            "unsecret": ("s3cret", False),
            "from_input": ({"k": [1.0]}, False),
        }
        for key, (value, secret) in expected.items():
            self.assertEqual(seen[key], value, key)
            stored = fake.stack_outputs[key]
            self.assertEqual(stored, values.Secret(value) if secret else value, key)
        c = fake.registered("c")
        self.assertEqual(
            [(d.property, d.urns) for d in c.property_dependencies],
            [("all", [urn_a, urn_b]), ("nested", [urn_a, urn_b]), ("secret", [urn_a])],
        )
        self.assertEqual(values.decode(c.inputs)["secret"], values.Secret("s3cret:1.0"))

    def test_an_apply_on_an_unknown_does_not_run_in_a_preview(self):
        ran = []

        def main(ctx):
            self.assertTrue(ctx.dry_run)
            a = cairn.CustomResource("pkg:index:A", "a", {"x": 1})
            derived = a.output("result").apply(lambda r: ran.append(r) or f"got {r}")
            b = cairn.CustomResource("pkg:index:B", "b", {"from_a": derived, "plain": "p"})
            cairn.export("derived", derived)
            cairn.export("id", a.id)
            cairn.export("b", b.output("from_a"))
            cairn.export("known", cairn.Output.from_input("k").apply(lambda v: v + "!"))

        fake = self.run_program(main, dry_run=True)
        self.assertEqual(ran, [])
        self.assertEqual(
            fake.stack_outputs,
            {"derived": values.UNKNOWN, "id": values.UNKNOWN, "b": values.UNKNOWN, "known": "k!"},
        )
        # The unknown input reaches the provider as unknown; its dependency is recorded.
        b = fake.registered("b")
        self.assertEqual(values.decode(b.inputs), {"from_a": values.UNKNOWN, "plain": "p"})
        self.assertEqual(
            [(d.property, d.urns) for d in b.property_dependencies],
            [("from_a", ["urn:pulumi:dev::proj::pkg:index:A::a"])],
        )

    def test_a_request_waits_for_what_it_refers_to(self):
        def main(ctx):
            a = cairn.CustomResource("pkg:index:A", "a", {})
            cairn.CustomResource("pkg:index:B", "b", {"x": a.output("result")})
            cairn.CustomResource("pkg:index:C", "c", {}, cairn.ResourceOptions(depends_on=[a]))
            cairn.CustomResource("pkg:index:D", "d", {"plain": 1})

        fake = self.run_program(main)
        # a and d go out at once (nothing to wait for); b and c once a has completed.
        order = [r.name for _, r in fake.requests]
        self.assertEqual(set(order[:2]), {"a", "d"})
        self.assertEqual(set(order[2:]), {"b", "c"})
        self.assertEqual(fake.registered("c").options.depends_on, ["urn:pulumi:dev::proj::pkg:index:A::a"])
        self.assertEqual(values.decode(fake.registered("b").inputs), {"x": "a-result"})

    def test_every_resource_option_reaches_the_monitor(self):
        def main(ctx):
            parent = cairn.ComponentResource("pkg:index:Group", "group")
            gone = cairn.CustomResource("pkg:index:A", "gone", {})
            provider = cairn.ProviderResource("pkg", "explicit", {"region": "r"})
            cairn.CustomResource(
                "pkg:index:Thing",
                "thing",
                {"secret": cairn.Output.secret("pw"), "plain": 1},
                cairn.ResourceOptions(
                    parent=parent,
                    depends_on=[gone, gone],
                    protect=True,
                    provider=provider,
                    aliases=["old-name", cairn.Alias(type_="pkg:index:Old", parent=gone, no_parent=False)],
                    ignore_changes=["plain"],
                    replace_on_changes=["secret"],
                    delete_before_replace=True,
                    additional_secret_outputs=["result"],
                    custom_timeouts=cairn.CustomTimeouts(create=60, delete=5),
                    import_="existing-id",
                    retain_on_delete=True,
                    deleted_with=gone,
                    version="1.2.3",
                ),
            )

        fake = self.run_program(main)
        r = fake.registered("thing")
        o = r.options
        gone = "urn:pulumi:dev::proj::pkg:index:A::gone"
        self.assertEqual(values.decode(r.inputs), {"secret": values.Secret("pw"), "plain": 1.0})
        self.assertTrue(r.custom)
        self.assertFalse(r.remote)
        self.assertEqual(o.parent, "urn:pulumi:dev::proj::pkg:index:Group::group")
        self.assertEqual(o.depends_on, [gone])
        self.assertEqual(o.provider, "urn:pulumi:dev::proj::pulumi:providers:pkg::explicit::explicit-id")
        self.assertEqual(
            [(a.name, a.resource_type, a.parent_urn) for a in o.aliases],
            [("old-name", None, None), (None, "pkg:index:Old", gone)],
        )
        self.assertEqual((o.protect, o.retain_on_delete, o.delete_before_replace), (True, True, True))
        self.assertEqual((o.ignore_changes, o.replace_on_changes), (["plain"], ["secret"]))
        self.assertEqual(o.additional_secret_outputs, ["result"])
        self.assertEqual((o.custom_timeouts.create, o.custom_timeouts.update, o.custom_timeouts.delete), (60.0, 0.0, 5.0))
        self.assertEqual((o.import_id, o.version, o.deleted_with), ("existing-id", "1.2.3", gone))
        self.assertEqual(fake.registered("group").custom, False)

    def test_providers_are_inherited_by_children_and_unknown_ids_still_refer(self):
        def main(ctx):
            provider = cairn.ProviderResource("pkg", "p", {})
            group = cairn.ComponentResource("app:index:Group", "group", opts=cairn.ResourceOptions(providers=[provider]))
            cairn.CustomResource("pkg:index:Thing", "child", {}, cairn.ResourceOptions(parent=group))
            cairn.CustomResource("other:index:Thing", "unrelated", {}, cairn.ResourceOptions(parent=group))

        fake = self.run_program(main, dry_run=True)
        reference = f"urn:pulumi:dev::proj::pulumi:providers:pkg::p::{cairn.UNKNOWN_ID}"
        self.assertEqual(fake.registered("child").options.provider, reference)
        self.assertIsNone(fake.registered("unrelated").options.provider)
        self.assertEqual(fake.registered("group").options.providers, [("pkg", reference)])

    def test_components_register_their_outputs(self):
        def main(ctx):
            group = cairn.ComponentResource("app:index:Group", "group")
            child = cairn.CustomResource("pkg:index:A", "child", {"x": 1}, cairn.ResourceOptions(parent=group))
            group.register_outputs({"fromChild": child.output("result"), "secret": cairn.Output.secret(2)})
            remote = cairn.ComponentResource("pkg:index:Remote", "remote", {"size": 3}, remote=True)
            cairn.export("remoteUrn", remote.urn)

        fake = self.run_program(main)
        self.assertEqual(
            fake.component_outputs["urn:pulumi:dev::proj::app:index:Group::group"],
            {"fromChild": "child-result", "secret": values.Secret(2.0)},
        )
        remote = fake.registered("remote")
        self.assertEqual((remote.custom, remote.remote, values.decode(remote.inputs)), (False, True, {"size": 3.0}))
        self.assertEqual(fake.stack_outputs, {"remoteUrn": "urn:pulumi:dev::proj::pkg:index:Remote::remote"})

    def test_typed_resources_reads_invokes_and_stack_references(self):
        class Thing(cairn.CustomResource):
            result = cairn.output_property("result")

            def __init__(self, name, size):
                super().__init__("pkg:index:Thing", name, {"size": size})

        def main(ctx):
            thing = Thing("t", 4)
            existing = cairn.read("pkg:index:Thing", "existing", thing.id, {"size": 1})
            total = cairn.invoke("pkg:index:sum", {"a": 1, "b": thing.output("size")})
            other = cairn.StackReference("org/proj/other")
            cairn.export("result", thing.result)
            cairn.export("read", existing.id)
            cairn.export("sum", total["sum"])
            cairn.export("other", other.get_output("x"))

        responder = lambda r, inputs: {"outputs": {"x": values.Secret("theirs")}} if r.resource_type.endswith("StackReference") else dict(inputs) | {"result": f"{r.name}-result"}
        fake = self.run_program(main, responder=responder)
        read = fake.registered("existing")
        self.assertEqual((read.id, values.decode(read.properties)), ("t-id", {"size": 1.0}))
        self.assertEqual(fake.registered("org/proj/other").id, "org/proj/other")
        self.assertEqual(
            fake.stack_outputs,
            {"result": "t-result", "read": "t-id", "sum": 5.0, "other": values.Secret("theirs")},
        )

    def test_an_invoke_with_unknown_arguments_is_not_sent(self):
        def main(ctx):
            thing = cairn.CustomResource("pkg:index:Thing", "t", {"size": 1})
            cairn.export("sum", cairn.invoke("pkg:index:sum", {"a": thing.output("size")}))

        fake = self.run_program(main, dry_run=True)
        self.assertEqual([k for k, _ in fake.requests], ["register"])
        self.assertEqual(fake.stack_outputs, {"sum": values.UNKNOWN})

    def test_configuration(self):
        config = {
            "proj:name": "Ada",
            "proj:count": "3",
            "proj:ratio": "0.5",
            "proj:on": "true",
            "proj:bad": "three",
            "proj:pw": values.Secret("hunter2"),
            "proj:tags": {"env": "dev"},
            "proj:json": '{"a": [1, 2]}',
            "other:key": "v",
        }
        got = {}

        def main(ctx):
            c = cairn.Config()
            got.update(
                name=c.get("name"),
                missing=c.get("missing", "default"),
                count=c.get_int("count"),
                ratio=c.get_float("ratio"),
                on=c.get_bool("on"),
                tags=c.get_object("tags"),
                tags_text=c.get("tags"),
                json=c.get_object("json"),
                other=cairn.Config("other").require("key"),
                full=c.get("other:key"),
            )
            cairn.export("pw", c.require_secret("pw"))
            cairn.export("name", c.get_secret("name"))
            for call, message in [
                (lambda: c.require("missing"), "missing required configuration variable 'proj:missing'"),
                (lambda: c.get_int("bad"), "configuration value 'proj:bad' is not a whole number: 'three'"),
                (lambda: c.get_bool("name"), "configuration value 'proj:name' is not true or false"),
                (lambda: c.require_secret("nope"), "cairn config set --secret proj:nope <value>"),
            ]:
                with self.assertRaises(cairn.ConfigError) as caught:
                    call()
                self.assertIn(message, str(caught.exception))

        fake = self.run_program(main, config=config)
        self.assertEqual(
            got,
            {
                "name": "Ada", "missing": "default", "count": 3, "ratio": 0.5, "on": True,
                "tags": {"env": "dev"}, "tags_text": '{"env": "dev"}', "json": {"a": [1, 2]},
                "other": "v", "full": "v",
            },
        )
        self.assertEqual(fake.stack_outputs, {"pw": values.Secret("hunter2"), "name": values.Secret("Ada")})

    def test_failures_fail_the_program_once_requests_finished(self):
        cases = [
            # (program, fake arguments, the message the run fails with)
            (lambda ctx: cairn.CustomResource("pkg:index:A", "a", {}), {"fail": {"a": "quota exceeded"}}, "pkg:index:A a: quota exceeded"),
            (lambda ctx: cairn.export("x", cairn.Output.from_input(1).apply(lambda v: 1 / 0)), {}, "apply failed: ZeroDivisionError"),
            (lambda ctx: cairn.Config().require("k"), {}, "missing required configuration variable 'proj:k'"),
            (lambda ctx: cairn.CustomResource("pkg:index:A", "a", {"bad": object()}), {}, "an input is not a property value"),
            (lambda ctx: cairn.export("x", {1, 2}), {}, "a stack output is not a property value"),
            (lambda ctx: [][1], {}, "IndexError: list index out of range"),
        ]
        for main, args, message in cases:
            with self.subTest(message=message):
                fake, error = self.failing_program(main, **args)
                self.assertIn(message, error)

        # Requests already made still finish: the program waits for them before failing.
        def main(ctx):
            cairn.CustomResource("pkg:index:A", "slow", {})
            raise ValueError("boom")

        fake, error = self.failing_program(main)
        self.assertEqual(error, "ValueError: boom")
        self.assertEqual([r.name for _, r in fake.requests], ["slow"])
        self.assertEqual(fake.outstanding, [])

    def test_dependents_of_a_failed_resource_are_not_sent(self):
        def main(ctx):
            a = cairn.CustomResource("pkg:index:A", "a", {})
            cairn.CustomResource("pkg:index:B", "b", {"x": a.output("result")})

        fake, error = self.failing_program(main, fail={"a": "no"})
        self.assertEqual([r.name for _, r in fake.requests], ["a"])
        self.assertEqual(error, "pkg:index:A a: no")

    def test_a_long_chain_of_outputs_needs_no_deep_stack(self):
        def main(ctx):
            out = cairn.Output.from_input(0)
            for _ in range(20_000):
                out = out.apply(lambda v: v + 1)
            cairn.export("n", out)

        fake = self.run_program(main)
        self.assertEqual(fake.stack_outputs, {"n": 20_000})

    def test_outputs_refuse_to_be_used_as_plain_values(self):
        def main(ctx):
            o = cairn.Output.from_input("x")
            for use in (str, bool, list):
                with self.assertRaises(TypeError):
                    use(o)
            cairn.log("hello", "warning")

        fake = self.run_program(main)
        self.assertEqual(fake.logs, [(host.Severity.WARNING, None, "hello")])


if __name__ == "__main__":
    unittest.main()
