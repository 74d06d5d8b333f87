"""The random package's RandomInteger, RandomString and RandomUuid, as a sandboxed provider
written in Python (Cairn's Python SDK). Every input forces a replacement, as in the random
provider: a value is generated once, when its resource is created.

Beyond the random package, `random:index:Credentials` shows a component resource built by the
provider (`construct`: two RandomStrings registered through the engine under the component)
and a method on it (`call`: `random:index:Credentials/describe`)."""

import random as _random
import secrets
import string
import uuid

import cairn_sdk
from _cairn_manifest import MANIFEST
from cairn_sdk import CallResult, CheckFailure, ConstructResult, ProviderError, Secret, engine

SPECIAL = "!@#$%&*()-_=+[]{}<>:?"


def plain(x):
    return cairn_sdk.unsecret(x)


class RandomInteger(cairn_sdk.Resource):
    token = "random:index/randomInteger:RandomInteger"
    replace_on = ("*",)

    def check(self, olds, news):
        failures = []
        for key in ("min", "max"):
            if not isinstance(plain(news.get(key)), (int, float)) and news.get(key) is not cairn_sdk.UNKNOWN:
                failures.append(CheckFailure(key, f"{key} is required and must be a number"))
        lo, hi = plain(news.get("min")), plain(news.get("max"))
        if not failures and isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and hi < lo:
            failures.append(CheckFailure("max", "max must be at least min"))
        return news, failures

    def create(self, inputs, preview):
        lo, hi = int(plain(inputs["min"])), int(plain(inputs["max"]))
        if preview:
            return "", {**inputs, "result": cairn_sdk.UNKNOWN}
        seed = plain(inputs.get("seed"))
        rng = _random.Random(seed) if seed is not None else secrets.SystemRandom()
        result = rng.randint(lo, hi)
        return str(result), {**inputs, "result": result}


class RandomUuid(cairn_sdk.Resource):
    token = "random:index/randomUuid:RandomUuid"
    replace_on = ("*",)

    def create(self, inputs, preview):
        if preview:
            return "", {**inputs, "result": cairn_sdk.UNKNOWN}
        result = str(uuid.uuid4())
        return result, {**inputs, "result": result}


class RandomString(cairn_sdk.Resource):
    token = "random:index/randomString:RandomString"
    replace_on = ("*",)
    defaults = {
        "upper": True, "lower": True, "numeric": True, "special": True,
        "minUpper": 0, "minLower": 0, "minNumeric": 0, "minSpecial": 0,
    }

    def check(self, olds, news):
        length = plain(news.get("length"))
        if length is cairn_sdk.UNKNOWN:
            return news, []
        if not isinstance(length, (int, float)) or length < 1:
            return news, [CheckFailure("length", "length is required and must be at least 1")]
        filled = dict(news)
        for key, value in self.defaults.items():
            filled.setdefault(key, value)
        filled.pop("number", None)
        minimum = sum(int(plain(filled[k])) for k in ("minUpper", "minLower", "minNumeric", "minSpecial"))
        if minimum > length:
            return filled, [CheckFailure("length", f"length ({int(length)}) is less than the sum of the minimums ({minimum})")]
        return filled, []

    def create(self, inputs, preview):
        if preview:
            return "", {**inputs, "result": cairn_sdk.UNKNOWN}
        o = {k: plain(v) for k, v in inputs.items()}
        sets = [
            ("upper", "minUpper", string.ascii_uppercase),
            ("lower", "minLower", string.ascii_lowercase),
            ("numeric", "minNumeric", string.digits),
            ("special", "minSpecial", o.get("overrideSpecial") or SPECIAL),
        ]
        rng = secrets.SystemRandom()
        chars, pool = [], ""
        for enabled, minimum, alphabet in sets:
            if o.get(enabled, True):
                pool += alphabet
                chars += [rng.choice(alphabet) for _ in range(int(o.get(minimum) or 0))]
        if not pool:
            raise ProviderError("the character set is empty: enable upper, lower, numeric or special")
        chars += [rng.choice(pool) for _ in range(int(o["length"]) - len(chars))]
        rng.shuffle(chars)
        result = "".join(chars)
        return result, {**inputs, "result": result}


CREDENTIALS = "random:index:Credentials"
DESCRIBE = "random:index:Credentials/describe"


class RandomProvider(cairn_sdk.Provider):
    def construct(self, request):
        """Credentials: a RandomString `<name>-username` (8 lower-case letters and digits) and a
        RandomString `<name>-password` (`length`, default 16) under the component, whose
        results are its outputs `username` and `password` (secret)."""
        if request.resource_type != CREDENTIALS:
            return super().construct(request)
        length = request.inputs.get("length", 16)
        if not isinstance(plain(length), (int, float)) and length is not cairn_sdk.UNKNOWN:
            raise ProviderError(f"length must be a number, not {type(plain(length)).__name__}")
        # The component itself first, as the program declared it; then its children, with
        # the provider the program chose for the package (a default one when it chose none).
        component = engine.register_resource(engine.RegisterResource(
            request.resource_type, request.name, parent=request.parent,
            dependencies=request.dependencies, protect=request.protect,
        ))

        def child(suffix, inputs):
            return engine.register_resource(engine.RegisterResource(
                RandomString.token, f"{request.name}-{suffix}", custom=True, parent=component.urn,
                inputs=inputs, provider=request.providers.get("random"),
            ))

        username = child("username", {"length": 8, "upper": False, "special": False})
        password = child("password", {"length": length})
        # In a preview the children's results are not known yet.
        outputs = {
            "username": username.outputs.get("result", cairn_sdk.UNKNOWN),
            "password": Secret(password.outputs.get("result", cairn_sdk.UNKNOWN)),
        }
        engine.register_resource_outputs(component.urn, outputs)
        return ConstructResult(component.urn, outputs)

    def call(self, request):
        """Credentials/describe(purpose): one line naming the component, its purpose and the
        stack (a method reads its component through `__self__`, a resource reference)."""
        if request.token != DESCRIBE:
            return super().call(request)
        me = request.args.get("__self__")
        purpose = plain(request.args.get("purpose"))
        if not isinstance(me, cairn_sdk.ResourceReference):
            return CallResult(failures=[CheckFailure("__self__", "describe is a method of Credentials")])
        if not isinstance(purpose, str):
            return CallResult(failures=[CheckFailure("purpose", "purpose must be a string")])
        name = me.urn.rsplit("::", 1)[-1]
        return CallResult({"description": f"{name}: credentials for {purpose} in {request.project}/{request.stack}"})


Provider = cairn_sdk.export(
    RandomProvider([RandomInteger(), RandomUuid(), RandomString()]),
    MANIFEST,
)
