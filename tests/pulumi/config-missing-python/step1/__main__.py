"""A required secret that is not set."""

import pulumi

pulumi.Config("config_missing_py").require_secret("notFound")
