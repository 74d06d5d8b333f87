"""The provider, in a module of its own."""

from pulumi.dynamic import ConfigureRequest, CreateResult, ResourceProvider


class SimpleProvider(ResourceProvider):
    password: str
    color: str

    def configure(self, req: ConfigureRequest):
        self.password = req.config.get("password")
        self.color = req.config.get("colors:banana")

    def create(self, props):
        return CreateResult("0", {"authenticated": "200" if self.password == "s3cret" else "401", "color": self.color})
