"""A secret config number, exported as is and computed on: both outputs are secret."""

import pulumi

a_number = pulumi.Config().require_secret_float("aNumber")
pulumi.export("roundtrip", a_number)
pulumi.export("theSecretNumber", a_number.apply(lambda n: n + 1.25))
