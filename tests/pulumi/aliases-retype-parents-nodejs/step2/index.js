// Scenario 6: nested parents both change type (aliases to 100 and 10 old types). Nothing changes.
const pulumi = require("@pulumi/pulumi");

class Resource extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:Resource", name, {}, opts);
    }
}

class ComponentSix extends pulumi.ComponentResource {
    constructor(name, opts) {
        const aliases = [...Array(100).keys()].map((v) => ({ type: `my:module:ComponentSix-v${v}` }));
        aliases.push(...((opts && opts.aliases) || []));
        super("my:module:ComponentSix-v100", name, {}, { ...opts, aliases });
        new Resource("otherchild", { parent: this });
    }
}

class ComponentSixParent extends pulumi.ComponentResource {
    constructor(name, opts) {
        const aliases = [...Array(10).keys()].map((v) => ({ type: `my:module:ComponentSixParent-v${v}` }));
        aliases.push(...((opts && opts.aliases) || []));
        super("my:module:ComponentSixParent-v10", name, {}, { ...opts, aliases });
        new ComponentSix("child", { parent: this });
    }
}

new ComponentSixParent("comp6");
