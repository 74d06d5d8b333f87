"""The provider side (`cairn_sdk.provider`): the exported class the component runs, called
natively with WIT requests — defaults that need no decoding, diffs (ignored keys, detailed
entries, unknown changes), failures as the WIT's errors (never other exceptions), partial
state, a resource that is gone; components (`construct`) and methods (`call`): their requests
and results, the defaults, and the engine's absence natively as an ordinary failure."""

import json
import unittest

from bindings import load


def setUpModule():
    global sdk, values, types, Err
    load()
    import cairn_sdk as s
    from cairn_sdk import values as v
    from componentize_py_types import Err as E
    from wit_world.imports import types as t

    sdk, values, types, Err = s, v, t, E


URN = "urn:pulumi:dev::proj::pkg:index:Thing::thing"
MANIFEST = json.dumps({"name": "pkg", "version": "1.0.0", "schema": {"name": "pkg"}})


def exported(*resources, provider=None):
    return sdk.export(provider or sdk.Provider(list(resources)), MANIFEST)()


class Provider(unittest.TestCase):
    def test_defaults_need_no_decoding(self):
        class Plain(sdk.Resource):
            token = "pkg:index:Thing"

        p = exported(Plain())
        news = values.encode({"a": 1.0, "b": "x"})
        checked = p.check(types.CheckRequest(URN, values.encode({}), news, b""))
        self.assertIs(checked.inputs, news)  # the very table the host sent
        # An empty byte list is never returned (componentize-py would leak it).
        empty = types.Value([0, 0, 0, 0, 0], b"", [])
        self.assertEqual(p.check(types.CheckRequest(URN, empty, empty, b"")).inputs.strings, b"\0")
        d = p.diff(types.DiffRequest(URN, "id", news, news, values.encode({"a": 1.0, "b": "x"}), []))
        self.assertEqual((d.changes, d.changed_keys), (types.DiffChanges.NONE, []))

    def test_checks_of_flat_inputs_take_shortcuts_only_when_nothing_changed(self):
        class Checking(sdk.Resource):
            token = "pkg:index:Thing"

            def check(self, olds, news):
                mode = news.get("mode")
                if mode == "mutate":
                    news["extra"] = 1.0
                elif mode == "retype":
                    news["n"] = True  # equal to 1.0 in Python, not on the wire
                elif mode == "olds":
                    olds["mode"] = "changed"  # the olds are the news' copy, not the news
                return news, []

        p = exported(Checking())
        for mode, olds, expected, same_table in [
            ("keep", {"mode": "keep", "n": 1.0}, {"mode": "keep", "n": 1.0}, True),
            ("keep", {}, {"mode": "keep", "n": 1.0}, True),
            ("mutate", {"mode": "mutate", "n": 1.0}, {"mode": "mutate", "n": 1.0, "extra": 1.0}, False),
            ("retype", {}, {"mode": "retype", "n": True}, False),
            ("olds", {"mode": "olds", "n": 1.0}, {"mode": "olds", "n": 1.0}, True),
        ]:
            with self.subTest(mode=mode, olds=olds):
                news = values.encode({"mode": mode, "n": 1.0})
                r = p.check(types.CheckRequest(URN, values.encode(olds), news, b""))
                self.assertEqual(values.decode(r.inputs), expected)
                self.assertEqual(r.inputs is news, same_table)

    def test_diffs(self):
        class Replacing(sdk.Resource):
            token = "pkg:index:Thing"
            replace_on = ("size",)

        p = exported(Replacing())
        olds = {"size": 1.0, "name": "a", "tag": "t", "secret": sdk.Secret("s"), "gone": 1.0}
        cases = [
            # (news, ignore_changes, changes, changed, replaces)
            ({**olds}, [], types.DiffChanges.NONE, [], []),
            ({**olds, "secret": "s"}, [], types.DiffChanges.NONE, [], []),  # secrecy is no change
            ({**olds, "size": 2.0}, [], types.DiffChanges.SOME, ["size"], ["size"]),
            ({**olds, "name": "b", "size": 2.0}, ["size"], types.DiffChanges.SOME, ["name"], []),
            ({**olds, "tag": sdk.UNKNOWN}, [], types.DiffChanges.SOME, ["tag"], []),
            ({k: v for k, v in olds.items() if k != "gone"}, [], types.DiffChanges.SOME, ["gone"], []),
        ]
        for news, ignore, changes, changed, replaces in cases:
            with self.subTest(news=news, ignore=ignore):
                d = p.diff(types.DiffRequest(URN, "id", values.encode(olds), values.encode({}), values.encode(news), ignore))
                self.assertEqual((d.changes, d.changed_keys, d.replace_keys), (changes, changed, replaces))

    def test_detailed_and_unknown_diffs(self):
        class Detailed(sdk.Resource):
            token = "pkg:index:Thing"

            def diff(self, id, old_inputs, old_outputs, news):
                if news.get("mode") == "unknown":
                    return sdk.Diff(replaces=["x"], changes=None)
                return sdk.Diff(changed=["x"], replaces=["x"], delete_before_replace=True,
                                detailed=[sdk.PropertyDiff("x.y", "update-replace"), sdk.PropertyDiff("z[0]", "add", False)])

        p = exported(Detailed())
        d = p.diff(types.DiffRequest(URN, "id", values.encode({}), values.encode({}), values.encode({}), []))
        self.assertEqual((d.changes, d.replace_keys, d.delete_before_replace), (types.DiffChanges.SOME, ["x"], True))
        self.assertEqual(
            [(e.path, e.kind, e.input_diff) for e in d.detailed_diff],
            [("x.y", types.DiffKind.UPDATE_REPLACE, True), ("z[0]", types.DiffKind.ADD, False)],
        )
        d = p.diff(types.DiffRequest(URN, "id", values.encode({}), values.encode({}), values.encode({"mode": "unknown"}), []))
        self.assertEqual((d.changes, d.replace_keys, d.changed_keys, d.detailed_diff), (types.DiffChanges.UNKNOWN, ["x"], [], None))

    def test_failures_are_the_wits_errors(self):
        class Failing(sdk.Resource):
            token = "pkg:index:Thing"

            def create(self, inputs, preview):
                if inputs.get("mode") == "partial":
                    raise sdk.ProviderError("half made", partial=("id-1", inputs, {"out": 1.0}))
                return {}["missing"]

            def read(self, id, inputs, state):
                return None

        p = exported(Failing())
        for mode, message, partial in [
            ("partial", "half made", ("id-1", {"mode": "partial"}, {"out": 1.0})),
            ("bug", "KeyError: 'missing'", None),
        ]:
            with self.assertRaises(Err) as caught:
                p.create(types.CreateRequest(URN, values.encode({"mode": mode}), 0.0, False))
            error = caught.exception.value
            self.assertIsInstance(error, types.ProviderError_Failed)
            self.assertEqual(error.value.message, message)
            got = error.value.partial
            self.assertEqual(
                None if got is None else (got.id, values.decode(got.inputs), values.decode(got.outputs)),
                partial,
            )
        with self.assertRaises(Err) as caught:
            p.check(types.CheckRequest("urn:pulumi:dev::proj::pkg:index:Other::o", values.encode({}), values.encode({}), b""))
        self.assertIsInstance(caught.exception.value, types.ProviderError_Unimplemented)
        gone = p.read(types.ReadRequest(URN, "id-1", values.encode({}), values.encode({})))
        self.assertEqual((gone.id, values.decode(gone.outputs)), ("", {}))

    def test_the_urn_and_name_of_the_call(self):
        seen = []

        class Named(sdk.Resource):
            token = "pkg:index:Thing"

            def create(self, inputs, preview):
                seen.append((self.urn, self.name, preview))
                return "id", inputs

        p = exported(Named())
        created = p.create(types.CreateRequest(URN, values.encode({}), 0.0, True))
        self.assertEqual(created.id, "")  # a preview's ID is never used
        self.assertEqual(seen, [(URN, "thing", True)])

    def test_provider_configuration_hooks(self):
        class Configured(sdk.Provider):
            def check_config(self, olds, news):
                return {**news, "region": news.get("region", "eu")}, []

            def diff_config(self, old_inputs, news):
                changed = sdk.provider.changed_keys(old_inputs, news)
                return sdk.Diff(changed=changed, replaces=[k for k in changed if k == "region"])

        p = exported(provider=Configured([]))
        checked = p.check_config(types.CheckRequest(URN, values.encode({}), values.encode({}), b""))
        self.assertEqual(values.decode(checked.inputs), {"region": "eu"})
        d = p.diff_config(types.DiffRequest(URN, "id", values.encode({"region": "eu"}), values.encode({}), values.encode({"region": "us"}), []))
        self.assertEqual((d.changes, d.replace_keys), (types.DiffChanges.SOME, ["region"]))
        self.assertEqual(json.loads(p.get_schema()), {"name": "pkg"})


