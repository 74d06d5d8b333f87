"""The provider side (`cairn_sdk.provider`): the exported class the component runs, called
natively with WIT requests — defaults that need no decoding, diffs (ignored keys, detailed
entries, unknown changes), failures as the WIT's errors (never other exceptions), partial
state, a resource that is gone."""

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


if __name__ == "__main__":
    unittest.main()
