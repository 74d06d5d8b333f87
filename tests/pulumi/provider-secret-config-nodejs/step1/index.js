// An explicit provider with a secret configuration value (pulumi#2741).
const pulumi = require("@pulumi/pulumi");

class DynamicProvider extends pulumi.ProviderResource {
    constructor(name, opts) {
        super("pulumi-nodejs", name, { secretProperty: pulumi.secret("it's a secret to everybody") }, opts);
    }
}

new DynamicProvider("p");
