// Components, some protected, some children of protected ones; the protected ones and what
// they depend on (parents, the stack) are left by `destroy --exclude-protected`.
const pulumi = require("@pulumi/pulumi");

class Resource extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:Resource", name, {}, opts);
    }
}

const first = new Resource("my-bucket", { protect: true });
new Resource("my-bucket-child", { protect: false, parent: first });
new Resource("my-bucket-child-protected", { protect: true, parent: first });

const second = new Resource("my-2bucket", { protect: false });
new Resource("my-2bucket-child", { protect: false, parent: second });
new Resource("my-2bucket-protected-child", { protect: true, parent: second });

const provided = new Resource("provided-bucket", { protect: true });
// Inherits `protect` from its parent.
new Resource("provided-bucket-child", { parent: provided });
new Resource("provided-bucket-child-unprotected", { parent: provided, protect: false });