COMPONENT = "urn:pulumi:dev::proj::pkg:index:Group::group"


def construct_request(types, values, inputs, providers=()):
    return types.ConstructRequest(
        "proj", "dev", "pkg:index:Group", "group", None, values.encode(inputs),
        [types.PropertyDependencies("size", ["urn:a"]), types.PropertyDependencies("size", ["urn:b"])],
        ["urn:c"], True, list(providers), False,
    )


class Components(unittest.TestCase):
    def test_construct_and_call_are_unimplemented_by_default(self):
        p = exported()
        with self.assertRaises(Err) as caught:
            p.construct(construct_request(types, values, {}))
        self.assertEqual(caught.exception.value, types.ProviderError_Unimplemented("construct"))
        with self.assertRaises(Err) as caught:
            p.call(types.CallRequest("pkg:index:Group/m", values.encode({}), [], "proj", "dev", False))
        self.assertEqual(caught.exception.value, types.ProviderError_Unimplemented("call"))

    def test_construct_gets_the_request_and_returns_the_component(self):
        seen = []

        class Building(sdk.Provider):
            def construct(self, request):
                seen.append(request)
                state = {"size": request.inputs["size"], "ref": request.providers["pkg"]}
                return sdk.ConstructResult(COMPONENT, state, {"size": ["urn:a"]})

        p = exported(provider=Building([]))
        ref = "urn:pulumi:dev::proj::pulumi:providers:pkg::default::id"
        result = p.construct(construct_request(types, values, {"size": sdk.Secret(2.0)}, [("pkg", ref)]))
        self.assertEqual(
            seen,
            [sdk.ConstructRequest("proj", "dev", "pkg:index:Group", "group", None, {"size": sdk.Secret(2.0)},
                                  {"size": ["urn:a", "urn:b"]}, ["urn:c"], True, {"pkg": ref}, False)],
        )
        self.assertEqual(result.urn, COMPONENT)
        self.assertEqual(values.decode(result.state), {"size": sdk.Secret(2.0), "ref": ref})
        self.assertEqual(result.state_dependencies, [types.PropertyDependencies("size", ["urn:a"])])

    def test_without_an_engine_a_construct_fails_naming_what_it_registered(self):
        from cairn_sdk import engine

        class Building(sdk.Provider):
            def construct(self, request):
                component = engine.register_resource(engine.RegisterResource(request.resource_type, request.name))
                return sdk.ConstructResult(component.urn)

        with self.assertRaises(Err) as caught:
            exported(provider=Building([])).construct(construct_request(types, values, {}))
        error = caught.exception.value
        self.assertIsInstance(error, types.ProviderError_Failed)
        self.assertEqual(
            error.value.message,
            'registering pkg:index:Group "group": the engine is only reachable from inside a component',
        )
        with self.assertRaises(engine.EngineError) as caught:
            engine.register_resource_outputs(COMPONENT, {"a": 1.0})
        self.assertEqual(caught.exception.operation, f"registering the outputs of {COMPONENT}")

    def test_the_engines_answers_are_checked(self):
        from cairn_sdk import engine
        from wit_world.imports import engine as wit

        op = 'registering pkg:index:Thing "left"'
        child = "urn:pulumi:dev::proj::pkg:index:Group$pkg:index:Thing::left"
        good = engine._registered(op, wit.RegisterResourceResponse(child, "id-1", values.encode({"label": "p-left"})))
        self.assertEqual(good, engine.Registered(child, "id-1", {"label": "p-left"}))
        empty = engine._registered(op, wit.RegisterResourceResponse(child, None, types.Value([], b"", [])))
        self.assertEqual(empty.outputs, {})
        malformed = values.encode({"label": "x"})
        malformed.nodes[1] = 7  # the object's first member lies past the table
        for urn, outputs, reason in [
            ("left", values.encode({}), "the engine answered with 'left', which is not a URN"),
            (child, malformed, "the engine sent malformed outputs: "),
            (child, values.encode("text"), "the engine sent outputs that are not an object (str)"),
        ]:
            with self.subTest(reason=reason), self.assertRaises(engine.EngineError) as caught:
                engine._registered(op, wit.RegisterResourceResponse(urn, None, outputs))
            self.assertEqual(caught.exception.operation, op)
            self.assertTrue(caught.exception.reason.startswith(reason), caught.exception.reason)

    def test_call_gets_self_and_its_arguments(self):
        class Methods(sdk.Provider):
            def call(self, request):
                if request.token != "pkg:index:Group/describe":
                    return super().call(request)
                me = request.args["__self__"]
                if not request.args.get("greeting"):
                    return sdk.CallResult(failures=[sdk.CheckFailure("greeting", "greeting is required")])
                text = f"{request.args['greeting']} from {me.urn.rsplit('::', 1)[-1]} in {request.project}/{request.stack}"
                return sdk.CallResult({"description": text}, {"description": request.arg_dependencies["__self__"]})

        p = exported(provider=Methods([]))
        args = values.encode({"__self__": sdk.ResourceReference(COMPONENT), "greeting": "hi"})
        deps = [types.PropertyDependencies("__self__", [COMPONENT])]
        result = p.call(types.CallRequest("pkg:index:Group/describe", args, deps, "proj", "dev", True))
        self.assertEqual(values.decode(result.outputs), {"description": "hi from group in proj/dev"})
        self.assertEqual(
            (result.output_dependencies, result.failures),
            ([types.PropertyDependencies("description", [COMPONENT])], []),
        )
        failed = p.call(types.CallRequest("pkg:index:Group/describe", values.encode({"__self__": sdk.ResourceReference(COMPONENT)}), [], "proj", "dev", False))
        self.assertEqual(failed.failures, [types.CheckFailure("greeting", "greeting is required")])
        with self.assertRaises(Err) as caught:
            p.call(types.CallRequest("pkg:index:Group/other", values.encode({}), [], "proj", "dev", False))
        self.assertEqual(caught.exception.value, types.ProviderError_Unimplemented("call"))

    def test_a_wrong_result_is_a_failure(self):
        class Wrong(sdk.Provider):
            def call(self, request):
                return {"description": "a dict, not a CallResult"}

        with self.assertRaises(Err) as caught:
            exported(provider=Wrong([])).call(types.CallRequest("pkg:index:Group/m", values.encode({}), [], "proj", "dev", False))
        self.assertEqual(caught.exception.value.value.message, "TypeError: call returned dict, not CallResult")


if __name__ == "__main__":
    unittest.main()
